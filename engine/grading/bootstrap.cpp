// Bootstrap of the certificate and of BC (seed 000 §7.2) from refit resamples or from per-sample
// contribution matrices (aggregation rule in bootstrap.h); portable SplitMix64 resampling.
#include "engine/grading/bootstrap.h"

#include <algorithm>
#include <cmath>

#include "engine/grading/cone.h"
#include "engine/io/error.h"

namespace gllm::grading {

namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) without modulo bias (rejection).
  uint64_t below(uint64_t n) {
    uint64_t limit = ~0ULL - (~0ULL % n);
    uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }
};

void check_level(double level) {
  if (!(level > 0 && level < 1))
    throw Error("bootstrap interval level must be in (0, 1), e.g. 0.95");
}

void finish(BootstrapResult& r, double zero_tol) {
  r.resamples = static_cast<int>(r.bc_samples.size());
  int same = 0;
  for (double c : r.certificate_samples) same += certificate_sign_of(c, zero_tol) == r.sign;
  r.sign_fraction = r.resamples ? static_cast<double>(same) / r.resamples : 0.0;
  const Interval bc = bootstrap_interval(r.bc, r.bc_samples, r.level);
  const Interval cert = bootstrap_interval(r.certificate, r.certificate_samples, r.level);
  r.bc_low = bc.low;
  r.bc_high = bc.high;
  r.certificate_low = cert.low;
  r.certificate_high = cert.high;
  r.certificate_interval = cert.method;
}

}  // namespace

int certificate_sign_of(double x, double tol) {
  return x > tol ? 1 : (x < -tol ? -1 : 0);
}

Interval bootstrap_interval(double estimate, const std::vector<double>& samples, double level) {
  check_level(level);
  const double lo = (1 - level) / 2, hi = 1 - lo;
  Interval out;
  out.low = percentile(samples, lo);
  out.high = percentile(samples, hi);
  out.method = "percentile";
  if (out.low <= estimate && estimate <= out.high) return out;
  // The resamples sit to one side of the estimate (a biased statistic, e.g. α̂ from squared probe
  // weights): shift the percentile interval by the median bias, so it is centred as the estimate.
  const double bias = percentile(samples, 0.5) - estimate;
  out.low -= bias;
  out.high -= bias;
  out.method = "median-bias-corrected percentile";
  return out;
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty())
    throw Error("percentile of no samples; give at least one bootstrap resample");
  if (!(p >= 0 && p <= 1)) throw Error("percentile probability must be in [0, 1]");
  std::sort(samples.begin(), samples.end());
  double pos = p * (samples.size() - 1);
  size_t i = static_cast<size_t>(std::floor(pos));
  if (i + 1 >= samples.size()) return samples.back();
  double frac = pos - i;
  return samples[i] + frac * (samples[i + 1] - samples[i]);
}

BootstrapResult bootstrap_from_resamples(const Profiles& full,
                                         const std::vector<Profiles>& resamples,
                                         const std::vector<double>& q, double level,
                                         double zero_tol) {
  validate(full);
  check_level(level);
  if (resamples.empty())
    throw Error("no bootstrap resamples; write them with `gllm profiles --bootstrap N`");
  if (q.size() != full.alpha.size())
    throw Error("grades have " + std::to_string(q.size()) +
                " entries for d = " + std::to_string(full.d()));
  BootstrapResult r;
  r.level = level;
  r.certificate = certificate(full.alpha, full.tau, q);
  r.sign = certificate_sign_of(r.certificate, zero_tol);
  r.bc = bhattacharyya(full.alpha, full.tau);
  for (size_t b = 0; b < resamples.size(); ++b) {
    const Profiles& p = resamples[b];
    validate_distribution(p.alpha, "bootstrap[" + std::to_string(b) + "].alpha", full.alpha.size());
    validate_distribution(p.tau, "bootstrap[" + std::to_string(b) + "].tau", full.alpha.size());
    r.certificate_samples.push_back(certificate(p.alpha, p.tau, q));
    r.bc_samples.push_back(bhattacharyya(p.alpha, p.tau));
  }
  finish(r, zero_tol);
  return r;
}

BootstrapResult bootstrap_from_contributions(const Eigen::MatrixXd& A, const Eigen::MatrixXd& T,
                                             const std::vector<double>& q, int resamples,
                                             uint64_t seed, double level, double zero_tol) {
  check_level(level);
  if (A.rows() < 1 || A.cols() < 1)
    throw Error("per-sample contributions are empty; give at least one sample and coordinate");
  if (A.rows() != T.rows() || A.cols() != T.cols())
    throw Error("α contributions are " + std::to_string(A.rows()) + "×" + std::to_string(A.cols()) +
                " but τ contributions are " + std::to_string(T.rows()) + "×" +
                std::to_string(T.cols()) + "; both must be samples × coordinates");
  if (!A.allFinite() || !T.allFinite() || (A.array() < 0).any() || (T.array() < 0).any())
    throw Error(
        "per-sample contributions must be finite and ≥ 0 (energies and squared deviations)");
  if (static_cast<Eigen::Index>(q.size()) != A.cols())
    throw Error("grades have " + std::to_string(q.size()) + " entries for " +
                std::to_string(A.cols()) + " coordinates");
  if (resamples < 1) throw Error("resamples must be ≥ 1 (e.g. 1000)");
  const Eigen::Index n = A.rows(), d = A.cols();
  auto profiles_of = [&](const Eigen::VectorXd& sa, const Eigen::VectorXd& st, Profiles& out) {
    double za = sa.sum(), zt = st.sum();
    if (!(za > 0) || !(zt > 0)) return false;
    out.alpha.resize(d);
    out.tau.resize(d);
    for (Eigen::Index j = 0; j < d; ++j) {
      out.alpha[j] = sa[j] / za;
      out.tau[j] = st[j] / zt;
    }
    return true;
  };
  Profiles full;
  if (!profiles_of(A.colwise().sum().transpose(), T.colwise().sum().transpose(), full))
    throw Error("the summed α or τ contributions are zero; no profile can be formed");
  BootstrapResult r;
  r.level = level;
  r.certificate = certificate(full.alpha, full.tau, q);
  r.sign = certificate_sign_of(r.certificate, zero_tol);
  r.bc = bhattacharyya(full.alpha, full.tau);
  SplitMix64 rng{seed};
  Eigen::VectorXd sa(d), st(d);
  Profiles p;
  for (int b = 0; b < resamples; ++b) {
    bool ok = false;
    for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
      sa.setZero();
      st.setZero();
      for (Eigen::Index i = 0; i < n; ++i) {
        Eigen::Index k = static_cast<Eigen::Index>(rng.below(static_cast<uint64_t>(n)));
        sa += A.row(k).transpose();
        st += T.row(k).transpose();
      }
      ok = profiles_of(sa, st, p);
    }
    if (!ok)
      throw Error("100 resamples in a row had zero α or τ mass; too few samples carry energy");
    r.certificate_samples.push_back(certificate(p.alpha, p.tau, q));
    r.bc_samples.push_back(bhattacharyya(p.alpha, p.tau));
  }
  finish(r, zero_tol);
  return r;
}

}  // namespace gllm::grading
