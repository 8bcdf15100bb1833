// Parameter overhead of the graded parts (seed 000 §8.1.3): P_l (Σ d·d_l = d²), head grades
// (K·H·d_k), level grades (d) and output grades (|V|), and its fraction of the model's parameters.
#pragma once
#include <cstdint>

namespace gllm::grading {

struct OverheadInput {
  int64_t d = 0;             // model width
  int64_t layers = 0;        // K
  int64_t heads = 0;         // H (d_k = d / H)
  int64_t levels = 4;        // L (the count does not change d² since Σ d_l = d; validated ≥ 1)
  int64_t vocab = 0;         // |V|
  int64_t total_params = 0;  // N
};

struct Overhead {
  int64_t projections = 0;    // d²
  int64_t head_grades = 0;    // K·H·d_k
  int64_t level_grades = 0;   // d
  int64_t output_grades = 0;  // |V|
  int64_t total = 0;
  int64_t head_dim = 0;  // d_k
  double fraction = 0;   // total / N
  // The paper's way of summing (§8.1.3): each component rounded to 3 significant digits first
  // (1.05M + 24.6K + 1.02K + 50.3K). The exact totals are 1,124,433 (1.12M) at GLLM-Medium and
  // 16,944,384 (16.9M) at GLLM-7B; the printed 1.13M and 17.0M are these rounded sums.
  int64_t total_rounded_components = 0;
};

// x rounded to `digits` significant digits (x ≥ 0).
int64_t round_significant(int64_t x, int digits);

// Throws gllm::Error when a count is < 1 or d is not divisible by H.
Overhead compute_overhead(const OverheadInput& in);

}  // namespace gllm::grading
