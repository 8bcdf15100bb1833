// Every run knows what it is (issue 28, points 1 and 4): a launched run is named after what differs
// from its preset and shows the diff on demand, takes tags and a note, Compare splits one name
// with two configs into two arms, and the Monitor keys runs by folder and shows every run of the
// runs folder at startup, an opened live run once.
#include <QDir>
#include <QTableWidget>
#include <QtTest>

#include "widgets/compare_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

// A finished run folder (config, metrics, summary) of a tiny-cpu config with `steps` steps.
void writeRun(const QString& dir, int seed, int steps, double heldout) {
  QVERIFY(QDir().mkpath(dir));
  nlohmann::json config = RunConfig::load(resolve_preset_path("tiny-cpu")).to_json();
  config["train"]["seed"] = seed;
  config["train"]["steps"] = steps;
  QFile c(dir + "/config.json");
  QVERIFY(c.open(QIODevice::WriteOnly));
  c.write(config.dump().c_str());
  QFile m(dir + "/metrics.jsonl");
  QVERIFY(m.open(QIODevice::WriteOnly));
  for (int step = 1; step <= steps; ++step)
    m.write(nlohmann::json({{"step", step}, {"tokens", 1000 * step}, {"loss", 9.0 - 0.01 * step}})
                .dump()
                .append("\n")
                .c_str());
  m.write(nlohmann::json({{"step", steps}, {"tokens", 1000 * steps}, {"val_bpb", heldout + 0.1}})
              .dump()
              .append("\n")
              .c_str());
  QFile s(dir + "/summary.json");
  QVERIFY(s.open(QIODevice::WriteOnly));
  s.write(nlohmann::json({{"status", "completed"}, {"heldout_bpb", heldout}, {"step", steps}})
              .dump()
              .c_str());
}

}  // namespace

class TestRunIdentityGui : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    // tiny-cpu run with 150, 40 and 100 steps (the issue's runs), seeds 42 and 43 of each; the
    // folders of one seed differ only by the suffix a repeated name gets.
    const QString runs = tmp_.filePath("runs");
    for (int seed : {42, 43}) {
      const QString base = runs + QStringLiteral("/tiny-cpu-s%1").arg(seed);
      writeRun(base, seed, 150, 2.10 + 0.01 * (seed - 42));
      writeRun(base + "-2", seed, 40, 2.40 + 0.01 * (seed - 42));
      writeRun(base + "-3", seed, 100, 2.20 + 0.01 * (seed - 42));
    }
    qputenv("GLLM_RUNS", runs.toUtf8());
  }

  // Point 1: the launched run's name says what differs; the diff and tags are on the entry.
  void launchedRunIsNamedAfterItsDiff() {
    QTemporaryDir dir;
    PresetForm form;
    RunQueue queue(dir.filePath("queue.json"), dir.filePath("runs"));
    queue.setAutoStart(false);
    LauncherPanel launcher(&queue, &form);
    QVERIFY(launcher.choosePreset("tiny-cpu").isEmpty());
    launcher.setSeedsText("42");
    QVERIFY(launcher.launch(false).isEmpty());
    QCOMPARE(queue.entries()[0].name, QStringLiteral("tiny-cpu"));  // the preset as it is
    QCOMPARE(queue.configDiff(queue.entries()[0].id), QString());
    QVERIFY(form.editField("train.steps", "150"));
    QVERIFY(form.editField("model.storage", "bf16"));
    QVERIFY(launcher.launch(false).isEmpty());
    const QueueEntry& e = queue.entries()[1];
    QCOMPARE(e.name, QStringLiteral("tiny-cpu+storage=bf16+steps=150"));
    QCOMPARE(form.config().name, std::string("tiny-cpu"));  // the form keeps the preset's name
    const QString diff = queue.configDiff(e.id);
    QVERIFY2(diff.contains("model.storage: fp32 → bf16") && diff.contains("train.steps: 400 → 150"),
             qPrintable(diff));
    // Shown on demand: the name cell's tooltip.
    launcher.selectId(e.id);
    QTableWidget* t = launcher.table();
    QVERIFY(t->item(1, 0)->toolTip().contains("train.steps: 400 → 150"));
    // Tags and a note, kept across a restart of the queue.
    QVERIFY(queue.annotate(e.id, {"ablation", " bf16 ", "ablation"}, "first try in bf16"));
    QVERIFY(t->item(1, 0)->text().contains("[ablation, bf16]"));
    RunQueue reopened(dir.filePath("queue.json"), dir.filePath("runs"));
    QCOMPARE(reopened.entry(e.id)->tags, QStringList({"ablation", "bf16"}));
    QCOMPARE(reopened.entry(e.id)->note, QStringLiteral("first try in bf16"));
    QCOMPARE(reopened.configDiff(e.id), diff);
    // A name of the user's own is kept as given.
    QVERIFY(form.editField("name", "my-run"));
    QVERIFY(launcher.launch(false).isEmpty());
    QCOMPARE(queue.entries()[2].name, QStringLiteral("my-run"));
  }

  // Point 1: Compare never averages three configs of one name as one arm.
  void compareSplitsOneNameWithThreeConfigs() {
    ComparePanel panel;
    panel.setRunsFolder(tmp_.filePath("runs"));
    QVERIFY(panel.waitForResult());
    const QStringList arms = panel.arms();
    QCOMPARE(arms.size(), 3);
    for (const QString& a : arms) {
      QVERIFY2(a.startsWith("tiny-cpu#"), qPrintable(a));
      QVERIFY2(panel.armDiff(a).contains("train.steps: 400 → "), qPrintable(panel.armDiff(a)));
    }
    QVERIFY(panel.conflicts().empty());  // three configs, not three copies of one seed
    QVERIFY(panel.deltaTable()->rowCount() == 3);
    QVERIFY(panel.deltaTable()->item(0, 0)->toolTip().contains("train.steps"));
    // Each arm can be hidden from the comparison (its check box) and shown again.
    const QString hide = arms.last() == panel.comparison()["baseline"].get<std::string>().c_str()
                             ? arms.first()
                             : arms.last();
    panel.setArmShown(hide, false);
    QVERIFY(panel.waitForResult());
    QCOMPARE(int(panel.comparison()["arms"].size()), 2);
    QCOMPARE(panel.deltaTable()->rowCount(), 3);  // still listed, unchecked
    QTableWidgetItem* hidden = panel.deltaTable()->item(2, 0);
    QCOMPARE(hidden->text(), hide);
    QCOMPARE(hidden->checkState(), Qt::Unchecked);
    hidden->setCheckState(Qt::Checked);  // as a click does
    QVERIFY(panel.waitForResult());
    QCOMPARE(int(panel.comparison()["arms"].size()), 3);
    QVERIFY(panel.armShown(hide));
  }

  // Point 4: the Monitor keys runs by folder, shows every run of the runs folder at startup, and
  // opening one of them again does not add it twice.
  void monitorKeysRunsByFolder() {
    MainWindow w;
    QVERIFY(w.waitForIdle());
    auto* monitor = qobject_cast<MonitorPanel*>(w.panel("monitor"));
    QVERIFY(monitor);
    QStringList runs = monitor->runs();
    runs.sort();
    QCOMPARE(runs, QStringList({"tiny-cpu-s42", "tiny-cpu-s42-2", "tiny-cpu-s42-3", "tiny-cpu-s43",
                                "tiny-cpu-s43-2", "tiny-cpu-s43-3"}));
    QCOMPARE(monitor->points("tiny-cpu-s42-2", "loss").size(), size_t(40));  // whole history
    // Three configs of two seeds: three groups, never one "tiny-cpu · 6 seeds".
    QCOMPARE(int(monitor->store().groups().size()), 3);
    for (const SeedGroup& g : monitor->store().groups()) QCOMPARE(g.runs.size(), 2);
    QCOMPARE(monitor->runFolder("tiny-cpu-s43-3"), tmp_.filePath("runs/tiny-cpu-s43-3"));
    QCOMPARE(monitor->runSeed("tiny-cpu-s43-3"), 43);
    QVERIFY(w.openRun(tmp_.filePath("runs/tiny-cpu-s42")).isEmpty());
    QVERIFY(w.waitForIdle());
    QCOMPARE(monitor->runs().size(), 6);
    QCOMPARE(monitor->points("tiny-cpu-s42", "loss").size(), size_t(150));
  }
};

QTEST_MAIN(TestRunIdentityGui)
#include "test_widgets_run_identity.moc"
