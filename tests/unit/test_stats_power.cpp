// Power of the paired t-test and the seeds it needs, against Cohen's published sample sizes for
// the paired (one-sample) t-test at α = 0.05 two-sided, 80 % power, and against closed forms.
#include <QtTest>
#include <cmath>

#include "engine/stats/power.h"

using namespace gllm::stats;

class TestStatsPower : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void normalCdf() {
    QVERIFY(std::abs(normal_cdf(0) - 0.5) < 1e-15);
    QVERIFY(std::abs(normal_cdf(1.959963984540054) - 0.975) < 1e-12);
    QVERIFY(std::abs(normal_cdf(-0.8416212335729143) - 0.2) < 1e-12);
  }

  void cohenSampleSizes() {
    // Cohen (1988), Table 2.4.1 for the one-sample/paired t-test: d = 1 → 10, d = 0.8 → 15,
    // d = 0.5 → 34 pairs (exact noncentral-t figures; G*Power gives the same).
    QCOMPARE(seeds_for_power(1.0, 1.0), 10);
    QCOMPARE(seeds_for_power(0.8, 1.0), 15);
    QCOMPARE(seeds_for_power(0.5, 1.0), 34);
    // The effect's sign does not matter, its scale relative to the SD does.
    QCOMPARE(seeds_for_power(-0.005, 0.005), 10);
  }

  void powerClosedForm() {
    // Φ(δ√n/σ − t_{0.975,n−1}) + Φ(−δ√n/σ − t): n = 10, δ/σ = 1, t = 2.262157.
    const double t = 2.2621571627409915, s = std::sqrt(10.0);
    const double expect = normal_cdf(s - t) + normal_cdf(-s - t);
    QVERIFY(std::abs(paired_t_power(1.0, 1.0, 10) - expect) < 1e-9);
    QVERIFY(std::abs(paired_t_power(1.0, 1.0, 10) - 0.8031) < 0.015);  // exact noncentral t
    // No effect: 2Φ(−t), below α — the approximation errs towards asking for more seeds.
    QVERIFY(std::abs(paired_t_power(0.0, 1.0, 10) - 2 * normal_cdf(-t)) < 1e-9);
    QVERIFY(paired_t_power(0.0, 1.0, 10) < 0.05);
    QCOMPARE(paired_t_power(1.0, 1.0, 1), 0.0);
  }

  void outOfReach() {
    QCOMPARE(seeds_for_power(0.01, 1.0, 0.8, 0.05, 1000), 0);  // needs ~78,500
    QCOMPARE(seeds_for_power(0.0, 1.0), 0);
    QCOMPARE(seeds_for_power(1.0, 1.0, 0.8, 0.05, 9), 0);  // 10 are needed
  }
};

QTEST_APPLESS_MAIN(TestStatsPower)
#include "test_stats_power.moc"
