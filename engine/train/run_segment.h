// One run segment (a start or a resume) as the trainer's worker runs it: set-up, the training loop,
// evaluation, checkpoints and the summary. Internal to engine/train (trainer.cpp launches it).
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/data/dataset.h"
#include "engine/dist/process_group.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/train/events.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "engine/train/step.h"
#include "engine/train/trainer.h"

namespace gllm {

// What Trainer::start / resume prepared before a segment's worker starts: the run folder's lock
// (held until the worker ends), the files to put back when the segment fails before training a
// step, lines for the log, and an accepted config change to record in metrics.jsonl.
struct SegmentStart {
  RunLock lock;
  int64_t start_step = 0;  // the step this segment starts from
  bool restore_on_failure = false;
  std::string prior_summary;  // summary.json as it was (empty: there was none)
  std::string prior_config;   // config.json as it was, when this segment rewrote it
  // Extending a completed run: a failure or divergence puts the run back exactly as it was
  // (summary, config, metrics, the final checkpoint); checkpoints of the extension are removed.
  bool extends_completed = false;
  int64_t metrics_bytes = -1;  // metrics.jsonl's size when the extension began
  std::vector<std::string> notes;
  nlohmann::json config_changes;  // null, or [{key, from, to}] accepted with allow_config_change
};

// Puts a completed run back as it was before an extension that failed or diverged: the
// extension's checkpoints removed, metrics.jsonl cut back, config.json and summary.json restored.
// Best effort on each part, so one failing write does not keep the others from being restored.
void restore_completed_run(const RunStore& store, const SegmentStart& seg);

// Everything one run segment (a start or a resume) holds.
struct RunSegment {
  using Clock = std::chrono::steady_clock;

  RunConfig config;
  RunStore store;
  RunObserver* obs = nullptr;
  TrainerOptions options;
  const std::atomic<bool>* cancel = nullptr;
  SegmentStart segment;
  std::unique_ptr<ForkPoint> fork;  // set when this run starts from another run's checkpoint

  torch::Device device = torch::kCPU;
  bool cuda = false;
  std::unique_ptr<Dataset> data;
  GPT model{nullptr};
  std::unique_ptr<optim::MuonAdamW> opt;
  std::unique_ptr<TrainStep> step_fn;  // forward/backward/update, autocast scoped to the forwards
  std::unique_ptr<PackingLoader> train_loader;
  // Data parallel (engine/dist): one context per process; single-process when not launched.
  std::unique_ptr<dist::Context> dist;
  dist::BatchPlan plan;
  std::vector<torch::Tensor> grad_params;
  dist::VisitCounts visits;
  CostEstimate cost;
  double resident_start_mib = 0;  // measured in setup(), before the model is built
  double estimate_mem_mib() const { return resident_start_mib + cost.total_mib; }
  double unigram = NAN;

  int64_t step = 0;            // optimizer steps done
  int64_t tokens = 0;          // training tokens consumed
  double wall_offset = 0;      // wall seconds of earlier segments
  double train_seconds = 0;    // time inside training steps (this segment)
  double loader_seconds = 0;   // of it, in the train loader: next batch and its input tensors
  int64_t segment_tokens = 0;  // tokens trained in this segment
  // The throughput timer: the time between the step's host reads of its losses (each waits for
  // the device, so an interval is one step's device work, update included), from the
  // kWarmupSteps-th step of the segment on (the first steps carry allocations, kernel selection
  // and the optimizer's state). Evaluations and checkpoints (which drain the device) restart it.
  static constexpr int64_t kWarmupSteps = 2;
  int64_t segment_steps = 0;
  bool timer_armed = false;
  Clock::time_point last_sync;
  double timed_seconds = 0;
  int64_t timed_tokens = 0;
  Clock::time_point t0;
  double last_loss = NAN;
  double last_val_bpb = -1;
  double heldout_bpb = -1;
  int64_t last_eval_step = -1;

  explicit RunSegment(std::string dir) : store(std::move(dir)) {}

  bool writer() const { return !dist || dist->is_writer(); }  // only rank 0 writes the run folder
  double wall() const {
    return wall_offset + std::chrono::duration<double>(Clock::now() - t0).count();
  }
  // Steady-state tokens/s (the synchronised timer past warm-up); the mean over every step of the
  // segment while too few steps were timed.
  double tokens_per_s() const {
    if (timed_seconds > 0) return timed_tokens / timed_seconds;
    return train_seconds > 0 ? segment_tokens / train_seconds : 0.0;
  }
  void restart_timer() {
    last_sync = Clock::now();
    timer_armed = segment_steps >= kWarmupSteps;
  }
  void log(const std::string& line) {
    if (obs) obs->on_log(line);
  }

  // Threads, device, data-parallel context, dataset, model, optimizer, step and loader.
  void setup();
  // The weights, optimizer state, loader position and RNG of step `step`, committed by the sidecar.
  void save_checkpoint();
  // `own`: tensors kept from this run's model instead of the checkpoint (a fork's grades).
  void load_checkpoint(const CheckpointInfo& ck, const std::set<std::string>& own = {});
  // BPB and loss over up to `max_tokens` of a split ("val" or "heldout").
  EvalRecord evaluate(const std::string& split, int64_t max_tokens);
  // One optimizer step; false when the loss is not finite.
  bool train_step(int64_t inject_nan);
  // The final record (and, with `write`, summary.json) of a segment that ends with `status`.
  FinishedRecord finish(const std::string& status, const std::string& message, bool write = true);
  // The segment from setup to its last checkpoint; `resuming` loads the newest checkpoint first.
  void run(bool resuming);
};

}  // namespace gllm
