// The educated grading q*_C against independent references: brute-force grids at small d and L,
// min Λ = BC² unclipped, the Prop. 10 bound, seed 000 Table 3 to the printed digits, and d = 4096.
#include <QtTest>
#include <cmath>
#include <random>

#include "engine/grading/cone.h"
#include "engine/grading/profiles.h"
#include "engine/grading/select.h"
#include "engine/io/error.h"

using namespace gllm::grading;

namespace {

Profiles random_profiles(int d, uint32_t seed, double shape = 0.7) {
  std::mt19937 rng(seed);
  std::gamma_distribution<double> gam(shape, 1.0);
  std::vector<double> a(d), t(d);
  for (int j = 0; j < d; ++j) {
    a[j] = gam(rng) + 1e-4;
    t[j] = gam(rng) + 1e-4;
  }
  Profiles p;
  p.alpha = normalized(a, "a");
  p.tau = normalized(t, "t");
  return p;
}

// Penalised objective, computed directly.
double objective(const Profiles& p, const std::vector<double>& q, double lam, double nu,
                 const std::vector<double>& w = {}) {
  double A = 0, T = 0, pen = 0;
  for (int j = 0; j < p.d(); ++j) {
    A += p.alpha[j] * std::pow(lam, -2 * q[j]);
    T += p.tau[j] * std::pow(lam, 2 * q[j]);
    pen += (w.empty() ? 1.0 : w[j]) * q[j] * q[j];
  }
  return std::log(A * T) + nu * pen;
}

// Minimum over a uniform grid of the box [0, qmax]^d (d = 2 or 3).
double grid_min(const Profiles& p, double lam, double qmax, double nu, int n,
                const std::vector<double>& w = {}) {
  double best = 1e300;
  const int d = p.d();
  std::vector<int> idx(d, 0);
  std::vector<double> q(d);
  while (true) {
    for (int j = 0; j < d; ++j) q[j] = qmax * idx[j] / (n - 1);
    best = std::min(best, objective(p, q, lam, nu, w));
    int k = 0;
    while (k < d && ++idx[k] == n) idx[k++] = 0;
    if (k == d) break;
  }
  return best;
}

double round_to(double x, int digits) {
  double s = std::pow(10.0, digits);
  return std::round(x * s) / s;
}

}  // namespace

class TestGradingSelect : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void bruteForceSmallD() {
    const double lam = 1.3, C = 2.0;
    const double qmax = q_max_for(lam, C);
    for (int d : {2, 3}) {
      for (uint32_t seed = 1; seed <= 12; ++seed) {
        for (double nu : {0.0, 0.05, 1.0}) {
          auto p = random_profiles(d, seed * 7 + d, 0.4);
          SelectOptions o;
          o.lambda = lam;
          o.clip = C;
          o.magnitude_weight = nu;
          auto s = select_educated(p, o);
          QVERIFY2(s.converged, (s.method + " it=" + std::to_string(s.iterations) + " kkt=" +
                                 std::to_string(s.kkt_residual) + " nu=" + std::to_string(nu))
                                    .c_str());
          QVERIFY2(s.kkt_residual < 1e-8, std::to_string(s.kkt_residual).c_str());
          for (double x : s.q) QVERIFY(x >= 0 && x <= qmax + 1e-12);
          double f = objective(p, s.q, lam, nu);
          QVERIFY(std::abs(f - s.objective) < 1e-12);
          int n = d == 2 ? 301 : 61;
          double g = grid_min(p, lam, qmax, nu, n);
          QVERIFY2(
              f <= g + 1e-12,
              ("solver above the grid: " + std::to_string(f) + " > " + std::to_string(g)).c_str());
          // The grid gets within its resolution of the optimum: the solver is not far below it.
          QVERIFY2(g - f < 2e-3, ("grid far above the solver at d=" + std::to_string(d)).c_str());
          if (nu == 0) {
            double mn = *std::min_element(s.q.begin(), s.q.end());
            QVERIFY(std::abs(mn) < 1e-15);  // gauge representative min q = 0
          }
        }
      }
    }
  }

  void bruteForceLevels() {
    // Prop. 11: the L-level program on (a, s) equals the per-coordinate program on stratified
    // profiles, and both beat every grid point of the level box.
    const double lam = 1.2, C = 2.5;
    const double qmax = q_max_for(lam, C);
    for (int L : {2, 3}) {
      for (uint32_t seed = 1; seed <= 8; ++seed) {
        auto lvl = random_profiles(L, 100 + seed, 0.5);
        std::vector<int> dims;
        for (int l = 0; l < L; ++l) dims.push_back(1 + (seed + l) % 4);
        Profiles p;
        p.level_dims = dims;
        for (int l = 0; l < L; ++l)
          for (int k = 0; k < dims[l]; ++k) {
            p.alpha.push_back(lvl.alpha[l] / dims[l]);
            p.tau.push_back(lvl.tau[l] / dims[l]);
          }
        SelectOptions o;
        o.lambda = lam;
        o.clip = C;
        auto sl = select_levels(p, o);
        auto sc = select_educated(p, o);
        QVERIFY(std::abs(sl.lambda_c - sc.lambda_c) < 1e-12);
        for (int j = 0; j < p.d(); ++j) QVERIFY(std::abs(sl.q[j] - sc.q[j]) < 1e-8);
        Profiles lp = p.level_profiles();
        double g = grid_min(lp, lam, qmax, 0.0, L == 2 ? 401 : 81);
        QVERIFY(std::log(sl.lambda_c) <= g + 1e-12);
        QVERIFY(g - std::log(sl.lambda_c) < 2e-3);
        // With a penalty the level program weighs level l by d_l (the full penalty on a
        // level-constant q).
        o.magnitude_weight = 0.3;
        auto slp = select_levels(p, o);
        auto scp = select_educated(p, o);
        QVERIFY2(std::abs(slp.objective - scp.objective) < 1e-10,
                 (std::to_string(slp.objective) + " vs " + std::to_string(scp.objective)).c_str());
        std::vector<double> w(dims.begin(), dims.end());
        double gp = grid_min(lp, lam, qmax, 0.3, L == 2 ? 401 : 81, w);
        QVERIFY(slp.objective <= gp + 1e-12);
      }
    }
  }

  void unclippedReachesBcSquared() {
    // Cor. 4 / Prop. 7(iii): with the clip open, min Λ = BC², at q_j = ¼ log(α_j/τ_j)/log λ + c.
    auto p = random_profiles(200, 5);
    SelectOptions o;
    o.lambda = std::exp(1.0 / 64);
    o.clip = 1e12;
    auto s = select_educated(p, o);
    double bc = bhattacharyya(p.alpha, p.tau);
    QVERIFY2(std::abs(s.lambda_c - bc * bc) < 1e-12,
             (std::to_string(s.lambda_c) + " vs " + std::to_string(bc * bc)).c_str());
    double c = s.q[0] - 0.25 * std::log(p.alpha[0] / p.tau[0]) * 64;
    for (int j = 0; j < 200; ++j)
      QVERIFY(std::abs(s.q[j] - (0.25 * std::log(p.alpha[j] / p.tau[j]) * 64 + c)) < 1e-6);
  }

  void prop10Bound() {
    for (uint32_t seed = 0; seed < 20; ++seed) {
      auto p = random_profiles(64, 300 + seed, 0.3);
      for (double C : {1.2, 1.5, 2.0, 4.0}) {
        SelectOptions o;
        o.lambda = 1.05;
        o.clip = C;
        auto s = select_educated(p, o);
        double bc = bhattacharyya(p.alpha, p.tau);
        QVERIFY(s.lambda_c >= std::max(bc * bc, 1 / (C * C)) - 1e-12);
        QVERIFY(s.lambda_c <= 1 + 1e-12);  // q = 0 is feasible
        QVERIFY(s.kkt_residual < 1e-8);
        // Saturated form (Prop. 10(ii)): interior coordinates share q_j − ¼ log(α_j/τ_j)/log λ.
        double qmax = q_max_for(1.05, C), c = std::nan("");
        for (int j = 0; j < 64; ++j) {
          if (s.q[j] > 1e-9 && s.q[j] < qmax - 1e-9) {
            double cj = s.q[j] - 0.25 * std::log(p.alpha[j] / p.tau[j]) / std::log(1.05);
            if (std::isnan(c)) c = cj;
            QVERIFY(std::abs(cj - c) < 1e-6);
          }
        }
      }
    }
  }

  void table3() {
    // Seed 000 Table 3 (L = 4, C = 2). Λ* is printed as BC² (0.279 = 0.5282²), not BC.
    struct Row {
      double nu, mu, lambda_star, lambda_c, gain;
      std::vector<double> g;
    };
    std::vector<Row> rows{{0.5, 0.2, 0.279, 0.424, 2.36, {1.00, 1.31, 2.00, 2.00}},
                          {0.6, 0.3, 0.459, 0.531, 1.88, {1.00, 1.30, 2.00, 2.00}},
                          {0.7, 0.3, 0.534, 0.582, 1.72, {1.00, 1.32, 1.95, 2.00}},
                          {0.8, 0.4, 0.700, 0.708, 1.41, {1.00, 1.27, 1.69, 2.00}}};
    for (auto& row : rows) {
      for (double lam : {std::exp(1.0 / 64), 1.5}) {  // g, Λ do not depend on λ
        auto s = geometric_summary(row.nu, row.mu, 4, lam, 2.0);
        QCOMPARE(round_to(s.lambda_star, 3), row.lambda_star);
        QCOMPARE(round_to(s.bc * s.bc, 3), row.lambda_star);
        QCOMPARE(round_to(s.lambda_c, 3), row.lambda_c);
        QCOMPARE(round_to(s.gain, 2), row.gain);
        for (int l = 0; l < 4; ++l) QCOMPARE(round_to(s.g[l], 2), row.g[l]);
        QVERIFY(s.kkt_residual < 1e-9);
        // Prop. 10(iii) is a lower bound and not tight here (§7.6).
        QVERIFY(s.lambda_c > std::max(s.lambda_star, 0.25));
      }
    }
    // The closed form of Cor. 3 for BC(a, s).
    for (auto& row : rows) {
      double r = std::sqrt(row.mu / row.nu), Za = 0, Zs = 0;
      for (int l = 0; l < 4; ++l) {
        Za += std::pow(row.nu, 3 - l);
        Zs += std::pow(row.mu, l);
      }
      double bc = std::pow(row.nu, 1.5) / std::sqrt(Za * Zs) * (1 - std::pow(r, 4)) / (1 - r);
      QVERIFY(std::abs(geometric_summary(row.nu, row.mu, 4, 1.1, 2).bc - bc) < 1e-14);
    }
  }

  void anyLevelsAndClip() {
    for (int L : {1, 2, 5, 9})
      for (double C : {1.01, 1.5, 3.0, 100.0}) {
        auto s = geometric_summary(0.6, 0.4, L, 1.1, C);
        QVERIFY(s.lambda_c >= std::max(s.lambda_star, 1 / (C * C)) - 1e-12);
        QVERIFY(s.lambda_c <= 1 + 1e-12);
        QVERIFY(std::abs(s.g[0] - 1) < 1e-12);
        QVERIFY(s.kkt_residual < 1e-8);
        if (L == 1) QVERIFY(std::abs(s.lambda_c - 1) < 1e-14);
      }
  }

  void largeD() {
    auto p = random_profiles(4096, 77);
    SelectOptions o;
    o.lambda = std::exp(1.0 / 128);
    o.clip = 2;
    auto s = select_educated(p, o);
    QVERIFY(s.converged);
    QVERIFY2(s.kkt_residual < 1e-7, std::to_string(s.kkt_residual).c_str());
    o.magnitude_weight = 1e-4;
    auto sp = select_educated(p, o);
    QVERIFY(sp.converged);
    QVERIFY2(sp.kkt_residual < 1e-7, std::to_string(sp.kkt_residual).c_str());
    // Penalised optimum does no better on log Λ than the unpenalised one, and its objective
    // is no worse than the unpenalised point's penalised objective.
    QVERIFY(sp.log_lambda >= s.log_lambda - 1e-12);
    double pen = 0;
    for (double x : s.q) pen += x * x;
    QVERIFY(sp.objective <= s.log_lambda + 1e-4 * pen + 1e-12);
  }

  void zerosAreDeletedAndReported() {
    Profiles p;
    p.alpha = {0.5, 0.0, 0.3, 0.2, 0.0};
    p.tau = {0.2, 0.4, 0.0, 0.4, 0.0};
    auto del = delete_degenerate(p);
    QCOMPARE(del.deleted, (std::vector<int>{1, 2, 4}));
    QCOMPARE(del.kept, (std::vector<int>{0, 3}));
    QCOMPARE(del.deleted_alpha_zero, (std::vector<int>{1, 4}));
    QCOMPARE(del.deleted_tau_zero, (std::vector<int>{2, 4}));
    QVERIFY(std::abs(del.kept_profiles.alpha[0] - 0.5 / 0.7) < 1e-15);
    QVERIFY(del.summary().find("deleted 3") != std::string::npos);
    SelectOptions o;
    o.lambda = 1.2;
    o.clip = 2;
    auto s = select_educated(p, o);
    QCOMPARE(s.deleted, (std::vector<int>{1, 2, 4}));
    QVERIFY(s.kkt_residual < 1e-9);
    double qmax = q_max_for(1.2, 2);
    QVERIFY(std::abs(s.q[1]) < 1e-12);         // α = 0: lowest grade
    QVERIFY(std::abs(s.q[2] - qmax) < 1e-12);  // τ = 0: highest grade
    // Brute force over the 5-d box on a coarse grid (the 4th coordinate matters too).
    double best = 1e300;
    const int n = 21;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        for (int c = 0; c < n; ++c)
          for (int e = 0; e < n; ++e) {
            std::vector<double> q{qmax * a / (n - 1), qmax * b / (n - 1), qmax * c / (n - 1),
                                  qmax * e / (n - 1), 0};
            best = std::min(best, objective(p, q, 1.2, 0));
          }
    QVERIFY(s.log_lambda <= best + 1e-12);
  }

  void badOptions() {
    auto p = random_profiles(3, 1);
    SelectOptions o;
    o.lambda = 1.0;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, select_educated(p, o));
    o.lambda = 1.1;
    o.clip = 0.9;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, select_educated(p, o));
    o.clip = 2;
    o.magnitude_weight = -1;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, select_educated(p, o));
    o.magnitude_weight = 0;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, select_levels(p, o));  // no levels
    QVERIFY_THROWS_EXCEPTION(gllm::Error, geometric_summary(-0.5, 0.2, 4, 1.1, 2));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, geometric_summary(0.5, 0.2, 0, 1.1, 2));
  }
};

QTEST_APPLESS_MAIN(TestGradingSelect)
#include "test_grading_select.moc"
