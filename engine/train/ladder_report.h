// The selection ladder tested (seed 000 §6.5, §8.2.2, §8.3.3): per arm the pre-registered
// certificate against its token efficiency — tokens to a target val BPB and to a target task error,
// per-seed ratios to the uniform arm with intervals — and its paired ΔBPB; the rank correlation of
// predicted and measured order with a bootstrap interval. Torch-free.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/stats/paired.h"
#include "engine/train/token_efficiency.h"

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
  int predicted_rank = 0;  // 1 = largest certificate (the prediction the report orders by)
  std::vector<int> seeds;
  std::vector<double> heldout_bpb, val_bpb;  // per seed (final)
  bool has_delta = false;                    // paired against uniform on ≥ 1 common seed
  stats::Paired delta_heldout;               // arm − uniform, matched by seed (lower is better)
  stats::Paired delta_val;
  // Token efficiency (§8.2.2): per seed, the tokens at which val BPB (task error) first reaches
  // the report's target (NaN where it never does) and tokens(uniform)/tokens(arm) by seed.
  std::vector<double> tokens_to_target;
  TokenRatio token_ratio;
  std::vector<double> tokens_to_task_target;
  TokenRatio task_token_ratio;
  int measured_rank = 0;  // 1 = largest token ratio (val BPB); arms without one rank last
  int delta_rank = 0;     // 1 = most negative mean held-out ΔBPB

  // The prediction this report orders by: the held-out certificate when the ladder has one.
  double predicted_certificate() const { return has_heldout ? certificate_heldout : certificate; }
  double predicted_gain() const { return has_heldout ? gain_heldout : gain; }  // 1/Λ(q)
};

// A rank correlation with its percentile bootstrap interval over seeds.
struct RankCorrelation {
  double rho = 0;  // NaN when fewer than two arms besides uniform have a measurement
  double low = 0, high = 0;
  int arms = 0;   // arms entering the correlation (uniform included)
  int seeds = 0;  // seeds common to those arms (the bootstrap's resampling unit)
};

struct LadderReportOptions {
  double target_bpb = 0;         // 0: the uniform arm's val BPB at half its budget
  double target_task_error = 0;  // 0: the uniform arm's task error at half its budget
  std::string task;              // probe task in probe.jsonl ("" = the first one found)
  int task_layer = -1;           // its layer (−1 = the deepest probed)
  int bootstrap = 2000;
  uint64_t seed = 0;
};

struct LadderReport {
  std::string runs_dir;
  std::string ladder_file;                // the first run's
  std::vector<std::string> ladder_files;  // every ladder the runs name (route 2: one per seed)
  std::string prediction;                 // "held-out" or "fit": which certificate orders the arms
  bool forked = false;            // route 2: tokens count from each run's fork (parent.json)
  double half_budget_tokens = 0;  // half the uniform arm's tokens (mean over seeds)
  double target_bpb = 0;          // for tokens to target (val_bpb curve)
  std::string target_rule;        // how it was chosen
  bool has_task = false;          // probe.jsonl found for the runs
  std::string task;
  int task_layer = -1;
  double target_task_error = 0;
  std::string task_target_rule;
  std::vector<LadderArmReport> arms;  // in predicted order
  // Spearman's ρ of the predicted certificate against the measured token ratio (the seed's
  // §8.3.3 test), against the task token ratio, and against −ΔBPB (held-out, at the budget).
  RankCorrelation rho_tokens, rho_task, rho_delta;
  int bootstrap = 0;
  std::vector<std::string> warnings;
};

// Reads every run under `runs_dir` whose config takes MLGE grades from a ladder arm
// (grading.level_grades_source = "ladder"), groups them by arm and seed, and pairs each arm
// with the "uniform" arm by seed. Throws gllm::Error when there is no uniform arm or no runs.
LadderReport ladder_report(const std::string& runs_dir, const LadderReportOptions& options);
LadderReport ladder_report(const std::string& runs_dir, double target_bpb = 0, int bootstrap = 2000,
                           uint64_t seed = 0);
nlohmann::json to_json(const LadderReport& r);

// Spearman's rank correlation of x and y (average ranks for ties); 0 when either is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gllm
