// One training step, used unchanged by the trainer and `gllm bench train`: each micro-batch's
// forward and loss inside an autocast scope, backward outside it, then update, zero grads, grades.
#pragma once
#include <torch/torch.h>

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

struct MicroStepLoss {
  double data = 0;     // the data loss: graded loss, or the mean cross-entropy
  double total = 0;    // data + the Eq. 20 regularisers (what backward ran on)
  bool finite = true;  // false: backward was skipped; call discard() before the next step
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
  // to the optimizer. `poison` multiplies the loss by NaN (the divergence guard's test hook).
  MicroStepLoss micro_step(const torch::Tensor& inputs, const torch::Tensor& targets,
                           double grad_divisor, bool poison = false);
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
};

}  // namespace gllm
