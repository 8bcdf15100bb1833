// The selection ladder (seed 000 Table 2) and the bootstrap (§7.2): arms' certificates against
// hand computation, the educated arm's Λ against every other arm, ordering, JSON round trip, and
// bootstrap answers known in closed form.
#include <QtTest>
#include <cmath>
#include <random>

#include "engine/grading/bootstrap.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/grading/select.h"
#include "engine/io/error.h"

using namespace gllm::grading;

namespace {

ProfilesFile stratified_file() {
  ProfilesFile f;
  // Geometric level profiles with a little per-coordinate noise, 4 levels of 3.
  auto base = geometric_profiles(0.6, 0.3, 4, {3, 3, 3, 3});
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.8, 1.2);
  std::vector<double> a = base.alpha, t = base.tau;
  for (auto& x : a) x *= u(rng);
  for (auto& x : t) x *= u(rng);
  f.profiles.alpha = normalized(a, "a");
  f.profiles.tau = normalized(t, "t");
  f.profiles.level_dims = {3, 3, 3, 3};
  f.heldout = base;
  f.pos_grades = {0, 0, 0, 1, 1, 1, 2, 2, 2, 30, 30, 30};
  for (int b = 0; b < 40; ++b) {
    Profiles r = f.profiles;
    for (auto& x : r.alpha) x *= u(rng);
    for (auto& x : r.tau) x *= u(rng);
    r.alpha = normalized(r.alpha, "a");
    r.tau = normalized(r.tau, "t");
    f.bootstrap.push_back(r);
  }
  return f;
}

}  // namespace

class TestGradingLadder : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void arms() {
    auto f = stratified_file();
    LadderOptions o;
    o.lambda = std::exp(1.0 / 8);
    o.clip = 2;
    o.seed = 11;
    auto lad = build_ladder(f, o);
    QCOMPARE(lad.arms.size(), ladder_arm_names().size());  // three random draws
    const double qmax = q_max_for(o.lambda, o.clip);
    const auto& p = f.profiles;
    for (auto& arm : lad.arms) {
      QVERIFY2(arm.available, arm.name.c_str());
      QCOMPARE(static_cast<int>(arm.grades.size()), 12);
      for (double x : arm.grades) QVERIFY(x >= 0 && x <= qmax * (1 + 1e-12));
      // Certificate and Λ recomputed by hand.
      double c = 0;
      for (int j = 0; j < 12; ++j) c += arm.grades[j] * (p.alpha[j] - p.tau[j]);
      QVERIFY(std::abs(arm.certificate - c) < 1e-14);
      QVERIFY(std::abs(arm.lambda_q - lambda_of(p.alpha, p.tau, arm.grades, o.lambda)) < 1e-14);
      QVERIFY(arm.has_heldout);
      // Bootstrap sign fraction by brute force: the share of the 40 resamples whose certificate
      // ⟨q, α_b − τ_b⟩ has the full sample's sign (a zero certificate counts zeros).
      int same = 0;
      for (const auto& b : f.bootstrap) {
        double cb = 0;
        for (int j = 0; j < 12; ++j) cb += arm.grades[j] * (b.alpha[j] - b.tau[j]);
        const int sb = std::abs(cb) <= 1e-9 ? 0 : (cb > 0 ? 1 : -1);
        same += sb == (std::abs(c) <= 1e-9 ? 0 : (c > 0 ? 1 : -1));
      }
      QCOMPARE(arm.bootstrap_sign_fraction, same / 40.0);
    }
    QCOMPARE(lad.arm("uniform").certificate, 0.0);
    QCOMPARE(lad.arm("uniform").sign, 0);
    QCOMPARE(lad.arm("uniform").bootstrap_sign_fraction, 1.0);  // 0 on every resample
    // Taxonomic: affine increasing in level, admissible under geometric-like profiles (Rem. 9).
    auto tax = lad.arm("taxonomic");
    QCOMPARE(tax.grades[0], 0.0);
    QVERIFY(std::abs(tax.grades[11] - qmax) < 1e-12);
    QVERIFY(std::abs(tax.level_grades[1] - qmax / 3) < 1e-12);
    QVERIFY(tax.certificate > 0);
    // POS grades exceed the box (30 > q_max): scaled by q_max / 30, shape kept.
    auto pos = lad.arm("pos");
    QVERIFY(std::abs(pos.grades[11] - qmax) < 1e-12);
    QVERIFY(std::abs(pos.grades[3] - qmax / 30) < 1e-12);
    // Random: reproducible from the seed, different for another seed.
    QCOMPARE(lad.arm("random").grades, random_grades(12, qmax, 11));
    QVERIFY(random_grades(12, qmax, 12) != random_grades(12, qmax, 11));
    // Educated minimises Λ on the box: no arm does better (Prop. 10).
    double edu = lad.arm("educated").lambda_q;
    for (auto& arm : lad.arms) QVERIFY2(edu <= arm.lambda_q + 1e-12, arm.name.c_str());
    // Oracle: the optimum for the held-out profiles, best there.
    double ora = lad.arm("oracle").lambda_q_heldout;
    for (auto& arm : lad.arms) QVERIFY2(ora <= arm.lambda_q_heldout + 1e-12, arm.name.c_str());
    // Order: by certificate, descending; ranks agree.
    QCOMPARE(lad.order.size(), ladder_arm_names().size());
    for (size_t i = 1; i < lad.order.size(); ++i)
      QVERIFY(lad.arm(lad.order[i - 1]).certificate >= lad.arm(lad.order[i]).certificate);
    for (size_t i = 0; i < lad.order.size(); ++i) QCOMPARE(lad.arm(lad.order[i]).rank, int(i + 1));
  }

  void unavailableArmsAndRoundTrip() {
    ProfilesFile f;
    f.profiles.alpha = {0.7, 0.2, 0.1};
    f.profiles.tau = {0.2, 0.3, 0.5};
    LadderOptions o;
    o.lambda = 1.1;
    o.clip = 2;
    auto lad = build_ladder(f, o);
    QVERIFY(!lad.arm("taxonomic").available);
    QVERIFY(!lad.arm("pos").available);
    QVERIFY(!lad.arm("oracle").available);
    QVERIFY(lad.arm("pos").reason.find("pos_grades") != std::string::npos);
    QCOMPARE(lad.order.size(), size_t(3 + kRandomDraws - 1));  // uniform, educated, 3 random
    QTemporaryDir dir;
    std::string path = dir.filePath("ladder.json").toStdString();
    save_ladder_file(path, lad);
    auto back = load_ladder_file(path);
    QCOMPARE(back.order, lad.order);
    QCOMPARE(back.arm("educated").grades, lad.arm("educated").grades);
    QCOMPARE(back.arm("educated").certificate, lad.arm("educated").certificate);
    QVERIFY(!back.arm("oracle").available);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, back.arm("nonsense"));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, ladder_from_json(nlohmann::json{{"format", "x"}}));
    o.clip = 1;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, build_ladder(f, o));
  }

  void percentileRule() {
    QCOMPARE(percentile({4, 1, 3, 2}, 0.5), 2.5);
    QCOMPARE(percentile({4, 1, 3, 2}, 0.25), 1.75);
    QCOMPARE(percentile({4, 1, 3, 2}, 0.0), 1.0);
    QCOMPARE(percentile({4, 1, 3, 2}, 1.0), 4.0);
    QCOMPARE(percentile({7}, 0.3), 7.0);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, percentile({}, 0.5));
  }

  void bootstrapFromResamplesCounts() {
    Profiles full;
    full.alpha = {0.6, 0.4};
    full.tau = {0.4, 0.6};
    std::vector<double> q{1, 0};  // certificate α_0 − τ_0
    std::vector<Profiles> rs;
    for (double a0 : {0.6, 0.55, 0.3, 0.45, 0.7}) {  // certificates 0.2, 0.15, −0.1, 0.05, 0.3
      Profiles r;
      r.alpha = {a0, 1 - a0};
      r.tau = {0.4, 0.6};
      rs.push_back(r);
    }
    auto b = bootstrap_from_resamples(full, rs, q);
    QCOMPARE(b.sign, 1);
    QCOMPARE(b.sign_fraction, 0.8);
    QVERIFY(std::abs(b.certificate - 0.2) < 1e-15);
    QCOMPARE(b.resamples, 5);
    std::vector<double> bcs;
    for (auto& r : rs) bcs.push_back(bhattacharyya(r.alpha, r.tau));
    QCOMPARE(b.bc_low, percentile(bcs, 0.025));
    QCOMPARE(b.bc_high, percentile(bcs, 0.975));
  }

  void bootstrapFromContributionsKnownAnswer() {
    // Two samples. Resamples of size 2 are {r1,r1} (¼), {r1,r2} or {r2,r1} (½), {r2,r2} (¼), whose
    // profiles are those of r1, of the full sample, and of r2. r2 alone flips the sign of the
    // certificate, so the sign survives with probability ¾, and the 95 % BC interval spans the
    // three values' extremes.
    Eigen::MatrixXd A(2, 3), T(2, 3);
    A << 6, 3, 1,           // r1: α-heavy on coordinate 0, certificate +0.35
        1, 3, 1;            // r2: certificate −0.1
    T << 1, 2, 2, 5, 2, 3;  // full sample: certificate +2/15
    std::vector<double> q{1, 0.5, 0};
    auto b = bootstrap_from_contributions(A, T, q, 20000, 7);
    auto cert = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& t) {
      Eigen::VectorXd an = a / a.sum(), tn = t / t.sum();
      return q[0] * (an[0] - tn[0]) + q[1] * (an[1] - tn[1]) + q[2] * (an[2] - tn[2]);
    };
    double c1 = cert(A.row(0).transpose(), T.row(0).transpose());
    double c2 = cert(A.row(1).transpose(), T.row(1).transpose());
    double cf = cert(A.colwise().sum().transpose(), T.colwise().sum().transpose());
    QVERIFY(c1 > 0 && c2 < 0 && cf > 0);
    QVERIFY(std::abs(b.certificate - cf) < 1e-15);
    QCOMPARE(b.sign, 1);
    QVERIFY2(std::abs(b.sign_fraction - 0.75) < 0.015, std::to_string(b.sign_fraction).c_str());
    auto bc_of = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& t) {
      Eigen::VectorXd an = a / a.sum(), tn = t / t.sum();
      return (an.array() * tn.array()).sqrt().sum();
    };
    double b1 = bc_of(A.row(0).transpose(), T.row(0).transpose());
    double b2 = bc_of(A.row(1).transpose(), T.row(1).transpose());
    double bf = bc_of(A.colwise().sum().transpose(), T.colwise().sum().transpose());
    QVERIFY(std::abs(b.bc - bf) < 1e-15);
    QVERIFY(std::abs(b.bc_low - std::min({b1, b2, bf})) < 1e-12);
    QVERIFY(std::abs(b.bc_high - std::max({b1, b2, bf})) < 1e-12);
    // Deterministic in the seed.
    auto again = bootstrap_from_contributions(A, T, q, 20000, 7);
    QCOMPARE(again.sign_fraction, b.sign_fraction);
    // One sample: every resample is the full sample.
    auto one = bootstrap_from_contributions(A.topRows(1), T.topRows(1), q, 50, 1);
    QCOMPARE(one.sign_fraction, 1.0);
    QCOMPARE(one.bc_low, one.bc_high);
    // Errors.
    Eigen::MatrixXd neg = A;
    neg(0, 0) = -1;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, bootstrap_from_contributions(neg, T, q, 10, 1));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, bootstrap_from_contributions(A, T.leftCols(2), q, 10, 1));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, bootstrap_from_contributions(A, T, {1, 0}, 10, 1));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, bootstrap_from_contributions(A, T, q, 0, 1));
  }

  void bootstrapIntervalsHoldTheirEstimate() {
    // Percentile where it holds the estimate; otherwise shifted by the median bias.
    std::vector<double> centred{1, 2, 3, 4, 5, 6, 7, 8, 9};
    const Interval a = bootstrap_interval(5, centred);
    QCOMPARE(a.method, std::string("percentile"));
    QCOMPARE(a.low, percentile(centred, 0.025));
    std::vector<double> above{2.43, 2.6, 2.8, 3.0, 3.1, 3.2, 3.3, 3.51};  // all above 2.40
    const Interval b = bootstrap_interval(2.40, above);
    QCOMPARE(b.method, std::string("median-bias-corrected percentile"));
    const double bias = percentile(above, 0.5) - 2.40;
    QVERIFY(std::abs(b.low - (percentile(above, 0.025) - bias)) < 1e-12);
    QVERIFY(b.low <= 2.40 && 2.40 <= b.high);
    QVERIFY(std::abs((b.high - b.low) - (percentile(above, 0.975) - percentile(above, 0.025))) <
            1e-12);  // the width is the percentile interval's
  }
};

QTEST_APPLESS_MAIN(TestGradingLadder)
#include "test_grading_ladder.moc"
