// Sample size for paired seed comparisons: the power of a two-sided paired t-test and the seeds it
// needs (seed 000 §8.2.2's token-efficiency contrasts, planned before a sweep).
#pragma once

namespace gllm::stats {

// Standard normal cumulative distribution Φ(z).
double normal_cdf(double z);

// Power of a two-sided paired t-test at level `alpha` with `n` pairs whose differences have mean
// `effect` and standard deviation `sd`: Φ(|δ|√n/σ − t) + Φ(−|δ|√n/σ − t), t = t_{1−α/2, n−1}
// (the normal approximation to the noncentral t; within 0.01 of the exact power for n ≥ 5).
// 0 for n < 2; 2Φ(−t) (below α) when effect is 0.
double paired_t_power(double effect, double sd, int n, double alpha = 0.05);

// The fewest pairs (≥ 2) whose paired_t_power reaches `power`; 0 when even `max_n` does not
// (or the effect is 0). Cohen's tables: effect/sd = 1 → 10, 0.5 → 34 at 80 %, α = 0.05.
int seeds_for_power(double effect, double sd, double power = 0.8, double alpha = 0.05,
                    int max_n = 1000);

}  // namespace gllm::stats
