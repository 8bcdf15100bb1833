// Records a running training job reports to its observers: small copyable structs, no tensors,
// so the GUI can pass them through queued Qt signals and the CLI can print them. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gllm {

// After every optimizer step.
struct StepRecord {
  int64_t step = 0;  // 1-based count of optimizer steps done
  int64_t total_steps = 0;
  int64_t tokens = 0;       // training tokens consumed so far
  double loss = 0;          // mean training loss of this step (nats/token)
  double lr_scale = 1;      // schedule multiplier of this step
  double tokens_per_s = 0;  // this run's throughput since start or resume
  double wall_s = 0;        // seconds since the run (or resume) started, plus earlier segments
  double peak_mem_mib = 0;  // measured peak: CUDA allocator on GPU, process peak RSS on CPU
  double flops = 0;         // analytic training FLOPs so far
  // The peak predicted for this run (FinishedRecord::estimate_mem_mib), drawn beside the measured.
  double estimate_mem_mib = 0;
};

// After a validation ("val") or held-out ("heldout") evaluation.
struct EvalRecord {
  int64_t step = 0;
  int64_t tokens = 0;
  std::string split;  // "val" | "heldout"
  double bpb = 0;     // bits per UTF-8 byte
  double loss = 0;    // mean nats per token over the evaluated tokens
  int64_t eval_tokens = 0;
  double wall_s = 0;
};

// A small tensor copied out of the model as plain floats (row-major), so observers such as the
// GUI's live heatmaps need not read the checkpoint file. Empty when the model has no such tensor.
struct PlainTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  bool empty() const { return values.empty(); }
};

struct CheckpointRecord {
  int64_t step = 0;
  std::string path;         // checkpoints/step_NNNNNN.safetensors
  PlainTensor attn_grades;  // (n_layer, H, Dh/2) graded-attention grades q
  PlainTensor q_tau;        // (n_layer, H, Dh/2) post-QK-norm query log-scale (exp gives the scale)
  PlainTensor level_grades;  // (d) MLGE level grades, one per column of P
};

// Once, when the worker thread ends for any reason other than an error.
struct FinishedRecord {
  std::string run_dir;
  std::string status;  // "completed" | "cancelled" | "diverged"
  int64_t step = 0;
  int64_t tokens = 0;
  double final_loss = 0;      // training loss of the last step
  double val_bpb = -1;        // last validation BPB (-1 when none)
  int64_t val_bpb_step = -1;  // the step it was measured at (a cancelled run stops after it)
  double heldout_bpb = -1;    // held-out BPB at the end (-1 when not evaluated)
  double tokens_per_s = 0;
  double peak_mem_mib = 0;
  // The estimate of peak_mem_mib: what the process held when the run started (libraries, data;
  // measured once, on CPU) plus the training tensors (weights, grads, optimizer state,
  // activations; analytic). On CUDA the allocator counts tensors only, so the base is 0.
  double analytic_mem_mib = 0;    // the training tensors, analytic
  double resident_start_mib = 0;  // measured at start
  double estimate_mem_mib = 0;    // their sum
  double wall_s = 0;
  // This segment's time inside training steps and, of it, in the train loader (next batch and
  // its input tensors): the data path's share of a step.
  double train_s = 0;
  double loader_s = 0;
  std::string message;  // human-readable line (e.g. why it diverged)
};

// Plain callbacks, called on the run's worker thread. Implementations must be quick and
// thread-safe (the GUI's adapter re-emits them as queued signals). Default: ignore.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_start(const std::string& /*run_dir*/, int64_t /*start_step*/,
                        int64_t /*total_steps*/) {}
  virtual void on_step(const StepRecord&) {}
  virtual void on_eval(const EvalRecord&) {}
  virtual void on_checkpoint(const CheckpointRecord&) {}
  virtual void on_finished(const FinishedRecord&) {}
  virtual void on_error(const std::string& /*message*/) {}
  // Progress text outside steps (dataset preparation, resume notes, warnings).
  virtual void on_log(const std::string& /*line*/) {}
};

}  // namespace gllm
