// The two views of a dataset command's progress: a redrawn line on a terminal, a line every tenth
// of a stage in a log; and the splits table of the manifest it wrote.
#include "app/gllm/dataset_progress.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>

namespace gllm::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_dataset_sigint(int) {
  g_stop.store(true);
}

}  // namespace

PrepareResult run_dataset_work(bool quiet, bool quiet_progress,
                               const std::function<PrepareResult(const PrepareHooks&)>& work,
                               double* seconds) {
  DatasetProgressLine line(!quiet && !quiet_progress);
  PrepareHooks hooks;
  hooks.log = [&](const std::string& s) {
    if (quiet) return;
    line.clear();
    std::fprintf(stderr, "%s\n", s.c_str());
  };
  hooks.progress = [&](const PrepareProgress& p) { line.update(p); };
  g_stop = false;
  hooks.stop = &g_stop;
  auto previous = std::signal(SIGINT, on_dataset_sigint);
  const auto t0 = std::chrono::steady_clock::now();
  PrepareResult r;
  try {
    r = work(hooks);
  } catch (...) {
    std::signal(SIGINT, previous);
    line.clear();
    throw;
  }
  std::signal(SIGINT, previous);
  line.clear();
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void print_dataset_splits(const nlohmann::json& m) {
  std::printf("%-8s %12s %14s %16s %10s %7s\n", "split", "documents", "tokens", "bytes",
              "bytes/tok", "shards");
  for (const char* s : {"train", "val", "heldout"}) {
    if (!m["splits"].contains(s)) continue;
    const auto& sp = m["splits"][s];
    std::printf("%-8s %12llu %14llu %16llu %10.3f %7zu\n", s,
                (unsigned long long)sp.value("documents", uint64_t(0)),
                (unsigned long long)sp.value("tokens", uint64_t(0)),
                (unsigned long long)sp.value("bytes", uint64_t(0)),
                sp.value("bytes_per_token", 0.0),
                sp.value("shards", nlohmann::json::array()).size());
  }
}

DatasetProgressLine::DatasetProgressLine(bool on) : on_(on), tty_(::isatty(STDERR_FILENO)) {}

void DatasetProgressLine::update(const PrepareProgress& p) {
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!tty_) {
    log_line(p, now);
    return;
  }
  if (p.stage == last_stage_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  last_stage_ = p.stage;
  if (p.total > 0)
    std::fprintf(stderr, "\r%-10s %5.1f%%  (%llu / %llu)   ", p.stage.c_str(),
                 100.0 * double(p.done) / double(p.total), (unsigned long long)p.done,
                 (unsigned long long)p.total);
  else
    std::fprintf(stderr, "\r%-10s …                           ", p.stage.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void DatasetProgressLine::clear() {
  if (drawn_) std::fprintf(stderr, "\r%60s\r", "");
  drawn_ = false;
}

void DatasetProgressLine::log_line(const PrepareProgress& p,
                                   std::chrono::steady_clock::time_point now) {
  const int tenth = p.total > 0 ? int(10 * std::min(p.done, p.total) / p.total) : -1;
  const bool new_stage = p.stage != last_stage_;
  if (!new_stage && tenth == last_tenth_ && now - last_ < std::chrono::seconds(30)) return;
  last_ = now;
  last_stage_ = p.stage;
  last_tenth_ = tenth;
  const char* unit = p.stage == "scan"                           ? "bytes"
                     : p.stage == "check" || p.stage == "import" ? "shards"
                                                                 : "documents";
  if (p.total > 0)
    std::fprintf(stderr, "progress: %s %.0f%% (%llu of %llu %s)\n", p.stage.c_str(),
                 100.0 * double(std::min(p.done, p.total)) / double(p.total),
                 (unsigned long long)p.done, (unsigned long long)p.total, unit);
  else
    std::fprintf(stderr, "progress: %s (%llu %s)\n", p.stage.c_str(), (unsigned long long)p.done,
                 unit);
  std::fflush(stderr);
}

}  // namespace gllm::cli
