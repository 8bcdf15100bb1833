// Closed forms of the admissible cone (seed 000 Prop. 7, 8, 10, Rem. 9): Λ(0) = 1, gauge
// invariance, min Λ = BC², convexity of log Λ, finite-difference gradients, the clip bound, and bad
// input.
#include <QtTest>
#include <cmath>
#include <random>

#include "engine/grading/cone.h"
#include "engine/grading/profiles.h"
#include "engine/io/error.h"

using namespace gllm::grading;

namespace {

Profiles random_profiles(int d, uint32_t seed, int levels = 0) {
  std::mt19937 rng(seed);
  std::gamma_distribution<double> gam(0.7, 1.0);
  std::vector<double> a(d), t(d);
  for (int j = 0; j < d; ++j) {
    a[j] = gam(rng) + 1e-6;
    t[j] = gam(rng) + 1e-6;
  }
  Profiles p;
  p.alpha = normalized(a, "a");
  p.tau = normalized(t, "t");
  if (levels > 0) {
    p.level_dims.assign(levels, d / levels);
    p.level_dims.back() += d - (d / levels) * levels;
  }
  return p;
}

std::vector<double> random_grades_vec(int d, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> q(d);
  for (double& x : q) x = u(rng);
  return q;
}

// Direct, unstabilised Λ for reference.
double lambda_direct(const Profiles& p, const std::vector<double>& q, double lam) {
  double A = 0, T = 0;
  for (int j = 0; j < p.d(); ++j) {
    A += p.alpha[j] * std::pow(lam, -2 * q[j]);
    T += p.tau[j] * std::pow(lam, 2 * q[j]);
  }
  return A * T;
}

template <class F>
bool throws_error(F f, const char* needle = nullptr) {
  try {
    f();
  } catch (const gllm::Error& e) {
    return !needle || std::string(e.what()).find(needle) != std::string::npos;
  }
  return false;
}

}  // namespace

class TestGradingCone : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void uniformIsOne() {
    auto p = random_profiles(37, 1);
    auto r = evaluate_cone(p, std::vector<double>(37, 0.0), std::exp(1.0 / 64), 2.0);
    QVERIFY(std::abs(r.lambda_q - 1) < 1e-14);
    QVERIFY(std::abs(r.log_lambda) < 1e-14);
    QCOMPARE(r.certificate_sign, 0);
    QVERIFY(!r.in_cone);
    // Gradient at q = 0 is 2 log λ (τ − α) (Prop. 8(iii)).
    for (int j = 0; j < 37; ++j)
      QVERIFY(std::abs(r.gradient[j] - 2.0 / 64 * (p.tau[j] - p.alpha[j])) < 1e-14);
  }

  void matchesDirectFormula() {
    auto p = random_profiles(50, 2);
    double lam = 1.3;
    auto q = random_grades_vec(50, 3, 0, 2);
    auto r = evaluate_cone(p, q, lam, 4.0);
    double ref = lambda_direct(p, q, lam);
    QVERIFY(std::abs(r.lambda_q - ref) < 1e-12 * ref);
    QVERIFY(std::abs(r.gain - 1 / ref) < 1e-12 / ref);
    double cert = 0, bc = 0;
    for (int j = 0; j < 50; ++j) {
      cert += q[j] * (p.alpha[j] - p.tau[j]);
      bc += std::sqrt(p.alpha[j] * p.tau[j]);
    }
    QVERIFY(std::abs(r.certificate - cert) < 1e-14);
    QCOMPARE(r.certificate_sign, cert > 0 ? 1 : -1);
    QVERIFY(std::abs(r.bc - bc) < 1e-14);
    QVERIFY(std::abs(r.lambda_star - bc * bc) < 1e-14);
    QVERIFY(std::abs(r.clip_bound - 1.0 / 16) < 1e-15);
    QVERIFY(std::abs(r.q_max - std::log(4.0) / std::log(lam)) < 1e-12);
    QCOMPARE(r.in_cone, ref < 1);
    // The box [0, q_max]: these grades lie inside; one past either end does not.
    QVERIFY(*std::max_element(q.begin(), q.end()) < r.q_max);
    QVERIFY(r.within_clip);
    for (double bad : {-0.25, r.q_max * 1.01}) {
      auto q2 = q;
      q2[17] = bad;
      QVERIFY2(!evaluate_cone(p, q2, lam, 4.0).within_clip, std::to_string(bad).c_str());
    }
    auto q3 = q;
    q3[3] = r.q_max;  // the edge belongs to the box
    q3[4] = 0;
    QVERIFY(evaluate_cone(p, q3, lam, 4.0).within_clip);
  }

  void gaugeInvariance() {
    auto p = random_profiles(64, 4);
    double lam = std::exp(1.0 / 16);
    auto q = random_grades_vec(64, 5, 0, 3);
    double base = evaluate_cone(p, q, lam, 2).log_lambda;
    for (double c : {-7.5, -1.0, 0.25, 3.0, 40.0}) {
      auto q2 = q;
      for (double& x : q2) x += c;
      QVERIFY2(std::abs(evaluate_cone(p, q2, lam, 2).log_lambda - base) < 1e-12,
               std::to_string(c).c_str());
    }
    // The uniform grade c·1 has certificate 0 and Λ = 1 for every c.
    auto r = evaluate_cone(p, std::vector<double>(64, 5.0), lam, 2);
    QCOMPARE(r.certificate_sign, 0);
    QVERIFY(std::abs(r.lambda_q - 1) < 1e-12);
  }

  void minimumIsBcSquared() {
    // Prop. 7(iii): the unconstrained minimiser g_j ∝ (α_j/τ_j)^{1/4} attains BC², and no grade
    // vector goes below it.
    auto p = random_profiles(30, 6);
    double lam = 1.7;
    std::vector<double> q(30);
    for (int j = 0; j < 30; ++j) q[j] = 0.25 * std::log(p.alpha[j] / p.tau[j]) / std::log(lam);
    auto r = evaluate_cone(p, q, lam, 1e9);
    QVERIFY(std::abs(r.lambda_q - r.lambda_star) < 1e-12);
    for (uint32_t s = 0; s < 200; ++s) {
      auto qq = random_grades_vec(30, 100 + s, -3, 3);
      QVERIFY(evaluate_cone(p, qq, lam, 1e9).lambda_q >= r.lambda_star - 1e-12);
    }
  }

  void clipBound() {
    // Prop. 10(iii): inside the box, Λ ≥ C⁻².
    auto p = random_profiles(20, 7);
    double lam = 1.1, C = 3.0;
    double qmax = q_max_for(lam, C);
    for (uint32_t s = 0; s < 300; ++s) {
      auto q = random_grades_vec(20, 1000 + s, 0, qmax);
      auto r = evaluate_cone(p, q, lam, C);
      QVERIFY(r.within_clip);
      QVERIFY(r.lambda_q >= 1 / (C * C) - 1e-14);
      QVERIFY(r.lambda_q >= r.lambda_star - 1e-14);
    }
  }

  void convexAlongSegments() {
    auto p = random_profiles(40, 8);
    double lam = 1.2;
    for (uint32_t s = 0; s < 50; ++s) {
      auto x = random_grades_vec(40, 2000 + s, -5, 5);
      auto y = random_grades_vec(40, 3000 + s, -5, 5);
      double fx = evaluate_cone(p, x, lam, 2).log_lambda,
             fy = evaluate_cone(p, y, lam, 2).log_lambda;
      for (double t : {0.1, 0.3, 0.5, 0.77, 0.9}) {
        std::vector<double> z(40);
        for (int j = 0; j < 40; ++j) z[j] = (1 - t) * x[j] + t * y[j];
        double fz = evaluate_cone(p, z, lam, 2).log_lambda;
        QVERIFY2(fz <= (1 - t) * fx + t * fy + 1e-12, "log Λ is not convex along a segment");
      }
    }
  }

  void finiteDifferenceGradient() {
    auto p = random_profiles(25, 9);
    double lam = 1.5;
    auto q = random_grades_vec(25, 10, 0, 2);
    auto r = evaluate_cone(p, q, lam, 2);
    const double h = 1e-6;
    for (int j = 0; j < 25; ++j) {
      auto qp = q, qm = q;
      qp[j] += h;
      qm[j] -= h;
      double fd =
          (evaluate_cone(p, qp, lam, 2).log_lambda - evaluate_cone(p, qm, lam, 2).log_lambda) /
          (2 * h);
      QVERIFY2(std::abs(fd - r.gradient[j]) < 1e-8, std::to_string(j).c_str());
    }
  }

  void levelConstantMatchesCoordinates() {
    // Rem. 9 / Prop. 11: on stratified profiles a level-constant q gives Λ_L(v) and the
    // certificate Σ v_l (a_l − s_l).
    auto p = geometric_profiles(0.6, 0.3, 4, {3, 5, 2, 6});
    std::vector<double> v{0.0, 1.0, 2.5, 4.0};
    std::vector<double> q;
    for (int l = 0; l < 4; ++l)
      for (int k = 0; k < p.level_dims[l]; ++k) q.push_back(v[l]);
    double lam = 1.1;
    auto rl = evaluate_cone_levels(p, v, lam, 2);
    auto rq = evaluate_cone(p, q, lam, 2);
    QVERIFY(std::abs(rl.lambda_q - rq.lambda_q) < 1e-13);
    QVERIFY(std::abs(rl.certificate - rq.certificate) < 1e-13);
    QVERIFY(std::abs(rl.bc - rq.bc) < 1e-13);  // BC(α, τ) = BC(a, s) (Cor. 3)
    QCOMPARE(static_cast<int>(rl.gradient.size()), 4);
    // Affine increasing level grades are admissible under geometric profiles (Rem. 9).
    for (auto nm : std::vector<std::pair<double, double>>{{0.5, 0.2}, {0.9, 0.8}, {0.3, 0.9}}) {
      auto g = geometric_profiles(nm.first, nm.second, 5);
      auto r = evaluate_cone_levels(g, {0, 1, 2, 3, 4}, 1.05, 2);
      QVERIFY(r.certificate > 0);
    }
  }

  void badInput() {
    auto p = random_profiles(4, 11);
    std::vector<double> q(4, 0.0);
    QVERIFY(throws_error([&] { evaluate_cone(p, q, 1.0, 2); }, "> 1"));
    QVERIFY(throws_error([&] { evaluate_cone(p, q, 0.5, 2); }));
    QVERIFY(throws_error([&] { evaluate_cone(p, q, 1.1, 1.0); }, "clip"));
    QVERIFY(throws_error([&] { evaluate_cone(p, q, 1.1, std::nan("")); }));
    QVERIFY(throws_error([&] { evaluate_cone(p, {0, 0, 0}, 1.1, 2); }, "entries"));
    QVERIFY(throws_error([&] { evaluate_cone(p, {0, 0, std::nan(""), 0}, 1.1, 2); }, "finite"));
    Profiles bad = p;
    bad.alpha[0] = -0.1;
    QVERIFY(throws_error([&] { evaluate_cone(bad, q, 1.1, 2); }, "negative"));
    bad = p;
    bad.tau[1] = std::nan("");
    QVERIFY(throws_error([&] { evaluate_cone(bad, q, 1.1, 2); }, "finite"));
    bad = p;
    bad.tau.pop_back();
    QVERIFY(throws_error([&] { evaluate_cone(bad, q, 1.1, 2); }, "entries"));
    bad = p;
    bad.alpha[0] += 0.5;
    QVERIFY(throws_error([&] { evaluate_cone(bad, q, 1.1, 2); }, "sums to"));
    Profiles empty;
    QVERIFY(throws_error([&] { evaluate_cone(empty, {}, 1.1, 2); }, "empty"));
    QVERIFY(throws_error([&] { evaluate_cone_levels(p, {0, 1}, 1.1, 2); }, "level"));
  }

  void coneAndFirstOrderTestAreDifferentStatements() {
    // d = 2, α = (0.6, 0.4), τ = (0.4, 0.6), q = (q_0, 0) with λ^{2 q_0} = x:
    // Λ = (0.6/x + 0.4)(0.4x + 0.6) = 0.48 + 0.36/x + 0.16x and ⟨q, α−τ⟩ = 0.2 q_0 > 0.
    Profiles p;
    p.alpha = {0.6, 0.4};
    p.tau = {0.4, 0.6};
    const double lambda = std::exp(0.5);
    auto at = [&](double x) {
      const double q0 = std::log(x) / (2 * std::log(lambda));
      return evaluate_cone(p, {q0, 0.0}, lambda, 100.0);
    };
    const ConeReport near = at(1.5), far = at(4.0);
    QVERIFY(std::abs(near.lambda_q - (0.48 + 0.36 / 1.5 + 0.16 * 1.5)) < 1e-12);
    QVERIFY(std::abs(far.lambda_q - 1.21) < 1e-12);
    QCOMPARE(int(cone_verdict(near.lambda_q, near.certificate)), int(ConeVerdict::InCone));
    // Positive to first order yet Λ = 1.21 ≥ 1: outside the cone, and the text says both.
    QVERIFY(far.certificate > 0);
    QCOMPARE(int(cone_verdict(far.lambda_q, far.certificate)), int(ConeVerdict::FirstOrderOnly));
    QCOMPARE(cone_verdict_text(far.lambda_q, far.certificate),
             std::string("first-order positive, outside the cone (Λ ≥ 1)"));
    const ConeReport back =
        evaluate_cone(p, {0.0, std::log(4.0) / (2 * std::log(lambda))}, lambda, 100.0);
    QVERIFY(back.certificate < 0 && back.lambda_q > 1);
    QCOMPARE(cone_verdict_key(back.lambda_q, back.certificate), std::string("outside"));
    QCOMPARE(cone_verdict_text(1.0, 0.0), std::string("on the boundary (q = 0, Λ = 1)"));
  }
};

QTEST_APPLESS_MAIN(TestGradingCone)
#include "test_grading_cone.moc"
