// §8.1.3 parameter overhead at GLLM-Medium and GLLM-7B: the paper's components (1.05M + 24.6K +
// 1K + 50.3K; 16.8M + 131K + 4K + 32K), their totals, the fractions 0.33 % and 0.24 %, and errors.
#include <QtTest>
#include <cmath>

#include "engine/grading/overhead.h"
#include "engine/io/error.h"

using namespace gllm::grading;

class TestGradingOverhead : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void medium() {
    auto o = compute_overhead({1024, 24, 16, 4, 50257, 345000000});
    QCOMPARE(o.head_dim, int64_t(64));
    QCOMPARE(round_significant(o.projections, 3), int64_t(1050000));  // 1.05M
    QCOMPARE(round_significant(o.head_grades, 3), int64_t(24600));    // 24.6K
    QCOMPARE(o.level_grades, int64_t(1024));                          // 1K
    QCOMPARE(round_significant(o.output_grades, 3), int64_t(50300));  // 50.3K
    QCOMPARE(o.total, int64_t(1124433));
    QCOMPARE(std::round(o.total_rounded_components / 1e4) / 100, 1.13);  // "≈ 1.13M"
    QCOMPARE(std::round(o.fraction * 1e4) / 100, 0.33);                  // 0.33 %
  }
  void sevenB() {
    auto o = compute_overhead({4096, 32, 32, 4, 32000, 7000000000LL});
    QCOMPARE(round_significant(o.projections, 3), int64_t(16800000));  // 16.8M
    QCOMPARE(round_significant(o.head_grades, 3), int64_t(131000));    // 131K
    QCOMPARE(o.level_grades, int64_t(4096));                           // 4K
    QCOMPARE(o.output_grades, int64_t(32000));                         // 32K
    QCOMPARE(o.total, int64_t(16944384));
    QCOMPARE(std::round(o.total_rounded_components / 1e5) / 10, 17.0);  // "≈ 17.0M"
    QCOMPARE(std::round(o.fraction * 1e4) / 100, 0.24);                 // 0.24 %
  }
  void roundSignificant() {
    QCOMPARE(round_significant(1048576, 3), int64_t(1050000));
    QCOMPARE(round_significant(999, 2), int64_t(1000));
    QCOMPARE(round_significant(7, 3), int64_t(7));
    QCOMPARE(round_significant(0, 3), int64_t(0));
  }
  void errors() {
    QVERIFY_THROWS_EXCEPTION(gllm::Error,
                             compute_overhead({1000, 24, 16, 4, 10, 100}));  // 16 ∤ 1000
    QVERIFY_THROWS_EXCEPTION(gllm::Error, compute_overhead({0, 24, 16, 4, 10, 100}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, compute_overhead({64, 2, 4, 4, 10, 0}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, compute_overhead({64, 2, 4, 100, 10, 1000}));
  }
};

QTEST_APPLESS_MAIN(TestGradingOverhead)
#include "test_grading_overhead.moc"
