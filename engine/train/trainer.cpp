// The Trainer facade: one worker thread per run segment, launched by start / resume after the
// run folder's lock, the resume checks and the segment's restore plan are in place.
#include "engine/train/trainer.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/config/run_paths.h"
#include "engine/dist/launcher.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/train/resume_checks.h"
#include "engine/train/run_segment.h"
#include "engine/train/run_store.h"

namespace gllm {

struct Trainer::Impl {
  std::thread worker;
  std::atomic<bool> cancel{false};
  std::atomic<bool> running{false};
  std::string dir;
  mutable std::mutex mu;

  void launch(std::unique_ptr<RunSegment> s, bool resuming) {
    if (worker.joinable()) worker.join();
    cancel = false;
    running = true;
    s->cancel = &cancel;
    {
      std::lock_guard<std::mutex> lk(mu);
      dir = s->store.dir();
    }
    worker = std::thread([this, s = std::move(s), resuming]() mutable {
      try {
        s->run(resuming);
      } catch (const std::exception& e) {
        std::string msg = e.what();
        // c10::Error messages carry a backtrace after the first line; keep the first line.
        if (auto nl = msg.find('\n');
            nl != std::string::npos && dynamic_cast<const Error*>(&e) == nullptr)
          msg = msg.substr(0, nl);
        if (s->dist) s->dist->abort("rank " + std::to_string(s->dist->rank()) + " failed: " + msg);
        try {
          const auto& seg = s->segment;
          if (dist::launched_child()) {
            // ranks other than 0 write nothing in the run folder
          } else if (seg.extends_completed) {
            restore_completed_run(s->store, seg);
            msg += " (the extension was discarded: " + s->store.dir() +
                   " is left as it was, completed at step " + std::to_string(seg.start_step) + ")";
          } else if (seg.restore_on_failure && s->step <= seg.start_step) {
            // Nothing was trained in this segment: the folder keeps the summary (and config) it
            // had, so a failed resume never turns a completed run into a failed one.
            if (!seg.prior_config.empty())
              write_file_atomic(s->store.config_path(), seg.prior_config);
            std::error_code ec;
            if (!seg.prior_summary.empty())
              write_file_atomic(s->store.summary_path(), seg.prior_summary);
            else
              std::filesystem::remove(s->store.summary_path(), ec);
          } else {
            s->store.write_summary({{"status", "failed"},
                                    {"message", msg},
                                    {"name", s->config.name},
                                    {"step", s->step}});
          }
        } catch (...) {
        }
        if (s->obs) s->obs->on_error(msg);
      }
      s.reset();  // closes the run folder's lock before running() turns false
      running = false;
    });
  }
};

Trainer::Trainer() : impl_(std::make_unique<Impl>()) {}

Trainer::~Trainer() {
  cancel();
  wait();
}

void Trainer::start(const RunConfig& config, const std::string& run_dir, RunObserver* observer,
                    const TrainerOptions& options) {
  if (running())
    throw Error("this trainer is already running a run; cancel it or use another Trainer");
  RunConfig c = RunConfig::from_json(config.to_json());  // validates
  if (options.steps_override > 0) c.train.steps = options.steps_override;
  check_memory(c);
  auto s = std::make_unique<RunSegment>(run_dir);
  s->config = c;
  s->obs = observer;
  s->options = options;
  if (!options.fork_from.empty())
    s->fork = std::make_unique<ForkPoint>(resolve_fork(options.fork_from, c));
  if (!dist::launched_child()) {  // rank 0 alone writes (and owns) the run folder
    make_directories(run_dir);
    RunOwner previous;
    s->segment.lock = RunLock::acquire(run_dir, "train", &previous);
    s->store.create(portable_config(c.to_json()));
    if (s->fork)
      write_file_atomic(join_path(run_dir, "parent.json"),
                        portable_fork_record(s->fork->record, run_dir).dump(2) + "\n");
  }
  impl_->launch(std::move(s), false);
}

void Trainer::resume(const std::string& run_dir, RunObserver* observer,
                     const TrainerOptions& options) {
  if (running())
    throw Error("this trainer is already running a run; cancel it or use another Trainer");
  RunStore store(run_dir);
  if (!file_exists(store.config_path()))
    throw Error(run_dir +
                " is not a run folder (no config.json); give the folder `gllm train` wrote");
  SegmentStart seg;
  // Rank 0 alone owns and writes the run folder; the other ranks of a data-parallel resume (srun
  // --ntasks N gllm resume) read the same checkpoint and write nothing.
  const bool writer = !dist::launched_child();
  if (writer) {
    RunOwner previous;
    seg.lock = RunLock::acquire(run_dir, "resume", &previous);
    if (previous.pid > 0)
      seg.notes.push_back("took over the run folder from " + previous.describe() +
                          ", which is no longer running");
  }
  // A lost store (a link to an unmounted disk, a file copied over it) is never taken for an
  // empty one: that would restart the run from step 0 over whatever it held.
  check_checkpoint_store(run_dir);
  if (writer) {
    const auto removed = store.remove_temporaries();
    if (removed.files > 0)
      seg.notes.push_back("removed " + std::to_string(removed.files) + " temporary file(s) (" +
                          std::to_string(removed.bytes >> 20) +
                          " MiB) left by an interrupted write");
  }
  const JsonLimits limits{4ull << 20, 16};
  const std::string config_text = read_file_limited(
      store.config_path(), limits.max_bytes, "the run folder is damaged; restore config.json");
  RunConfig c;
  try {
    c = RunConfig::from_json(
        parse_json(config_text, store.config_path(), "restore config.json", limits));
  } catch (const ConfigError& e) {
    throw Error(store.config_path() + ": " + e.what() +
                " (the run folder's config is damaged or was edited)");
  }
  resolve_run_files(c, run_dir);  // ladders, profiles and corpora from wherever the run now lies
  std::string summary_text;
  nlohmann::json summary;
  if (file_exists(store.summary_path())) {
    summary_text = read_file_limited(store.summary_path(), 16ull << 20, "");
    try {
      summary = parse_json(summary_text, store.summary_path(), "");
    } catch (const Error& e) {
      seg.notes.push_back(std::string(e.what()) + "; the summary will be rewritten");
    }
  }
  const std::string status = json_string_or(summary, "status", "");

  // A run killed before its first checkpoint starts again from step 0 in its own folder. Weights
  // without a sidecar were never committed and do not count; a sidecar that does not parse does
  // (it is damage to look at, not something to delete).
  std::vector<std::string> problems;
  const auto ckpts = list_checkpoints(run_dir, &problems);
  const bool any_checkpoint = !ckpts.empty() || !problems.empty();
  const bool extend = options.steps_override > 0 && options.steps_override != c.train.steps;
  if (!any_checkpoint) {
    if (status == "completed")
      throw Error(run_dir +
                  " says it is completed but holds no checkpoint; start a new run with gllm train");
    const std::string evidence = checkpoint_evidence(store, c, status);
    if (!evidence.empty())
      throw Error(
          run_dir + " has no committed checkpoint (no checkpoints/step_*.json sidecar), yet " +
          evidence +
          ": its checkpoints were written and their sidecars are lost. Nothing was "
          "changed. Restore the sidecars from a copy; or, to discard the run's progress and "
          "train it again from step 0, remove " +
          store.metrics_path() + " and the files in " + store.checkpoints_dir() + ", then resume");
    if (extend) {
      c.train.steps = options.steps_override;
      if (writer)
        write_file_atomic(store.config_path(), portable_config(c.to_json()).dump(2) + "\n");
    }
    check_memory(c);
    // A folder made for a run that never started (a submitted cluster task) holds no metrics yet.
    std::error_code size_ec;
    const bool ever_started = file_exists(store.metrics_path()) &&
                              std::filesystem::file_size(store.metrics_path(), size_ec) > 0;
    if (writer) store.reset_for_restart();
    seg.notes.push_back(ever_started ? "no checkpoint was written before the run stopped: "
                                       "starting it again from step 0 in " +
                                           run_dir
                                     : "no step trained yet: starting the run in " + run_dir);
    auto s = std::make_unique<RunSegment>(run_dir);
    s->config = c;
    s->obs = observer;
    s->options = options;
    s->segment = std::move(seg);
    // A forked run that stopped before its first checkpoint starts again from its fork point.
    const nlohmann::json parent = read_parent_record(run_dir);
    if (parent.is_object() && parent.contains("checkpoint") && parent["checkpoint"].is_string()) {
      std::string ck = parent["checkpoint"].get<std::string>();  // relative to the run folder
      if (!std::filesystem::path(ck).is_absolute()) ck = join_path(run_dir, ck);
      s->fork = std::make_unique<ForkPoint>(resolve_fork(ck, c));
    }
    impl_->launch(std::move(s), false);
    return;
  }
  const CheckpointInfo ck = last_valid_checkpoint(run_dir);  // fails early, naming the problem
  check_resume_state(ck);
  const int64_t target = extend ? options.steps_override : c.train.steps;
  if (status == "completed" && json_int_or(summary, "step", ck.step) >= target)
    throw Error(run_dir + " is completed (step " +
                std::to_string(json_int_or(summary, "step", ck.step)) + " of " +
                std::to_string(c.train.steps) +
                "); nothing to resume. To train it further, give "
                "--steps N with N above " +
                std::to_string(c.train.steps));
  if ((summary_text.empty() || !summary.is_object()) && ck.step >= target && !extend)
    seg.notes.push_back(
        store.summary_path() + (summary_text.empty() ? " is missing" : " is damaged") +
        ", and the last checkpoint is the run's final step " + std::to_string(ck.step) +
        ": the run is finished again from it (final evaluation and a new summary; no step is "
        "trained)");
  if (target < ck.step)
    throw Error("--steps " + std::to_string(target) + " is below the last checkpoint's step " +
                std::to_string(ck.step) + " in " + run_dir + "; give more steps than that");
  seg.config_changes = checkpoint_config_changes(ck, c, seg.notes);
  if (seg.config_changes.is_array() && !seg.config_changes.empty() && !options.allow_config_change)
    throw Error(
        store.config_path() + " was edited after checkpoint step " + std::to_string(ck.step) +
        ": " + list_changes(seg.config_changes) +
        ". These change the run's results; undo the edit, or resume with --allow-config-change "
        "to accept it (recorded in metrics.jsonl)");
  seg.restore_on_failure = writer;
  seg.start_step = ck.step;
  seg.prior_summary = summary_text;
  seg.extends_completed = status == "completed" && !summary_text.empty();
  if (extend) {
    // Extending a run changes its schedule from here on; record the new length.
    seg.prior_config = config_text;
    c.train.steps = options.steps_override;
    if (writer) write_file_atomic(store.config_path(), portable_config(c.to_json()).dump(2) + "\n");
  }
  check_memory(c);
  auto s = std::make_unique<RunSegment>(run_dir);
  s->config = c;
  s->obs = observer;
  s->options = options;
  s->segment = std::move(seg);
  impl_->launch(std::move(s), true);
}

void Trainer::cancel() {
  impl_->cancel = true;
}

void Trainer::wait() {
  if (impl_->worker.joinable()) impl_->worker.join();
}

bool Trainer::running() const {
  return impl_->running;
}

std::string Trainer::run_dir() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->dir;
}

std::string new_run_dir(const std::string& parent, const std::string& name) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::string base = join_path(parent, folder_name(name) + "-" + buf);
  std::string dir = base;
  for (int i = 2; std::filesystem::exists(dir); ++i) dir = base + "-" + std::to_string(i);
  return dir;
}

}  // namespace gllm
