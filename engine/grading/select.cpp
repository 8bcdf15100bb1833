// Solvers for the educated grading: the exact KKT bisection of Prop. 10(ii) (no penalty) and
// projected Newton with a Woodbury-inverted diag-plus-rank-2 Hessian (magnitude penalty).
#include "engine/grading/select.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/grading/cone.h"
#include "engine/io/error.h"

namespace gllm::grading {

namespace {

// Works in u_j = 2 q_j log λ on the box [0, U], U = 2 log C. F(u) = Φ(u) + Σ κ_j u_j².
struct Problem {
  const std::vector<double>& alpha;
  const std::vector<double>& tau;
  double U;
  std::vector<double> kappa;  // empty = no penalty
};

struct CoreResult {
  std::vector<double> u;
  int iterations = 0;
  bool converged = false;
  std::string method;
};

double objective(const Problem& pb, const std::vector<double>& u, std::vector<double>* grad) {
  double f = log_lambda_u(pb.alpha, pb.tau, u, grad);
  if (!pb.kappa.empty()) {
    for (size_t j = 0; j < u.size(); ++j) {
      f += pb.kappa[j] * u[j] * u[j];
      if (grad) (*grad)[j] += 2 * pb.kappa[j] * u[j];
    }
  }
  return f;
}

// ‖u − Π(u − ∇F)‖_∞: zero exactly at KKT points of the box program.
double projected_gradient_norm(const std::vector<double>& u, const std::vector<double>& g,
                               double U) {
  double r = 0;
  for (size_t j = 0; j < u.size(); ++j)
    r = std::max(r, std::abs(u[j] - std::clamp(u[j] - g[j], 0.0, U)));
  return r;
}

// Prop. 10(ii): u_j = clamp(r_j + c, 0, U), r_j = ½ log(α_j/τ_j) (±∞ at zeros), and c solves
// h(c) = c − ½ log(T(u(c))/A(u(c))) = 0. h'(c) = 1 − ½ Σ_free (α^{(u)} + τ^{(u)}) ≥ 0, so h is
// non-decreasing; h(c) = c when every u_j = 0 and h(c) = c − U when every u_j = U, which brackets
// a root. Safeguarded Newton inside the bracket, bisection when Newton leaves it; it runs to
// machine precision in c (the caller's tolerance applies to the projected-Newton polish).
CoreResult solve_kkt_bisection(const Problem& pb, int max_iter) {
  const size_t d = pb.alpha.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> r(d);
  std::vector<char> dead(d, 0);  // α_j = τ_j = 0: no influence; grade fixed at 0
  double r_min = inf, r_max = -inf;
  for (size_t j = 0; j < d; ++j) {
    if (pb.alpha[j] <= 0 && pb.tau[j] <= 0) {
      dead[j] = 1;
      r[j] = -inf;
      continue;
    }
    r[j] = pb.alpha[j] <= 0
               ? -inf
               : (pb.tau[j] <= 0 ? inf : 0.5 * (std::log(pb.alpha[j]) - std::log(pb.tau[j])));
    if (std::isfinite(r[j])) {
      r_min = std::min(r_min, r[j]);
      r_max = std::max(r_max, r[j]);
    }
  }
  if (!std::isfinite(r_min)) r_min = r_max = 0;  // every coordinate is degenerate
  std::vector<double> u(d);
  auto fill = [&](double c) {
    for (size_t j = 0; j < d; ++j) u[j] = dead[j] ? 0.0 : std::clamp(r[j] + c, 0.0, pb.U);
  };
  // h(c) and h'(c).
  auto h_eval = [&](double c, double* slope) {
    fill(c);
    double m_a = -inf, m_t = -inf;
    for (size_t j = 0; j < d; ++j) {
      if (pb.alpha[j] > 0) m_a = std::max(m_a, -u[j]);
      if (pb.tau[j] > 0) m_t = std::max(m_t, u[j]);
    }
    double sa = 0, st = 0, free_mass_a = 0, free_mass_t = 0;
    for (size_t j = 0; j < d; ++j) {
      double a = pb.alpha[j] > 0 ? pb.alpha[j] * std::exp(-u[j] - m_a) : 0;
      double t = pb.tau[j] > 0 ? pb.tau[j] * std::exp(u[j] - m_t) : 0;
      sa += a;
      st += t;
      bool free = !dead[j] && std::isfinite(r[j]) && r[j] + c > 0 && r[j] + c < pb.U;
      if (free) {
        free_mass_a += a;
        free_mass_t += t;
      }
    }
    double log_ta = (m_t + std::log(st)) - (m_a + std::log(sa));
    if (slope) *slope = 1.0 - 0.5 * (free_mass_a / sa + free_mass_t / st);
    return c - 0.5 * log_ta;
  };
  double lo = std::min(-r_max, 0.0) - 1.0;
  double hi = std::max(pb.U - r_min, pb.U) + 1.0;
  CoreResult res;
  res.method = "kkt-bisection";
  double c = 0.5 * (lo + hi);
  double last_abs_h = inf, h = inf;
  for (int it = 0; it < std::max(max_iter, 200); ++it) {
    res.iterations = it + 1;
    double slope = 0;
    h = h_eval(c, &slope);
    if (h <= 0) lo = c;
    if (h >= 0) hi = c;
    if (std::abs(h) <= 1e-15 || hi - lo <= 1e-15 * (1.0 + std::abs(c))) {
      res.converged = true;
      break;
    }
    // Newton inside the bracket while it at least halves |h|; bisection otherwise.
    double next = slope > 1e-12 ? c - h / slope : lo - 1;
    if (!(next > lo && next < hi) || std::abs(h) > 0.5 * last_abs_h) next = 0.5 * (lo + hi);
    last_abs_h = std::abs(h);
    c = next;
  }
  fill(c);
  res.u = u;
  return res;
}

// Projected Newton (Bertsekas 1982) for the strictly convex penalised program.
CoreResult solve_projected_newton(const Problem& pb, std::vector<double> u, double tol,
                                  int max_iter) {
  const size_t d = u.size();
  CoreResult res;
  res.method = "projected-newton";
  std::vector<double> g(d), a(d), t(d), p(d), trial(d), gt(d);
  double f = objective(pb, u, &g);
  for (int it = 0; it < max_iter; ++it) {
    res.iterations = it + 1;
    double pg = projected_gradient_norm(u, g, pb.U);
    if (pg <= tol) {
      res.converged = true;
      break;
    }
    // Tilted profiles at u (for the Hessian): α^{(u)}, τ^{(u)}.
    {
      double m_a = -std::numeric_limits<double>::infinity(), m_t = m_a;
      for (size_t j = 0; j < d; ++j) {
        if (pb.alpha[j] > 0) m_a = std::max(m_a, -u[j]);
        if (pb.tau[j] > 0) m_t = std::max(m_t, u[j]);
      }
      double sa = 0, st = 0;
      for (size_t j = 0; j < d; ++j) {
        a[j] = pb.alpha[j] > 0 ? pb.alpha[j] * std::exp(-u[j] - m_a) : 0;
        t[j] = pb.tau[j] > 0 ? pb.tau[j] * std::exp(u[j] - m_t) : 0;
        sa += a[j];
        st += t[j];
      }
      for (size_t j = 0; j < d; ++j) {
        a[j] /= sa;
        t[j] /= st;
      }
    }
    const double eps = std::min(1e-3, pg);
    std::vector<char> active(d, 0);
    for (size_t j = 0; j < d; ++j)
      active[j] = (u[j] <= eps && g[j] > 0) || (u[j] >= pb.U - eps && g[j] < 0);
    // Free block: H = D − a aᵀ − t tᵀ with D = diag(a + t + 2κ). Woodbury with U = [a t]:
    // H⁻¹x = D⁻¹x + D⁻¹U (I − UᵀD⁻¹U)⁻¹ UᵀD⁻¹x.
    double m00 = 1, m01 = 0, m11 = 1, ya = 0, yt = 0;
    for (size_t j = 0; j < d; ++j) {
      if (active[j]) continue;
      double dj = a[j] + t[j] + 2 * pb.kappa[j];
      m00 -= a[j] * a[j] / dj;
      m01 -= a[j] * t[j] / dj;
      m11 -= t[j] * t[j] / dj;
      ya += a[j] * g[j] / dj;
      yt += t[j] * g[j] / dj;
    }
    double det = m00 * m11 - m01 * m01;
    double za = 0, zt = 0;
    if (det > 1e-300) {
      za = (m11 * ya - m01 * yt) / det;
      zt = (-m01 * ya + m00 * yt) / det;
    }
    double descent = 0;  // g·p on the free set (negative)
    for (size_t j = 0; j < d; ++j) {
      double dj = a[j] + t[j] + 2 * pb.kappa[j];
      if (active[j]) {
        p[j] = -g[j] / dj;
      } else {
        p[j] = -(g[j] + a[j] * za + t[j] * zt) / dj;
        descent += g[j] * p[j];
      }
    }
    if (!(descent < 0)) {  // numerical breakdown: fall back to the scaled gradient
      for (size_t j = 0; j < d; ++j) p[j] = -g[j] / (a[j] + t[j] + 2 * pb.kappa[j]);
    }
    // Armijo along the projection arc: F(u(s)) ≤ F(u) + σ ∇F·(u(s) − u).
    double s = 1.0;
    double f_new = f;
    bool accepted = false;
    for (int ls = 0; ls < 60; ++ls) {
      double lin = 0;
      for (size_t j = 0; j < d; ++j) {
        trial[j] = std::clamp(u[j] + s * p[j], 0.0, pb.U);
        lin += g[j] * (trial[j] - u[j]);
      }
      f_new = objective(pb, trial, &gt);
      // Armijo, or (near the optimum, where F changes below its rounding) a step that halves the
      // projected gradient: Newton's quadratic convergence shows in ∇F long after it leaves F.
      if (f_new <= f + 1e-4 * lin || (f_new <= f + 1e-13 * (1 + std::abs(f)) &&
                                      projected_gradient_norm(trial, gt, pb.U) <= 0.5 * pg)) {
        accepted = true;
        break;
      }
      s *= 0.5;
    }
    if (!accepted) {  // no decrease is representable: we are at the optimum to machine precision
      res.converged = projected_gradient_norm(u, g, pb.U) <= std::max(tol, 1e-9);
      break;
    }
    u.swap(trial);
    g.swap(gt);
    f = f_new;
  }
  if (!res.converged) res.converged = projected_gradient_norm(u, g, pb.U) <= tol;
  res.u = std::move(u);
  return res;
}

void check_options(const SelectOptions& opt) {
  validate_base_and_clip(opt.lambda, opt.clip);
  if (!std::isfinite(opt.magnitude_weight) || opt.magnitude_weight < 0)
    throw Error("magnitude weight ν_mag must be a finite number ≥ 0");
  if (!(opt.tol > 0)) throw Error("solver tolerance must be > 0");
  if (opt.max_iter < 1) throw Error("solver max_iter must be ≥ 1");
}

// Solves on (α, τ) of size n; returns a filled Selection in coordinates of that size.
Selection solve(const std::vector<double>& alpha, const std::vector<double>& tau,
                const SelectOptions& opt, const std::vector<double>& weights) {
  check_options(opt);
  const size_t n = alpha.size();
  const double log_l = std::log(opt.lambda);
  const double U = 2.0 * std::log(opt.clip);
  if (!weights.empty() && weights.size() != n)
    throw Error("penalty weights have " + std::to_string(weights.size()) + " entries for " +
                std::to_string(n) + " coordinates");
  Problem pb{alpha, tau, U, {}};
  CoreResult core = solve_kkt_bisection(pb, opt.max_iter);
  if (opt.magnitude_weight > 0) {
    // ν‖q‖² = ν Σ w_j u_j² / (2 log λ)².
    pb.kappa.assign(n, 0.0);
    for (size_t j = 0; j < n; ++j)
      pb.kappa[j] =
          opt.magnitude_weight * (weights.empty() ? 1.0 : weights[j]) / (4 * log_l * log_l);
    // Start from the unpenalised optimum shifted to min u = 0.
    std::vector<double> u0 = core.u;
    CoreResult pn = solve_projected_newton(pb, u0, opt.tol, opt.max_iter);
    pn.iterations += core.iterations;
    core = std::move(pn);
  } else {
    // Gauge representative: min q = 0 over coordinates that carry mass.
    double m = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j)
      if (alpha[j] > 0 || tau[j] > 0) m = std::min(m, core.u[j]);
    if (std::isfinite(m))
      for (size_t j = 0; j < n; ++j)
        if (alpha[j] > 0 || tau[j] > 0) core.u[j] -= m;
  }
  Selection s;
  s.method = core.method;
  s.iterations = core.iterations;
  s.q_max = std::log(opt.clip) / log_l;
  s.q.resize(n);
  s.multipliers.resize(n);
  for (size_t j = 0; j < n; ++j) {
    s.q[j] = std::clamp(core.u[j] / (2 * log_l), 0.0, s.q_max);
    s.multipliers[j] = std::exp(core.u[j] / 2);  // λ^{q} = e^{u/2}
  }
  std::vector<double> g;
  s.log_lambda = log_lambda_u(alpha, tau, core.u, &g);
  s.lambda_c = std::exp(s.log_lambda);
  s.gain = std::exp(-s.log_lambda);
  s.objective = s.log_lambda;
  // KKT residual in q units: ∇_q = 2 log λ ∇_u log Λ + 2 ν w q.
  double res = 0;
  for (size_t j = 0; j < n; ++j) {
    double w = weights.empty() ? 1.0 : weights[j];
    double gq = 2 * log_l * g[j] + 2 * opt.magnitude_weight * w * s.q[j];
    res = std::max(res, std::abs(s.q[j] - std::clamp(s.q[j] - gq, 0.0, s.q_max)));
    s.objective += opt.magnitude_weight * w * s.q[j] * s.q[j];
  }
  s.kkt_residual = res;
  s.converged = core.converged;
  for (size_t j = 0; j < n; ++j)
    if (alpha[j] <= 0 || tau[j] <= 0) s.deleted.push_back(static_cast<int>(j));
  return s;
}

}  // namespace

Selection select_educated(const Profiles& p, const SelectOptions& opt,
                          const std::vector<double>& penalty_weights) {
  validate(p);
  Selection s = solve(p.alpha, p.tau, opt, penalty_weights);
  if (p.has_levels()) {
    auto off = p.level_offsets();
    s.level_grades.assign(p.levels(), 0.0);
    for (int l = 0; l < p.levels(); ++l) {
      for (int j = off[l]; j < off[l + 1]; ++j) s.level_grades[l] += s.q[j];
      s.level_grades[l] /= p.level_dims[l];
    }
  }
  return s;
}

Selection select_levels(const Profiles& p, const SelectOptions& opt) {
  validate(p);
  if (!p.has_levels())
    throw Error(
        "the level-reduced program (Prop. 11) needs level structure; give level_dims or use the "
        "per-coordinate program");
  std::vector<double> w(p.level_dims.begin(), p.level_dims.end());
  Selection lv = solve(p.level_alpha(), p.level_tau(), opt, w);
  Selection s = lv;
  s.level_grades = lv.q;
  auto off = p.level_offsets();
  s.q.assign(p.d(), 0.0);
  s.multipliers.assign(p.d(), 1.0);
  for (int l = 0; l < p.levels(); ++l)
    for (int j = off[l]; j < off[l + 1]; ++j) {
      s.q[j] = lv.q[l];
      s.multipliers[j] = lv.multipliers[l];
    }
  // Λ on the coordinates equals Λ_L on the levels only for stratified profiles; report the former.
  s.log_lambda = std::log(lambda_of(p.alpha, p.tau, s.q, opt.lambda));
  s.lambda_c = std::exp(s.log_lambda);
  s.gain = 1.0 / s.lambda_c;
  s.deleted.clear();
  for (int j = 0; j < p.d(); ++j)
    if (p.alpha[j] <= 0 || p.tau[j] <= 0) s.deleted.push_back(j);
  return s;
}

GeometricSummary geometric_summary(double nu, double mu, int levels, double lambda, double clip) {
  validate_base_and_clip(lambda, clip);
  Profiles p = geometric_profiles(nu, mu, levels);
  SelectOptions opt;
  opt.lambda = lambda;
  opt.clip = clip;
  Selection s = select_levels(p, opt);
  GeometricSummary g;
  g.a = p.alpha;
  g.s = p.tau;
  g.bc = bhattacharyya(p.alpha, p.tau);
  g.lambda_star = g.bc * g.bc;
  g.lambda_c = s.lambda_c;
  g.gain = 1.0 / s.lambda_c;
  g.clip_bound = 1.0 / (clip * clip);
  g.v = s.level_grades;
  g.g = s.multipliers;
  g.kkt_residual = s.kkt_residual;
  return g;
}

}  // namespace gllm::grading
