// The training step shared by the trainer and the benchmark (step.h): autocast scoped to the
// forward passes, backward and the update outside it.
#include "engine/train/step.h"

#include <cmath>
#include <limits>

#include "engine/dist/device.h"
#include "engine/runtime/host_sync.h"

namespace gllm {

std::vector<optim::TaggedParam> optimizer_params(const GPT& model) {
  std::vector<optim::TaggedParam> out;
  for (const auto& tp : model->tagged_parameters())
    if (tp.trainable) out.push_back({tp.name, tp.param, tp.group});
  return out;
}

TrainStep::TrainStep(GPT model, optim::MuonAdamW& optimizer, const torch::Device& device,
                     std::string dtype)
    : model_(std::move(model)), optimizer_(optimizer), device_(device), dtype_(std::move(dtype)) {
  for (const auto& tp : model_->tagged_parameters())
    if (tp.trainable && tp.group == "oe_table") oe_tables_.push_back(tp.name);
  // Validates the dtype now rather than at the first forward.
  dist::AutocastScope probe(device_, dtype_);
}

MicroStepLoss TrainStep::micro_step(const torch::Tensor& inputs, const torch::Tensor& targets,
                                    double grad_divisor, bool poison) {
  LossParts parts;
  {
    dist::AutocastScope autocast(device_, dtype_);
    parts = model_->loss(inputs, targets);
  }  // the scope ends before backward; its cast cache is cleared here
  torch::Tensor total = parts.total;
  if (poison) total = total * std::numeric_limits<double>::quiet_NaN();
  MicroStepLoss out;
  out.data = parts.data.detach().to(torch::kDouble);  // ()
  out.total = total.detach().to(torch::kDouble);      // ()
  {
    torch::NoGradGuard no_grad;
    auto both = torch::stack({out.data, out.total});  // (2,)
    loss_sums_ = loss_sums_.defined() ? loss_sums_ + both : both;
  }
  (total / grad_divisor).backward();
  if (!oe_tables_.empty()) {
    auto rows = model_->oe_rows(inputs);  // one (B, T) row-index tensor per hashed table
    for (size_t j = 0; j < oe_tables_.size() && j < rows.size(); ++j) {
      if (visit_sink)
        visit_sink(oe_tables_[j], rows[j]);
      else
        optimizer_.accumulate_visits(oe_tables_[j], rows[j]);
    }
  }
  return out;
}

StepLosses TrainStep::read_losses() {
  StepLosses out;
  if (!loss_sums_.defined()) return out;
  const auto host = host_read(loss_sums_);  // (2,) fp64: the step's one read of its losses
  loss_sums_ = torch::Tensor();
  out.data = host.data_ptr<double>()[0];
  out.total = host.data_ptr<double>()[1];
  out.finite = std::isfinite(out.total);
  return out;
}

optim::StepInfo TrainStep::update(int64_t step_index) {
  optim::StepInfo info = optimizer_.step(step_index);
  optimizer_.zero_grad();
  loss_sums_ = torch::Tensor();  // unread sums (a caller that times steps) start afresh
  torch::NoGradGuard no_grad;
  model_->project_grades();
  return info;
}

void TrainStep::discard() {
  loss_sums_ = torch::Tensor();
  optimizer_.zero_grad();
}

torch::Tensor TrainStep::eval_nats(const torch::Tensor& inputs, const torch::Tensor& targets) {
  torch::NoGradGuard no_grad;
  dist::AutocastScope autocast(device_, dtype_);
  return model_->per_target_nats(inputs, targets);
}

}  // namespace gllm
