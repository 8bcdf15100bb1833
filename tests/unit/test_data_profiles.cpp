// Profile estimation pieces against closed forms: graded basis orthonormal and level-ordered, ridge
// probe α̂ concentrating on the coordinate that carries the target, τ̂ from known variances, base
// tags and open classes; and the whole pipeline on the Brown fixture writes a valid profiles file.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/data/corpus.h"
#include "engine/data/level_features.h"
#include "engine/data/profile_estimation.h"
#include "engine/data/splits.h"
#include "engine/grading/profiles.h"
#include "engine/io/error.h"
#include "tests/support/test_support.h"

class TestDataProfiles : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void baseTagsAndClasses() {
    QCOMPARE(gllm::brown_base_tag("nn-tl"), std::string("nn"));
    QCOMPARE(gllm::brown_base_tag("fw-vbd"), std::string("vbd"));
    QCOMPARE(gllm::brown_base_tag("bedz*"), std::string("bedz"));
    QCOMPARE(gllm::brown_base_tag("np$"), std::string("np"));
    QCOMPARE(gllm::brown_base_tag("ppss+md"), std::string("ppss"));
    QCOMPARE(gllm::brown_base_tag("nn-tl-hl"), std::string("nn"));
    QCOMPARE(gllm::brown_base_tag("."), std::string("."));
    QVERIFY(gllm::brown_open_class("nns"));
    QVERIFY(gllm::brown_open_class("vbg"));
    QVERIFY(!gllm::brown_open_class("at"));
    QVERIFY(!gllm::brown_open_class("bedz"));
    QVERIFY(!gllm::brown_open_class("in"));
    gllm::TaggedWord w{"wasn't", "bedz*"};
    QVERIFY(gllm::brown_negation(w));
  }

  void basisOrthonormalAndOrdered() {
    // C_0 has its energy on e_0, e_1; C_1 on e_1 (already taken) and e_2: level 1 must pick e_2.
    const int d = 4;
    Eigen::MatrixXd C0 = Eigen::MatrixXd::Zero(d, d), C1 = Eigen::MatrixXd::Zero(d, d);
    C0(0, 0) = 5;
    C0(1, 1) = 3;
    C1(1, 1) = 10;
    C1(2, 2) = 1;
    auto P = gllm::graded_basis({C0, C1}, {2, 2});
    QVERIFY((P.transpose() * P - Eigen::MatrixXd::Identity(d, d)).cwiseAbs().maxCoeff() < 1e-12);
    QVERIFY(std::fabs(std::fabs(P(0, 0)) - 1) < 1e-9);
    QVERIFY(std::fabs(std::fabs(P(1, 1)) - 1) < 1e-9);
    QVERIFY(std::fabs(std::fabs(P(2, 2)) - 1) < 1e-9);  // not e_1 again
    QVERIFY(std::fabs(std::fabs(P(3, 3)) - 1) < 1e-9);
  }

  void probeAndVarianceClosedForms() {
    gllm::SplitMix64 rng(3);
    const int n = 4000, d = 5;
    Eigen::MatrixXd Z(n, d);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        Z(i, j) = (double(rng.next() >> 11) / 9007199254740992.0 - 0.5) * (j + 1);
    // Target = 2·z_3 − z_1: α̂ ∝ (2², 1²) on coordinates 3 and 1 (ridge → 0).
    Eigen::VectorXd y = 2 * Z.col(3) - Z.col(1);
    auto a = gllm::probe_alpha(Z, y, Eigen::VectorXd::Ones(n), 1e-10);
    QVERIFY(std::fabs(a[3] - 0.8) < 1e-6);
    QVERIFY(std::fabs(a[1] - 0.2) < 1e-6);
    QVERIFY(a[0] < 1e-9 && a[2] < 1e-9 && a[4] < 1e-9);
    // Uniform on [−(j+1)/2, (j+1)/2]: variance ∝ (j+1)²; τ̂_j = (j+1)² / Σ(k+1)² up to sampling
    // error.
    auto tau = gllm::variance_tau(Z, Eigen::VectorXd::Ones(n));
    for (int j = 0; j < d; ++j) QVERIFY(std::fabs(tau[j] - (j + 1) * (j + 1) / 55.0) < 0.01);
    // Integer weights equal duplicated rows.
    Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
    w[0] = 3;
    Eigen::MatrixXd Zd(n + 2, d);
    Zd << Z, Z.row(0), Z.row(0);
    auto t1 = gllm::variance_tau(Z, w), t2 = gllm::variance_tau(Zd, Eigen::VectorXd::Ones(n + 2));
    for (int j = 0; j < d; ++j) QVERIFY(std::fabs(t1[j] - t2[j]) < 1e-12);
  }

  void aggregatedProbeEqualsDirect() {
    // Rows that repeat 6 type vectors with random weights: per-type aggregation = the direct fit.
    gllm::SplitMix64 rng(11);
    auto u = [&] { return double(rng.next() >> 11) / 9007199254740992.0 - 0.5; };
    const int U = 6, d = 4, n = 300;
    Eigen::MatrixXd Zt(U, d);
    for (int i = 0; i < U; ++i)
      for (int j = 0; j < d; ++j) Zt(i, j) = u() * (j + 1);
    std::vector<int> type(n);
    Eigen::MatrixXd Z(n, d), Y(n, 2);
    Eigen::VectorXd w(n);
    for (int i = 0; i < n; ++i) {
      type[i] = int(rng.below(U));
      Z.row(i) = Zt.row(type[i]);
      Y(i, 0) = u();
      Y(i, 1) = Z(i, 2) + 0.1 * u();
      w[i] = double(rng.below(3));
    }
    auto agg = gllm::probe_by_type(Zt, type, Y, w, 1e-3);
    auto a0 = gllm::probe_alpha(Z, Y.col(0), w, 1e-3), a1 = gllm::probe_alpha(Z, Y.col(1), w, 1e-3);
    auto tau = gllm::variance_tau(Z, w);
    for (int j = 0; j < d; ++j) {
      QVERIFY(std::fabs(agg[0][j] - a0[j]) < 1e-9);
      QVERIFY(std::fabs(agg[1][j] - a1[j]) < 1e-9);
      QVERIFY(std::fabs(agg[2][j] - tau[j]) < 1e-12);
    }
  }

  void pipelineOnFixture() {
    auto corpus = gllm::read_brown_corpus(gllm::test::fixture("brown_mini"));
    auto splits = gllm::split_documents(corpus.documents.size(), 0.2, 0.2, 1);
    gllm::ProfileOptions o;
    o.d = 8;
    o.levels = 4;
    o.min_count = 1;
    o.contexts = 50;
    o.bootstrap = 10;
    o.threads = 2;
    auto r = gllm::estimate_profiles(corpus, splits, o);
    const auto& f = r.file;
    QCOMPARE(f.profiles.d(), 8);
    QCOMPARE(f.profiles.level_dims, std::vector<int>({2, 2, 2, 2}));
    QCOMPARE(f.bootstrap.size(), size_t(10));
    QCOMPARE(f.targets.size(), size_t(4));
    QCOMPARE(f.pos_grades.size(), size_t(8));
    for (double g : f.pos_grades) QVERIFY(g >= 0 && g <= 1);
    QCOMPARE(f.basis.size(), size_t(64));
    // The grading library's validation accepts the file (round trip through JSON).
    auto back = gllm::grading::profiles_from_json(gllm::grading::profiles_to_json(f));
    QCOMPARE(back.profiles.alpha.size(), size_t(8));
    double bc = gllm::grading::bhattacharyya(f.profiles.alpha, f.profiles.tau);
    QVERIFY(bc > 0 && bc <= 1 + 1e-12);
    QVERIFY(r.report.contains("taxonomic"));
    // Deterministic from the seed.
    auto r2 = gllm::estimate_profiles(corpus, splits, o);
    QVERIFY(r2.file.profiles.alpha == f.profiles.alpha);
    // Plain text has no annotations: refused with the remedy.
    gllm::Corpus text;
    text.kind = "text";
    text.documents.push_back({});
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::estimate_profiles(text, splits, o));
  }
};

QTEST_APPLESS_MAIN(TestDataProfiles)
#include "test_data_profiles.moc"
