// Schedules of the baseline (AR train.py get_lr_multiplier, momentum, weight decay) and the
// seed-001 changes (momentum cooldown, cosine weight decay, progress offset, homotopy ramps).
#include "engine/optim/schedule.h"

#include <algorithm>
#include <cmath>

#include "engine/io/error.h"

namespace gllm::optim {

Schedule Schedule::from_config(const OptimConfig& c, int64_t total_steps) {
  if (total_steps < 1)
    throw Error("optimizer schedule needs at least one training step (got " +
                std::to_string(total_steps) + "); set train.steps to a positive number");
  Schedule s;
  s.total_steps = total_steps;
  s.progress_skip = std::min<int64_t>(c.progress_skip, std::max<int64_t>(total_steps - 1, 0));
  s.warmdown_ratio = c.warmdown_ratio;
  s.final_lr_frac = c.final_lr_frac;
  s.momentum_start = c.muon_momentum_start;
  s.momentum_end = c.muon_momentum;
  s.momentum_warmup = c.muon_momentum_warmup;
  s.momentum_cooldown = c.momentum_cooldown;
  s.cooldown_momentum = c.cooldown_momentum;
  s.weight_decay = c.weight_decay;
  s.cosine_weight_decay = c.cosine_weight_decay;
  return s;
}

double Schedule::progress(int64_t step) const {
  const double span = static_cast<double>(std::max<int64_t>(total_steps - progress_skip, 1));
  const double p = static_cast<double>(std::max<int64_t>(step - progress_skip, 0)) / span;
  return std::clamp(p, 0.0, 1.0);
}

double Schedule::lr_multiplier(int64_t step) const {
  const double p = progress(step);
  if (warmdown_ratio <= 0 || p < 1.0 - warmdown_ratio) return 1.0;
  const double cooldown = (1.0 - p) / warmdown_ratio;
  return cooldown * 1.0 + (1.0 - cooldown) * final_lr_frac;
}

double Schedule::muon_momentum(int64_t step) const {
  const double f =
      momentum_warmup <= 0 ? 1.0 : std::min(static_cast<double>(step) / momentum_warmup, 1.0);
  double mu = (1.0 - f) * momentum_start + f * momentum_end;
  if (momentum_cooldown && warmdown_ratio > 0) {
    const double p = progress(step);
    const double start = 1.0 - warmdown_ratio;
    if (p >= start) {
      const double frac = std::min((p - start) / warmdown_ratio, 1.0);
      mu = mu + (cooldown_momentum - mu) * frac;
    }
  }
  return mu;
}

double Schedule::muon_weight_decay(int64_t step) const {
  const double p = progress(step);
  if (cosine_weight_decay) return weight_decay * 0.5 * (1.0 + std::cos(M_PI * p));
  return weight_decay * (1.0 - p);
}

double ramp(int64_t t, int tau) {
  if (tau <= 0) return 1.0;
  const double r = std::min(static_cast<double>(std::max<int64_t>(t, 0)) / tau, 1.0);
  return r * r;
}

}  // namespace gllm::optim
