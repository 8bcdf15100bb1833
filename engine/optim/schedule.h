// Training schedules of the baseline and seed 001: progress, flat-then-linear warmdown LR
// multiplier, Muon momentum warm-up and warmdown cooldown, linear or cosine weight decay, the
// BiEq/Neumann ramps.
#pragma once
#include <cstdint>

#include "engine/config/optim_config.h"

namespace gllm::optim {

// All schedule values are functions of the 0-based step index (the step being taken).
struct Schedule {
  int64_t total_steps = 1;
  int64_t progress_skip = 0;  // seed 001: p_t = min(max(step − 11, 0) / (953 − 11), 1)
  double warmdown_ratio = 0.5;
  double final_lr_frac = 0.0;
  double momentum_start = 0.85;
  double momentum_end = 0.95;
  int momentum_warmup = 300;
  bool momentum_cooldown = false;
  double cooldown_momentum = 0.85;
  double weight_decay = 0.2;
  bool cosine_weight_decay = false;

  static Schedule from_config(const OptimConfig& c, int64_t total_steps);

  // p = min(max(step − skip, 0) / (total − skip), 1).
  double progress(int64_t step) const;
  // 1 for p < 1 − warmdown_ratio; then (1−p)/warmdown_ratio blended towards final_lr_frac.
  double lr_multiplier(int64_t step) const;
  // f = min(step / warmup, 1), μ = (1−f)·start + f·end; with the cooldown, over the warmdown
  // (p ≥ 1 − warmdown_ratio) μ moves linearly from that value to cooldown_momentum at p = 1.
  double muon_momentum(int64_t step) const;
  // weight_decay·(1 − p), or weight_decay·½(1 + cos πp) when cosine.
  double muon_weight_decay(int64_t step) const;
};

// The seed-001 homotopy ramp min(t/τ, 1)², t = the 1-based update count of the tensor.
double ramp(int64_t t, int tau);

}  // namespace gllm::optim
