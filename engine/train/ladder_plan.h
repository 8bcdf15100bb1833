// A power plan before a ladder sweep (seed 000 §8.2.2): each arm's predicted Λ(q) turned into a
// predicted token ratio and ΔBPB through a uniform pilot's BPB-vs-tokens slope, the pilot's paired
// seed noise, and the seeds each comparison needs for 80 % power at α = 0.05. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/train/token_efficiency.h"

namespace gllm {

struct PlanOptions {
  double alpha = 0.05;  // two-sided level of each paired comparison against uniform
  double power = 0.8;
  int max_seeds = 10;  // the budget: the most seeds per arm a sweep may run
  int seeds = 0;       // the power achieved is quoted at this many seeds (0: the pilot's count)
};

struct ArmPlan {
  std::string arm;
  double certificate = 0;  // the prediction: held-out ⟨q, α̂−τ̂⟩ when the ladder has it
  double lambda_q = 1;     // Λ(q) on the same profiles
  double predicted_gain = 1;       // predicted tokens(uniform)/tokens(arm) = 1/Λ(q)
  double predicted_delta_bpb = 0;  // at the budget: slope · ln Λ (negative: better than uniform)
  int seeds_needed = 0;            // for `power` at `alpha`; 0: not within max_seeds
  double power_at_seeds = 0;       // achieved with the plan's `seeds_at` seeds
  bool in_reach = false;
};

struct LadderPlan {
  std::string ladder_file, pilot_dir;
  std::string prediction;    // "held-out" or "fit"
  double budget_tokens = 0;  // the pilot's uniform budget (mean over seeds)
  int pilot_seeds = 0;       // uniform seeds in the pilot
  double slope = 0;          // BPB lost per e-fold of tokens, −dBPB/d ln t (mean over seeds)
  std::vector<double> slope_per_seed;
  std::string slope_window;  // which evaluations the slope was fitted on
  double paired_sd = 0;      // SD of a paired seed difference in final held-out BPB
  std::string paired_sd_source;
  int seeds_at = 0;
  std::vector<ArmPlan> arms;  // by the predicted certificate, largest first
  int seeds_recommended = 0;  // the most any arm in reach needs (at least 2)
  std::string recommendation;
  std::vector<std::string> notes;
  PlanOptions options;
};

// Reads the ladder's arms and the pilot runs under `pilot_dir` (completed runs; the uniform arm
// needs ≥ 2 seeds with validation curves). Throws gllm::Error naming what is missing.
LadderPlan ladder_plan(const std::string& ladder_file, const std::string& pilot_dir,
                       const PlanOptions& options = {});
nlohmann::json to_json(const LadderPlan& p);

// Least-squares slope of value on ln(tokens) over the points with tokens ≥ from_tokens.
double log_token_slope(const std::vector<CurvePoint>& curve, double from_tokens);

}  // namespace gllm
