// Parameter overhead of the graded parts (seed 000 §8.1.3): P_l (Σ d·d_l = d²), head grades
// (K·H·d_k), level grades (d) and output grades (|V|), and its fraction of the model's parameters.
#pragma once
#include <cstdint>

namespace gllm::grading {

struct OverheadInput {
  int64_t d = 0;            // model width
  int64_t layers = 0;       // K
  int64_t heads = 0;        // H (d_k = d / H)
  int64_t levels = 4;       // L (the count does not change d² since Σ d_l = d; validated ≥ 1)
  int64_t vocab = 0;        // |V|
  int64_t total_params = 0; // N
};

struct Overhead {
  int64_t projections = 0;    // d²
  int64_t head_grades = 0;    // K·H·d_k
  int64_t level_grades = 0;   // d
  int64_t output_grades = 0;  // |V|
  int64_t total = 0;
  int64_t head_dim = 0;       // d_k
  double fraction = 0;        // total / N
};

// Throws gllm::Error when a count is < 1 or d is not divisible by H.
Overhead compute_overhead(const OverheadInput& in);

}  // namespace gllm::grading
