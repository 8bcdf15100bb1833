// One training step, used unchanged by the trainer and `gllm bench train`: each micro-batch's
// forward and loss inside an autocast scope, backward outside it, then update, zero grads, grades.
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"

namespace gllm {

// The model's trainable parameters with the optimizer group the model assigns each
// (GPTImpl::tagged_parameters; frozen grades are left out).
std::vector<optim::TaggedParam> optimizer_params(const GPT& model);

// One micro-step's losses, left on the device: reading one is a host sync (a CUDA stream wait),
// so the trainer sums them on the device and reads the sums once per step (read_losses), never
// inside a micro-step.
struct MicroStepLoss {
  torch::Tensor data;   // () fp64, detached: the data loss (graded loss, or mean cross-entropy)
  torch::Tensor total;  // () fp64, detached: data + the Eq. 20 regularisers (what backward ran on)
  // Host reads, one sync each: for tests and one-off checks, not for the training loop.
  double data_value() const { return data.item<double>(); }
  double total_value() const { return total.item<double>(); }
  bool finite() const { return std::isfinite(total_value()); }
};

// Losses summed over a step's micro-steps on the device, read with one host sync.
struct StepLosses {
  double data = 0;     // sum of the micro-steps' data losses
  double total = 0;    // sum of their totals
  bool finite = true;  // false: some micro-step's total was NaN or infinite; discard() the step
};

// The step in llm.c's order: forward → backward (per micro-batch) → update → zero_grad, plus the
// projection of the grades into [0, q_max]. Autocast follows train.dtype: "bf16" opens a scope
// around each forward (and around eval_nats), "fp32" none; no scope is open between calls, so the
// next forward casts the weights the last update wrote.
class TrainStep {
 public:
  TrainStep(GPT model, optim::MuonAdamW& optimizer, const torch::Device& device, std::string dtype);

  // Forward and loss of one micro-batch, inputs and targets (B, T) int64 on the device, then
  // backward of total / grad_divisor (the micro-steps the gradient averages over). The hashed
  // tables' row visits go to `visit_sink` when set (data parallel sums them over ranks first), else
  // to the optimizer. `poison` multiplies the loss by NaN (the divergence guard's test hook). No
  // host sync: backward runs whatever the loss, the losses stay on the device and are added to
  // the step's sums; a non-finite loss shows in read_losses(), before update().
  MicroStepLoss micro_step(const torch::Tensor& inputs, const torch::Tensor& targets,
                           double grad_divisor, bool poison = false);
  // The sums of the micro-steps since the last call (one host sync), and resets them.
  StepLosses read_losses();
  // After every micro-step (and the caller's gradient reduction): optimizer step, gradients reset,
  // grades projected into the clip box. Returns the schedule values the update used.
  optim::StepInfo update(int64_t step_index);
  // Drops the accumulated gradients (after a non-finite loss, or when only timing
  // forward/backward).
  void discard();
  // Matched-tilt nats per target (B, T) for evaluation, without gradients, under the same
  // autocast policy as training's forward.
  torch::Tensor eval_nats(const torch::Tensor& inputs, const torch::Tensor& targets);

  std::function<void(const std::string& table, const torch::Tensor& rows)> visit_sink;

 private:
  GPT model_;
  optim::MuonAdamW& optimizer_;
  torch::Device device_;
  std::string dtype_;
  std::vector<std::string> oe_tables_;  // parameter names of the hashed tables, in model order
  torch::Tensor loss_sums_;  // (2,) fp64 on the device: data, total summed over micro-steps
};

}  // namespace gllm
