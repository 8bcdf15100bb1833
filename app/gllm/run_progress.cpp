// Progress bar observer and the signal → cancel bridge for `gllm train` / `gllm resume`: Ctrl-C and
// SIGTERM stop at the next step with a checkpoint, as does SLURM's warning signal (USR1/USR2).
#include "app/gllm/run_progress.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include "engine/io/error.h"
#include "engine/train/progress_text.h"

namespace gllm::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_stop_signal{0};  // SIGTERM, SIGUSR1 or SIGUSR2 once received
extern "C" void on_sigint(int) {
  g_interrupted = true;
}
extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

class ProgressPrinter : public RunObserver {
 public:
  explicit ProgressPrinter(bool quiet) : quiet_(quiet), progress_(stream_is_terminal(2)) {}
  void on_start(const std::string& dir, int64_t start, int64_t total) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!quiet_)
      std::fprintf(stderr, "run %s: steps %lld → %lld\n", dir.c_str(), (long long)start,
                   (long long)total);
  }
  void on_log(const std::string& line) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!quiet_) std::fprintf(stderr, "%s%s\n", newline_first(), line.c_str());
    progress_.lineEnded();
  }
  void on_step(const StepRecord& r) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (quiet_) return;
    const std::string text = progress_.step(r);
    if (text.empty()) return;
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
  void on_eval(const EvalRecord& e) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!quiet_)
      std::fprintf(stderr, "%sstep %lld  %s BPB %.4f  (%lld tokens)\n", newline_first(),
                   (long long)e.step, e.split.c_str(), e.bpb, (long long)e.eval_tokens);
    progress_.lineEnded();
  }
  void on_checkpoint(const CheckpointRecord& c) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (!quiet_) std::fprintf(stderr, "%scheckpoint %s\n", newline_first(), c.path.c_str());
    progress_.lineEnded();
  }
  void on_finished(const FinishedRecord& f) override {
    std::lock_guard<std::mutex> lk(mu_);
    finished_ = f;
    done_ = true;
    if (progress_.barShown()) std::fprintf(stderr, "\n");
    progress_.lineEnded();
  }
  void on_error(const std::string& msg) override {
    std::lock_guard<std::mutex> lk(mu_);
    error_ = msg;
    failed_ = true;
    if (progress_.barShown()) std::fprintf(stderr, "\n");
    progress_.lineEnded();
  }
  bool done() {
    std::lock_guard<std::mutex> lk(mu_);
    return done_ || failed_;
  }
  FinishedRecord result() {
    std::lock_guard<std::mutex> lk(mu_);
    if (failed_) throw Error("the run failed: " + error_);
    if (!done_) throw Error("the run ended without reporting a result");
    return finished_;
  }

 private:
  std::mutex mu_;
  bool quiet_;
  ProgressText progress_;  // a bar on a terminal, a line every 5 % in a log
  const char* newline_first() const { return progress_.barShown() ? "\n" : ""; }
  bool done_ = false, failed_ = false;
  FinishedRecord finished_;
  std::string error_;
};

}  // namespace

FinishedRecord drive_run(Trainer& trainer, bool quiet,
                         const std::function<void(RunObserver*)>& launch, int* stop_signal) {
  ProgressPrinter printer(quiet);
  g_interrupted = false;
  g_stop_signal = 0;
  if (stop_signal) *stop_signal = 0;
  auto previous = std::signal(SIGINT, on_sigint);
  auto previous_term = std::signal(SIGTERM, on_stop_signal);
  auto previous_usr1 = std::signal(SIGUSR1, on_stop_signal);
  auto previous_usr2 = std::signal(SIGUSR2, on_stop_signal);
  auto restore = [&] {
    std::signal(SIGINT, previous);
    std::signal(SIGTERM, previous_term);
    std::signal(SIGUSR1, previous_usr1);
    std::signal(SIGUSR2, previous_usr2);
  };
  try {
    launch(&printer);
  } catch (...) {
    restore();
    throw;
  }
  bool cancel_sent = false;
  while (trainer.running()) {
    if (g_interrupted && !cancel_sent) {
      std::fprintf(
          stderr,
          "\ninterrupted: finishing this step and writing a checkpoint (Ctrl-C again to abort)\n");
      trainer.cancel();
      cancel_sent = true;
      g_interrupted = false;
      std::signal(SIGINT, SIG_DFL);
    }
    if (const int sig = g_stop_signal.load(); sig != 0 && !cancel_sent) {
      std::fprintf(stderr, "\n%s: finishing this step and writing a checkpoint, then stopping\n",
                   sig == SIGTERM ? "terminated (SIGTERM)"
                                  : "the scheduler's warning signal arrived (the time limit or a "
                                    "preemption is near)");
      trainer.cancel();
      cancel_sent = true;
      if (stop_signal) *stop_signal = sig;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  trainer.wait();
  restore();
  return printer.result();
}

}  // namespace gllm::cli
