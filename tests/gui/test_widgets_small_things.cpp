// The small things that cost trust (issue 28, point 7), one test each: the C hint holds every
// level, the grade tables follow λ and C, "Set to q*_C" without a certificate, the Heatmaps grade
// line, a non-profile JSON, Compare's wording and Enter, the "Resuming …" line, project folders.
#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "engine/config/run_config.h"
#include "tests/support/workbench_env.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/grade_editor.h"
#include "widgets/heatmap_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

RunConfig fourLevels() {
  RunConfig c = RunConfig::load(resolve_preset_path("tiny-cpu"));
  c.grading.mlge = true;  // level grades act through MLGE
  c.grading.levels = 4;
  c.grading.clip = 2.0;
  return c;
}

QPushButton* educatedButton(ConePanel& cone) {
  for (QPushButton* b : cone.findChildren<QPushButton*>())
    if (b->text().contains("q*_C")) return b;
  return nullptr;
}

void writeJson(const QString& path, const nlohmann::json& j) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(j.dump().c_str());
}

}  // namespace

class TestSmallThings : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    test::isolate_workbench(tmp_);
  }

  // "choose C ≥ 1.13315" then 1.15 refused: the hint is the C every level needs, and it is taken.
  void clipHintHoldsEveryLevel() {
    GradeEditor g;
    g.setConfig(fourLevels());
    QVERIFY2(g.setLevelGrades({0, 4, 8, 12}).isEmpty(), qPrintable(g.levelError()));
    const QString why = g.setClipText("1.1");
    QVERIFY(!why.isEmpty());
    QVERIFY2(why.contains("level 3"), qPrintable(why));  // the level that needs the most
    const QRegularExpression hint(QStringLiteral("C ≥ ([0-9.]+)"));
    const auto m = hint.match(why);
    QVERIFY2(m.hasMatch(), qPrintable(why));
    const double c = m.captured(1).toDouble();
    QVERIFY(c >= std::pow(g.lambda(), 12.0));
    // A value between what level 1 and level 3 need is refused with the same hint...
    const QString between = g.setClipText(QString::number(std::pow(g.lambda(), 6.0), 'g', 6));
    QVERIFY(hint.match(between).captured(1) == m.captured(1));
    // ... and the hinted value itself is accepted.
    QVERIFY2(g.setClipText(m.captured(1)).isEmpty(), qPrintable(g.clipError()));
    QCOMPARE(g.clip(), c);
  }

  // The level table's λ^{q_l} and bounds follow a λ or C change; a C that would leave a head
  // grade outside the box is refused like a level grade.
  void gradeTablesFollowLambdaAndClip() {
    GradeEditor g;
    g.setConfig(fourLevels());
    QVERIFY(g.setClipText("100").isEmpty());
    QVERIFY(g.setLevelGrades({0, 1, 2, 3}).isEmpty());
    auto* table = g.findChild<QTableWidget*>("levelGrades");
    QVERIFY(table);
    QVERIFY(g.setLambdaText("1.5").isEmpty());
    QCOMPARE(table->item(3, 3)->text(), QString::number(std::pow(1.5, 3.0), 'f', 4));
    QVERIFY(table->item(3, 2)->toolTip().contains(
        QString::number(std::log(100.0) / std::log(1.5), 'g', 6)));
    QVERIFY(g.setLambdaText("2").isEmpty());
    QCOMPARE(table->item(3, 3)->text(), QString::number(8.0, 'f', 4));
    QVERIFY(g.setClipText("50").isEmpty());
    QVERIFY(table->item(3, 2)->toolTip().contains(
        QString::number(std::log(50.0) / std::log(2.0), 'g', 6)));
    // A head grade of 5 (λ = 2): C = 16 would hold the levels but not that head.
    QVERIFY(g.setHeadGradeText(0, 1, 2, "5").isEmpty());
    const QString why = g.setClipText("16");
    QVERIFY2(why.contains("layer 0, head 1, plane 2") && why.contains("C ≥ 32"), qPrintable(why));
    QCOMPARE(g.clip(), 50.0);
  }

  // Without a certificate the button is off and says why; with one it is on.
  void educatedButtonNeedsACertificate() {
    ConePanel cone;
    cone.useGeometric();
    cone.setGrades({0, 0.5, 1.0, 1.5}, std::exp(1.0 / 32), 2.0);
    QVERIFY(cone.waitForResult());
    QPushButton* b = educatedButton(cone);
    QVERIFY(b);
    QVERIFY(b->isEnabled());
    QVERIFY(b->text().contains("Λ*_C"));
    cone.setGrades({}, std::exp(1.0 / 32), 2.0);  // no level grades: nothing to certify
    QVERIFY(cone.waitForResult());
    QVERIFY(!cone.result().error.isEmpty());
    QVERIFY(!b->isEnabled());
    QVERIFY2(!b->text().contains("Λ*_C") && b->text().contains("no certificate"),
             qPrintable(b->text()));
  }

  // 128 per-coordinate grades are summarised, not listed off the panel.
  void heatmapGradeLineStaysShort() {
    HeatmapPanel panel;
    panel.resize(700, 500);
    GradeGrid grid = GradeGrid::zeros(2, 2, 4);
    std::vector<double> grades;
    for (int i = 0; i < 128; ++i) grades.push_back(0.01 * i);
    panel.setSource("run/step_000100", grid, {}, grades);
    panel.setSourceA("run/step_000100");
    const QString text = panel.statusText();
    QVERIFY2(text.contains("128 coordinates") && text.size() < 300, qPrintable(text));
    // A few levels are still listed.
    panel.setSource("run/step_000200", grid, {}, {0, 0, 1, 1, 2, 2, 3, 3});
    panel.setSourceA("run/step_000200");
    QVERIFY2(panel.statusText().contains("0 ×2, 1 ×2, 2 ×2, 3 ×2"), qPrintable(panel.statusText()));
  }

  // A run's config.json opened as profiles: named for what it is not, no source file named.
  void nonProfileJsonIsNamed() {
    const QString path = tmp_.filePath("config.json");
    writeJson(path, RunConfig::load(resolve_preset_path("tiny-cpu")).to_json());
    ConePanel cone;
    const QString err = cone.loadProfilesFile(path);
    QVERIFY2(err.contains("not a profiles file") && !err.contains("profiles.h") &&
                 !err.contains("engine/"),
             qPrintable(err));
  }

  // Compare speaks the panel's language (no CLI flags), and Enter in its path field reloads.
  void compareWordingAndEnter() {
    const QString runs = tmp_.filePath("compare-runs");
    for (int seed : {1, 2}) {
      const QString dir = runs + QStringLiteral("/arm-s%1").arg(seed);
      QVERIFY(QDir().mkpath(dir));
      writeJson(dir + "/config.json", {{"name", "arm"}, {"train", {{"seed", seed}}}});
      QFile m(dir + "/metrics.jsonl");
      QVERIFY(m.open(QIODevice::WriteOnly));
      m.write("{\"step\":10,\"tokens\":1000,\"val_bpb\":1.5}\n");
      m.close();
      writeJson(dir + "/summary.json", {{"status", "completed"}, {"heldout_bpb", 1.6}});
    }
    ComparePanel panel;
    panel.setRunsFolder(tmp_.filePath("nothing"));
    QVERIFY(panel.waitForResult());
    auto* path = panel.findChildren<QLineEdit*>().value(0);
    QVERIFY(path);
    QCOMPARE(path->text(), tmp_.filePath("nothing"));
    path->setText(runs);
    QTest::keyClick(path, Qt::Key_Return);
    QCOMPARE(panel.runsFolder(), runs);
    QVERIFY(panel.waitForResult());
    QCOMPARE(panel.arms(), QStringList({"arm"}));
    QVERIFY2(!panel.statusText().contains("--"), qPrintable(panel.statusText()));
    QVERIFY2(panel.statusText().contains("no arm named 'uniform'"), qPrintable(panel.statusText()));
  }

  // After a resumed run ends, the status line says how, not "Resuming …".
  void resumingLineIsReplaced() {
    QTemporaryDir dir;
    writeJson(
        dir.filePath("queue.json"),
        {{"format", "gllm-queue/1"},
         {"entries", nlohmann::json::array({nlohmann::json{{"id", "r1"},
                                                           {"name", "tiny"},
                                                           {"seed", 7},
                                                           {"config", nlohmann::json::object()},
                                                           {"status", "cancelled"},
                                                           {"run_dir", ss(dir.filePath("gone"))},
                                                           {"step", 3},
                                                           {"total_steps", 10}}})}});
    PresetForm form;
    RunQueue queue(dir.filePath("queue.json"), dir.filePath("runs"));
    queue.setAutoStart(false);
    LauncherPanel launcher(&queue, &form);
    launcher.selectId("r1");
    QVERIFY(launcher.resumeSelected().isEmpty());
    QVERIFY(launcher.statusText().startsWith("Resuming"));
    // The folder is gone: the resume fails, and the line says so.
    QTRY_VERIFY_WITH_TIMEOUT(queue.entry("r1")->status != QLatin1String("running") &&
                                 queue.entry("r1")->status != QLatin1String("queued"),
                             30000);
    QVERIFY(queue.waitIdle(30000));
    QVERIFY2(!launcher.statusText().contains("Resuming"), qPrintable(launcher.statusText()));
    QVERIFY2(launcher.statusText().contains(queue.entry("r1")->status),
             qPrintable(launcher.statusText()));
  }

  // Presets and bench results come from the project folder the workbench is started in.
  void defaultsComeFromTheProjectFolder() {
    QTemporaryDir project;
    QVERIFY(QDir().mkpath(project.filePath("presets")));
    QVERIFY(QDir().mkpath(project.filePath("bench/results")));
    QFile::copy(QString::fromStdString(resolve_preset_path("tiny-cpu")),
                project.filePath("presets/tiny-cpu.json"));
    writeJson(project.filePath("presets/only-here.json"), {{"name", "only-here"}});
    const QByteArray presets = qgetenv("GLLM_PRESETS");
    qunsetenv("GLLM_PRESETS");
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(project.path()));
    const QString dir = QString::fromStdString(presets_dir());
    const auto names = list_presets();
    const QString results = projectFolder("bench/results");
    QVERIFY(QDir::setCurrent(before));
    if (!presets.isEmpty()) qputenv("GLLM_PRESETS", presets);
    QCOMPARE(QDir(dir).canonicalPath(), QDir(project.filePath("presets")).canonicalPath());
    QVERIFY(std::find(names.begin(), names.end(), "only-here") != names.end());
    QCOMPARE(QDir(results).canonicalPath(),
             QDir(project.filePath("bench/results")).canonicalPath());
  }
};

QTEST_MAIN(TestSmallThings)
#include "test_widgets_small_things.moc"
