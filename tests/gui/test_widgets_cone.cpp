// GUI test of the grade editor and the cone panel: edits are refused at the field with the reason,
// and the panel's numbers equal the engine's evaluate_cone_levels / select_levels for the same
// inputs.
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/grading/certify.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/grading/select.h"
#include "widgets/cone_panel.h"
#include "widgets/grade_editor.h"

using namespace gllm;
using namespace gllm::gui;

class TestCone : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gradeEditorRefusals() {
    GradeEditor ed;
    RunConfig c;
    c.grading.mlge = true;       // level grades act through MLGE (with it off they are refused)
    c.grading.attention = true;  // and head grades through graded attention
    ed.setConfig(c);
    const double qmax = std::log(2.0) / std::log(std::exp(1.0 / c.model.head_dim()));
    QVERIFY(std::fabs(ed.qMax() - qmax) < 1e-9);
    QVERIFY(ed.setLevelGradeText(1, "3").isEmpty());
    QCOMPARE(ed.levelGrades()[1], 3.0);
    QVERIFY(ed.setLevelGradeText(2, "-1").contains(">= 0") || !ed.levelError().isEmpty());
    QCOMPARE(ed.levelGrades()[2], 0.0);
    const QString over = ed.setLevelGradeText(2, QString::number(qmax + 1));
    QVERIFY2(over.contains("q_max"), qPrintable(over));
    QCOMPARE(ed.levelGrades()[2], 0.0);
    QVERIFY(!ed.levelError().isEmpty());
    // Lowering the clip below a grade's multiplier is refused with the reason.
    QVERIFY(ed.setLevelGradeText(3, QString::number(0.9 * qmax)).isEmpty());
    const QString clip = ed.setClipText("1.1");
    QVERIFY2(clip.contains("lower that grade"), qPrintable(clip));
    QCOMPARE(ed.clip(), 2.0);
    QVERIFY(!ed.setClipText("0.5").isEmpty());
    QVERIFY(!ed.clipError().isEmpty());
    QVERIFY(!ed.setLambdaText("0.8").isEmpty());
    QVERIFY(ed.setClipText("4").isEmpty());
    QCOMPARE(ed.clip(), 4.0);
    QVERIFY(!ed.setHeadGradeText(0, 0, 0, "abc").isEmpty());
    QVERIFY(ed.setHeadGradeText(0, 1, 2, "1.5").isEmpty());
    QCOMPARE(ed.headGrades().at(0, 1, 2), 1.5);
    // Save / load of the grading part round-trips.
    QTemporaryDir dir;
    const QString f = dir.filePath("grading.json");
    QVERIFY(ed.saveGradingFile(f).isEmpty());
    GradeEditor other;
    other.setConfig(RunConfig{});
    QVERIFY(other.loadGradingFile(f).isEmpty());
    QCOMPARE(other.clip(), 4.0);
    QCOMPARE(other.levelGrades(), ed.levelGrades());
  }
  void coneMatchesEngine() {
    ConePanel panel;
    panel.setGeometric(0.6, 0.3);
    const double lambda = std::exp(1.0 / 32.0);
    const std::vector<double> v{0.0, 3.0, 10.0, 12.0};
    panel.setGrades(v, lambda, 2.0);
    QVERIFY(panel.waitForResult(10000));
    const ConeResult& r = panel.result();
    QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
    const auto p = grading::geometric_profiles(0.6, 0.3, 4);
    const auto ref = grading::evaluate_cone_levels(p, v, lambda, 2.0);
    QCOMPARE(r.report.lambda_q, ref.lambda_q);
    QCOMPARE(r.report.certificate, ref.certificate);
    QCOMPARE(r.report.bc, ref.bc);
    QCOMPARE(r.report.lambda_star, ref.lambda_star);
    QCOMPARE(r.report.clip_bound, 0.25);
    QCOMPARE(r.report.in_cone, ref.in_cone);
    grading::SelectOptions opt;
    opt.lambda = lambda;
    opt.clip = 2.0;
    const auto sel = grading::select_levels(p, opt);
    QCOMPARE(r.educated.lambda_c, sel.lambda_c);
    // Seed 000 Table 3, row (0.6, 0.3): Λ* = 0.459, Λ*_C = 0.531, gain 1.88.
    QCOMPARE(QString::number(r.report.lambda_star, 'f', 3), QStringLiteral("0.459"));
    QCOMPARE(QString::number(r.educated.lambda_c, 'f', 3), QStringLiteral("0.531"));
    QCOMPARE(QString::number(r.educated.gain, 'f', 2), QStringLiteral("1.88"));
    // The badge says where q stands against the cone Λ(q) < 1 and against its first-order test.
    QCOMPARE(panel.badgeText(),
             (ref.lambda_q < 1 ? QString("✔ ") : QString("✘ ")) +
                 QString::fromStdString(grading::cone_verdict_text(ref.lambda_q, ref.certificate)));
    QVERIFY(panel.sourceText().contains("Table 3 explorer"));
    QVERIFY(panel.valueText("lambda_c").startsWith("0.531"));
    // "Set to the educated q*_C" hands the optimum to the grade editor.
    QSignalSpy spy(&panel, &ConePanel::educatedRequested);
    auto* button = panel.findChild<QPushButton*>(QStringLiteral("primary"));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(spy.count(), 1);
    const auto q = spy.first().first().value<std::vector<double>>();
    QCOMPARE(q.size(), size_t(4));
    // Uniform grades: Λ = 1, inner product 0: on the boundary.
    panel.setGrades({0, 0, 0, 0}, lambda, 2.0);
    QVERIFY(panel.waitForResult(10000));
    QCOMPARE(panel.result().report.lambda_q, 1.0);
    QCOMPARE(panel.badgeText(), QString("○ on the boundary (q = 0, Λ = 1)"));
    // Positive to first order yet Λ(q) > 1 (the taxonomic arm's case before): outside the cone,
    // and the badge says both — never "admissible" on the first-order sign alone.
    const double q_max = std::log(2.0) / std::log(lambda);
    panel.setGrades({0.0, q_max, 0.0, q_max / 2}, lambda, 2.0);
    QVERIFY(panel.waitForResult(10000));
    QVERIFY(panel.result().report.certificate > 0);
    QVERIFY(panel.result().report.lambda_q > 1);
    QCOMPARE(panel.badgeText(), QString("✘ first-order positive, outside the cone (Λ ≥ 1)"));
    QVERIFY(panel.valueText("bc").contains("per level"));
    QVERIFY(panel.valueText("lambda_star").contains("per level"));
  }
  void badgeKeepsItsPadding() {
    // The verdict pill beside a long reason in a narrow panel: its text keeps 10 px either side
    // and the reason starts after it (a squeezed pill ran into the reason's first word).
    ConePanel panel;
    panel.resize(420, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setGeometric(0.6, 0.3);
    panel.setGrades({12, 10, 3, 0}, std::exp(1.0 / 32.0),
                    2.0);  // against the profiles: ⟨q, α̂−τ̂⟩ < 0
    QVERIFY(panel.waitForResult(10000));
    auto* badge = panel.findChild<QLabel*>(QStringLiteral("badgeNotCertified"));
    QVERIFY(badge);
    QLabel* reason = nullptr;
    for (QLabel* l : panel.findChildren<QLabel*>())
      if (l->text().contains(QStringLiteral("negative to first order"))) reason = l;
    QVERIFY(reason);
    QTRY_VERIFY(badge->width() >= badge->fontMetrics().horizontalAdvance(badge->text()) + 20);
    QVERIFY(badge->height() >= badge->fontMetrics().height() + 6);
    const QRect b(badge->mapTo(&panel, QPoint(0, 0)), badge->size());
    const QRect t(reason->mapTo(&panel, QPoint(0, 0)), reason->size());
    QVERIFY2(
        b.right() < t.left(),
        qPrintable(QString("pill ends at %1, reason starts at %2").arg(b.right()).arg(t.left())));
  }
  // With a profiles file the panel certifies the grades the model of the editor's settings holds,
  // read back from the built model: the ladder preset's MLGE grades give the ladder's published
  // inner product; head grades are certified only against head profiles, and say so otherwise.
  void certifiesTheModelsOwnGrades() {
    const RunConfig ladder = RunConfig::load(resolve_preset_path("ladder-educated"));
    ConePanel panel;
    QVERIFY(panel.loadProfilesFile(QString::fromStdString(ladder.grading.profiles_file)).isEmpty());
    panel.setConfig(ladder, "preset ladder-educated");
    QVERIFY(panel.waitForResult(30000));
    const ConeResult& r = panel.result();
    QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
    QVERIFY(r.fromModel);
    const auto lad = grading::load_ladder_file(ladder.grading.ladder_file);
    QVERIFY(std::abs(r.model.certificate - lad.arm("educated").certificate) < 1e-5);
    QCOMPARE(panel.badgeText(), QString("✔ in the cone (Λ < 1)"));
    // Per coordinate for the model's d grades, and the held-out figures beside the fit ones.
    QVERIFY2(panel.valueText("bc").contains("per coordinate"), qPrintable(panel.valueText("bc")));
    QVERIFY2(panel.valueText("heldout").contains(QString::fromStdString(grading::cone_verdict_text(
                 lad.arm("educated").lambda_q_heldout, lad.arm("educated").certificate_heldout))),
             qPrintable(panel.valueText("heldout")));
    QVERIFY(panel.sourceText().contains("read back"));
    QVERIFY(panel.headsText().contains("no graded attention"));

    // tiny-cpu: graded attention, no MLGE grades — the heads are not certified without head
    // profiles, and the numbers are the explorer's, said so.
    panel.setConfig(RunConfig::load(resolve_preset_path("tiny-cpu")), "preset tiny-cpu");
    QVERIFY(panel.waitForResult(30000));
    QVERIFY(!panel.result().fromModel);
    QVERIFY(panel.sourceText().contains("holds no MLGE grades"));
    QVERIFY2(panel.headsText().contains("no head profiles loaded"), qPrintable(panel.headsText()));

    // Head profiles of the right shape: every head gets a certificate (uniform grades: Λ = 1 and
    // 0 to first order: on the boundary).
    grading::HeadProfiles hp;
    hp.layers = 4;
    hp.heads = 4;
    hp.planes = 16;
    for (int i = 0; i < 16; ++i) {
      grading::ProfilesFile f;
      for (int c = 0; c < 16; ++c) {
        f.profiles.alpha.push_back((c + 1.0) / 136.0);
        f.profiles.tau.push_back((16.0 - c) / 136.0);
      }
      hp.per_head.push_back(f);
    }
    QTemporaryDir tmp;
    const QString path = tmp.filePath("heads.json");
    grading::save_head_profiles(path.toStdString(), hp);
    QVERIFY(panel.loadHeadProfilesFile(path).isEmpty());
    QVERIFY(panel.waitForResult(30000));
    QVERIFY2(panel.headsText().contains("0 of 16 heads in the cone (Λ < 1), 0 positive"),
             qPrintable(panel.headsText()));
    // An embedding profiles file is refused as head profiles, with the command that makes them.
    QVERIFY(panel.loadHeadProfilesFile(QString::fromStdString(ladder.grading.profiles_file))
                .contains("--checkpoint"));
  }

  // Choosing a ladder arm in the grade editor gives the model exactly what the ladder certified:
  // MLGE grades from the arm and the basis of the ladder's own profiles, both frozen.
  void editorTakesALadderArm() {
    const RunConfig ladder = RunConfig::load(resolve_preset_path("ladder-pos"));
    GradeEditor ed;
    ed.setConfig(RunConfig::load(resolve_preset_path("tiny-cpu")));
    QVERIFY(ed.loadLadder(QString::fromStdString(ladder.grading.ladder_file)).isEmpty());
    QVERIFY(ed.ladderArms().contains("pos"));
    const QString err = ed.chooseLadderArm("pos");
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const auto& g = ed.config().grading;
    QVERIFY(g.mlge);
    QCOMPARE(QString::fromStdString(g.level_grades_source), QString("ladder"));
    QCOMPARE(QString::fromStdString(g.ladder_arm), QString("pos"));
    QVERIFY(!g.basis_trainable);
    QCOMPARE(QFileInfo(QString::fromStdString(g.profiles_file)).canonicalFilePath(),
             QFileInfo(QString::fromStdString(ladder.grading.profiles_file)).canonicalFilePath());
  }

  void burstOfEditsEndsOnTheLatest() {
    ConePanel panel;
    const double lambda = std::exp(1.0 / 32.0);
    for (int i = 0; i < 50; ++i) panel.setGrades({0.0, 0.1 * i, 0.2 * i, 0.2 * i}, lambda, 2.0);
    QVERIFY(panel.waitForResult(10000));
    const auto ref =
        grading::evaluate_cone_levels(panel.currentProfiles(), {0.0, 4.9, 9.8, 9.8}, lambda, 2.0);
    QCOMPARE(panel.result().report.lambda_q, ref.lambda_q);
  }
  void badProfilesFileIsRefused() {
    ConePanel panel;
    QTemporaryDir dir;
    QFile f(dir.filePath("bad.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"d\": 2, \"alpha\": [0.5, -0.5], \"tau\": [0.5, 0.5]}");
    f.close();
    QVERIFY(!panel.loadProfilesFile(f.fileName()).isEmpty());
  }
};

QTEST_MAIN(TestCone)
#include "test_widgets_cone.moc"
