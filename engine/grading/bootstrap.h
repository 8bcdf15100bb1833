// Bootstrap for the certificate (seed 000 §7.2): the fraction of resamples preserving the sign of
// ⟨q, α̂−τ̂⟩ and intervals for BC(α̂, τ̂) and the certificate that contain their estimates.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/grading/profiles.h"

namespace gllm::grading {

struct BootstrapResult {
  int resamples = 0;
  double certificate = 0;          // on the full-sample profiles
  int sign = 0;                    // its sign (0 when |·| ≤ zero_tol)
  double sign_fraction = 0;        // fraction of resamples whose certificate has the same sign
  double bc = 0;                   // BC on the full-sample profiles
  double bc_low = 0, bc_high = 0;  // percentile interval of BC
  double certificate_low = 0, certificate_high = 0;  // interval of the certificate
  std::string certificate_interval;  // bootstrap_interval's method for the certificate
  double level = 0.95;
  std::vector<double> bc_samples;           // per resample
  std::vector<double> certificate_samples;  // per resample
};

// The sign of a certificate, 0 when |x| ≤ tol (rounding).
int certificate_sign_of(double x, double tol);

// A bootstrap interval at `level` that contains its point estimate: the percentile interval where
// it does; where every resample sits to one side (a biased statistic), the percentile interval
// shifted by the median bias (median of the resamples − estimate), which always contains it.
struct Interval {
  double low = 0, high = 0;
  std::string method;  // "percentile" | "median-bias-corrected percentile"
};
Interval bootstrap_interval(double estimate, const std::vector<double>& samples,
                            double level = 0.95);

// Percentile of sorted-or-not samples at probability p ∈ [0, 1], linear interpolation between
// order statistics (the "type 7" rule: position p·(n−1)).
double percentile(std::vector<double> samples, double p);

// From resampled profiles already refit by the data side (ProfilesFile::bootstrap).
BootstrapResult bootstrap_from_resamples(const Profiles& full,
                                         const std::vector<Profiles>& resamples,
                                         const std::vector<double>& q, double level = 0.95,
                                         double zero_tol = 1e-12);

// From per-sample contributions: rows i = samples (sentences), columns j = coordinates, entries
// ≥ 0. Aggregation rule: a resample draws n row indices with replacement (portable SplitMix64,
// seeded) and sets α̂_j ∝ Σ_i A_ij and τ̂_j ∝ Σ_i T_ij over the drawn rows (each normalised to
// sum 1) — i.e. the profiles are ratios of summed per-sample energies, exactly how α̂ (squared
// probe weights / energy) and τ̂ (σ̂_j² / Σσ̂_k²) aggregate over sentences. The full-sample
// profiles use all rows once. A and T must have equal shapes; a resample whose α or τ sum is 0
// is redrawn (at most 100 times, then an error).
BootstrapResult bootstrap_from_contributions(const Eigen::MatrixXd& alpha_contrib,
                                             const Eigen::MatrixXd& tau_contrib,
                                             const std::vector<double>& q, int resamples,
                                             uint64_t seed, double level = 0.95,
                                             double zero_tol = 1e-12);

}  // namespace gllm::grading
