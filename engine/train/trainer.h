// Trainer: a torch-free pimpl facade that runs one training job on its own worker thread,
// reporting through RunObserver and stopping within one step of cancel(). Used by GUI and CLI.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "engine/config/run_config.h"
#include "engine/train/events.h"

namespace gllm {

// Options that are not part of the run's configuration.
struct TrainerOptions {
  int64_t steps_override = 0;  // > 0: replaces train.steps (also on resume, to extend a run)
  // Test hook: replace the loss of this step (1-based) by NaN to exercise the divergence guard.
  // Also read from the environment variable GLLM_TEST_INJECT_NAN_STEP when 0 here.
  int64_t inject_nan_step = 0;
  // Resume even though config.json was edited in a way that changes results since the last
  // checkpoint (the change is recorded in metrics.jsonl); without it such a resume is refused.
  bool allow_config_change = false;
  // Start a new run from another run's checkpoint (engine/train/fork.h: a run folder, RUN@STEP or
  // a checkpoint file): its weights, optimizer state, RNG and data position, with this run's own
  // grade tensors; recorded in the new run's parent.json. Empty: start from initialisation.
  std::string fork_from;
};

class Trainer {
 public:
  Trainer();
  ~Trainer();  // cancels a running job and joins its thread
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Starts a new run in `run_dir` (created; must not already hold a run) on a worker thread.
  // The config is validated and written to run_dir/config.json before this returns; errors
  // in that part throw gllm::Error here, later ones reach observer->on_error.
  // `observer` may be null and must outlive the run.
  void start(const RunConfig& config, const std::string& run_dir, RunObserver* observer,
             const TrainerOptions& options = {});
  // Continues the run in `run_dir` from its last valid checkpoint (same data order, RNG and
  // optimizer state as an uninterrupted run). A run stopped before its first checkpoint starts
  // again from step 0 in place. Throws gllm::Error when there is nothing to resume (a completed
  // run without a larger steps_override), when another process owns the folder, or when
  // config.json was edited in a way that changes results (unless allow_config_change).
  // Start and resume hold the folder's lock (run.lock) until the worker ends.
  void resume(const std::string& run_dir, RunObserver* observer,
              const TrainerOptions& options = {});

  // Asks the worker to stop; it finishes the current step, writes a checkpoint and reports
  // on_finished with status "cancelled". Safe from any thread; returns immediately.
  void cancel();
  // Blocks until the worker thread has ended (no-op when none was started).
  void wait();
  bool running() const;
  std::string run_dir() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A unique folder name for a new run under `parent`: "<name>-YYYYmmdd-HHMMSS[-N]".
std::string new_run_dir(const std::string& parent, const std::string& name);

}  // namespace gllm
