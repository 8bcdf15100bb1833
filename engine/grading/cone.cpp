// Cone quantities in O(d): log Λ by two stabilised log-sum-exps, the tilted profiles for the
// gradient, BC, and the certificate; per coordinate or per level (Rem. 9).
#include "engine/grading/cone.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "engine/grading/number_text.h"
#include "engine/io/error.h"

namespace gllm::grading {

namespace {

void check_grades(const std::vector<double>& q, size_t n, const char* what) {
  if (q.size() != n)
    throw Error(std::string(what) + " has " + std::to_string(q.size()) + " entries but " +
                std::to_string(n) + " are needed (one per " +
                (std::string(what) == "level grades" ? "level" : "coordinate") + ")");
  for (size_t j = 0; j < q.size(); ++j)
    if (!std::isfinite(q[j]))
      throw Error(std::string(what) + "[" + std::to_string(j) +
                  "] is not finite; grades must be finite numbers");
}

// Tolerance under which a certificate counts as zero (rounding of Σ q_j(α_j − τ_j)).
double certificate_tol(const std::vector<double>& alpha, const std::vector<double>& tau,
                       const std::vector<double>& q) {
  double s = 0;
  for (size_t j = 0; j < q.size(); ++j) s += std::abs(q[j]) * (alpha[j] + tau[j]);
  return 1e-12 * (1.0 + s) * std::sqrt(static_cast<double>(q.size()) + 1.0);
}

ConeReport evaluate_raw(const std::vector<double>& alpha, const std::vector<double>& tau,
                        const std::vector<double>& q, double lambda, double clip) {
  ConeReport r;
  r.lambda = lambda;
  r.clip = clip;
  r.q_max = q_max_for(lambda, clip);
  const double two_log = 2.0 * std::log(lambda);
  std::vector<double> u(q.size());
  for (size_t j = 0; j < q.size(); ++j) u[j] = two_log * q[j];
  r.log_lambda = log_lambda_u(alpha, tau, u, &r.gradient);
  for (double& g : r.gradient) g *= two_log;
  r.lambda_q = std::exp(r.log_lambda);
  r.gain = std::exp(-r.log_lambda);
  r.bc = bhattacharyya(alpha, tau);
  r.lambda_star = r.bc * r.bc;
  r.clip_bound = 1.0 / (clip * clip);
  r.clipped_floor = std::max(r.lambda_star, r.clip_bound);
  r.certificate = certificate(alpha, tau, q);
  double tol = certificate_tol(alpha, tau, q);
  r.certificate_sign = r.certificate > tol ? 1 : (r.certificate < -tol ? -1 : 0);
  // Λ < 1 strictly; values within rounding of 1 (the gauge orbit of q = 0) are on the boundary.
  r.in_cone = r.log_lambda < -1e-12;
  const double slack = 1e-9 * std::max(1.0, r.q_max);
  for (double x : q)
    if (x < -slack || x > r.q_max + slack) r.within_clip = false;
  return r;
}

}  // namespace

void validate_base_and_clip(double lambda, double clip) {
  if (!std::isfinite(lambda) || lambda <= 1)
    throw Error("grading base λ = " + number_text(lambda) +
                " must be a finite number > 1 (the paper uses e^{1/d_k})");
  if (!std::isfinite(clip) || clip <= 1)
    throw Error("clip C = " + number_text(clip) +
                " must be a finite number > 1 (the paper uses C = 2; sweep 1.5, 2, 4)");
}

double q_max_for(double lambda, double clip) {
  validate_base_and_clip(lambda, clip);
  return std::log(clip) / std::log(lambda);
}

double log_lambda_u(const std::vector<double>& alpha, const std::vector<double>& tau,
                    const std::vector<double>& u, std::vector<double>* grad_u) {
  const size_t d = u.size();
  double m_a = -std::numeric_limits<double>::infinity(), m_t = m_a;
  for (size_t j = 0; j < d; ++j) {
    if (alpha[j] > 0) m_a = std::max(m_a, -u[j]);
    if (tau[j] > 0) m_t = std::max(m_t, u[j]);
  }
  double sa = 0, st = 0;
  if (!grad_u) {
    for (size_t j = 0; j < d; ++j) {
      if (alpha[j] > 0) sa += alpha[j] * std::exp(-u[j] - m_a);
      if (tau[j] > 0) st += tau[j] * std::exp(u[j] - m_t);
    }
  } else {
    std::vector<double>& g = *grad_u;
    g.assign(d, 0.0);
    std::vector<double> et(d, 0.0);
    for (size_t j = 0; j < d; ++j) {
      if (alpha[j] > 0) g[j] = alpha[j] * std::exp(-u[j] - m_a);
      if (tau[j] > 0) et[j] = tau[j] * std::exp(u[j] - m_t);
      sa += g[j];
      st += et[j];
    }
    const double ia = 1.0 / sa, it = 1.0 / st;
    for (size_t j = 0; j < d; ++j) g[j] = et[j] * it - g[j] * ia;  // τ^{(u)} − α^{(u)}
  }
  return (m_a + std::log(sa)) + (m_t + std::log(st));
}

double lambda_of(const std::vector<double>& alpha, const std::vector<double>& tau,
                 const std::vector<double>& q, double lambda) {
  const double two_log = 2.0 * std::log(lambda);
  std::vector<double> u(q.size());
  for (size_t j = 0; j < q.size(); ++j) u[j] = two_log * q[j];
  return std::exp(log_lambda_u(alpha, tau, u));
}

double certificate(const std::vector<double>& alpha, const std::vector<double>& tau,
                   const std::vector<double>& q) {
  double c = 0;
  for (size_t j = 0; j < q.size(); ++j) c += q[j] * (alpha[j] - tau[j]);
  return c;
}

ConeReport evaluate_cone(const Profiles& p, const std::vector<double>& q, double lambda,
                         double clip) {
  validate(p);
  validate_base_and_clip(lambda, clip);
  check_grades(q, p.alpha.size(), "grades");
  return evaluate_raw(p.alpha, p.tau, q, lambda, clip);
}

ConeReport evaluate_cone_levels(const Profiles& p, const std::vector<double>& v, double lambda,
                                double clip) {
  validate(p);
  validate_base_and_clip(lambda, clip);
  if (!p.has_levels())
    throw Error(
        "level-constant grades need profiles with level structure (level_dims); use per-coordinate "
        "grades instead");
  check_grades(v, p.level_dims.size(), "level grades");
  return evaluate_raw(p.level_alpha(), p.level_tau(), v, lambda, clip);
}

namespace {
// Λ(0) = (Σα)(Στ) is 1 up to rounding: within this of 1 (and a certificate within it of 0) is the
// boundary, not the cone.
constexpr double kVerdictTol = 1e-12;
}  // namespace

ConeVerdict cone_verdict(double lambda_q, double certificate) {
  if (lambda_q < 1 - kVerdictTol) return ConeVerdict::InCone;
  if (certificate > kVerdictTol) return ConeVerdict::FirstOrderOnly;
  return ConeVerdict::Outside;
}

std::string cone_verdict_text(double lambda_q, double certificate) {
  switch (cone_verdict(lambda_q, certificate)) {
    case ConeVerdict::InCone:
      return "in the cone (Λ < 1)";
    case ConeVerdict::FirstOrderOnly:
      return "first-order positive, outside the cone (Λ ≥ 1)";
    case ConeVerdict::Outside:
      break;
  }
  if (std::abs(certificate) <= kVerdictTol && std::abs(lambda_q - 1) <= 1e-9)
    return "on the boundary (q = 0, Λ = 1)";
  return "outside, negative first order";
}

std::string cone_verdict_key(double lambda_q, double certificate) {
  switch (cone_verdict(lambda_q, certificate)) {
    case ConeVerdict::InCone:
      return "in_cone";
    case ConeVerdict::FirstOrderOnly:
      return "first_order_only";
    case ConeVerdict::Outside:
      break;
  }
  return "outside";
}

}  // namespace gllm::grading
