// The selection ladder tested (seed 000 §6.5, §8.3.3): each arm's pre-registered ⟨q, α̂−τ̂⟩
// against its measured paired ΔBPB versus the uniform arm, tokens to a fixed BPB, and the rank
// correlation of predicted and measured order with a bootstrap interval. Torch-free.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/stats/paired.h"

namespace gllm {

struct LadderArmReport {
  std::string arm;                  // the runs' config name, e.g. "ladder-educated"
  std::string ladder_arm;           // the ladder's arm, e.g. "educated"
  std::string program;              // what produced its grades (the ladder's "program")
  double certificate = 0;           // pre-registered ⟨q, α̂−τ̂⟩ from the ladder file
  double certificate_readback = 0;  // recomputed from a checkpoint's mlge.level_grades (NaN: none)
  double lambda_q = 1, gain = 1;    // on the fit profiles (in-sample for fitted arms)
  bool has_heldout = false;         // the ladder scored the grades on held-out profiles
  double certificate_heldout = 0, lambda_q_heldout = 1, gain_heldout = 1;
  int predicted_rank = 0;  // 1 = largest certificate
  std::vector<int> seeds;
  std::vector<double> heldout_bpb, val_bpb;  // per seed (final)
  bool has_delta = false;                    // paired against uniform on ≥ 1 common seed
  stats::Paired delta_heldout;               // arm − uniform, matched by seed (lower is better)
  stats::Paired delta_val;
  std::vector<double> tokens_to_target;  // per seed; NaN where the target was never reached
  double token_ratio = 0;  // mean tokens to target / the uniform arm's (0: not reached)
  int measured_rank = 0;   // 1 = most negative mean ΔBPB (held-out)
};

struct LadderReport {
  std::string runs_dir;
  std::string ladder_file;
  std::string metric = "heldout_bpb";  // the measured outcome
  double target_bpb = 0;               // for tokens to target (val_bpb curve)
  std::vector<LadderArmReport> arms;   // in predicted order
  double spearman = 0;                 // rank correlation of certificate and −ΔBPB (all arms)
  double spearman_low = 0, spearman_high = 0;  // percentile bootstrap over seeds
  int bootstrap = 0;
  std::vector<std::string> warnings;
};

// Reads every run under `runs_dir` whose config takes MLGE grades from a ladder arm
// (grading.level_grades_source = "ladder"), groups them by arm and seed, and pairs each arm
// with the "uniform" arm by seed. `target_bpb` 0 = the largest final validation BPB of all
// runs (so every run reaches it). Throws gllm::Error when there is no uniform arm or no runs.
LadderReport ladder_report(const std::string& runs_dir, double target_bpb = 0, int bootstrap = 2000,
                           uint64_t seed = 0);
nlohmann::json to_json(const LadderReport& r);

// Spearman's rank correlation of x and y (average ranks for ties); 0 when either is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gllm
