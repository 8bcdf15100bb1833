// Token efficiency (seed 000 §8.2.2): the tokens at which a run's curve first reaches a target,
// read between evaluations in log tokens, and per-seed ratios against the uniform arm. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

// One evaluation of a curve: tokens seen and the figure (val BPB, task error, …).
struct CurvePoint {
  double tokens = 0;
  double value = 0;
};

// The points of `key` in metrics (or probe) records, in token order; records without a finite
// value of `key` or without positive tokens are skipped, and a repeated token count keeps the last.
std::vector<CurvePoint> metric_curve(const std::vector<nlohmann::json>& records,
                                     const std::string& key);

// The curve in tokens since `start_tokens` (a fork's tokens at its parent's checkpoint: its grades
// act only from there), points at or before the start dropped. Unchanged for start_tokens ≤ 0.
std::vector<CurvePoint> since_start(const std::vector<CurvePoint>& curve, double start_tokens);

// The curve's value at `tokens`, linear in log tokens between the evaluations around it; NaN when
// `tokens` lies outside the evaluated range.
double value_at_tokens(const std::vector<CurvePoint>& curve, double tokens);

// Where a curve first reaches `target` (value ≤ target).
struct TargetCrossing {
  bool reached = false;
  bool at_first_point = false;  // already there at the first evaluation (tokens = its tokens)
  double tokens = 0;            // NaN when not reached
};
// Between the last evaluation above the target and the first at or below it, log tokens are
// interpolated linearly in the value: ln t = ln t₀ + (v₀ − target)/(v₀ − v₁)·(ln t₁ − ln t₀).
TargetCrossing tokens_to_target(const std::vector<CurvePoint>& curve, double target);

// Per-seed token ratios tokens(uniform)/tokens(arm) (> 1: the arm needs fewer tokens), summarised
// on the log scale: the geometric mean with a 95 % t-interval (n − 1 df) over seeds.
struct TokenRatio {
  std::vector<double> per_seed;  // NaN where either run did not reach the target
  int n = 0;                     // seeds with a ratio
  double ratio = 0;              // exp(mean log ratio); 0 when n = 0
  double low = 0, high = 0;      // 95 % interval (equal to ratio when n = 1)
};
TokenRatio token_ratio(const std::vector<double>& uniform_tokens,
                       const std::vector<double>& arm_tokens);

nlohmann::json to_json(const TokenRatio& r);

}  // namespace gllm
