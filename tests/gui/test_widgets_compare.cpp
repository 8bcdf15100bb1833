// The compare panel on a runs folder where `gllm train` ran one preset twice with one seed: the
// workbench starts, the conflict is shown in the panel (which folder is compared, which are left
// out), and the comparison uses one run per arm and seed.
#include <QDir>
#include <QLabel>
#include <QTableWidget>
#include <QtTest>

#include "engine/train/compare.h"
#include "widgets/compare_panel.h"
#include "widgets/main_window.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

// A finished run folder as the trainer leaves it (config, metrics, summary).
void writeRun(const QString& dir, const std::string& arm, int seed, double heldout,
              const char* status = "completed") {
  QVERIFY(QDir().mkpath(dir));
  const nlohmann::json config = {{"name", arm}, {"train", {{"seed", seed}, {"steps", 20}}}};
  QFile c(dir + "/config.json");
  QVERIFY(c.open(QIODevice::WriteOnly));
  c.write(config.dump().c_str());
  QFile m(dir + "/metrics.jsonl");
  QVERIFY(m.open(QIODevice::WriteOnly));
  for (int step = 10; step <= 20; step += 10)
    m.write(
        nlohmann::json(
            {{"step", step}, {"tokens", 1000 * step}, {"val_bpb", heldout + 0.5 - step / 100.0}})
            .dump()
            .append("\n")
            .c_str());
  QFile s(dir + "/summary.json");
  QVERIFY(s.open(QIODevice::WriteOnly));
  s.write(
      nlohmann::json({{"status", status}, {"heldout_bpb", heldout}, {"step", 20}}).dump().c_str());
}

}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    // `gllm train tiny-cpu` twice (seed 42 both times), and a second arm.
    const QString runs = tmp_.filePath("runs");
    writeRun(runs + "/tiny-cpu-20261201-100000", "tiny-cpu", 42, 2.10);
    writeRun(runs + "/tiny-cpu-20261201-110000", "tiny-cpu", 42, 2.00);
    writeRun(runs + "/tiny-cpu-20261201-120000", "tiny-cpu", 42, 2.50,
             "failed");  // newest, not completed
    writeRun(runs + "/tiny-cpu-20261201-130000", "tiny-cpu", 43, 2.04);
    writeRun(runs + "/uniform-20261201-100000", "uniform", 42, 2.20);
    writeRun(runs + "/uniform-20261201-110000", "uniform", 43, 2.30);
    qputenv("GLLM_RUNS", runs.toUtf8());
  }

  void workbenchStartsWithTwoRunsOfOneSeed() {
    // The main window lists the runs folder as it opens; it must open.
    MainWindow w;
    auto* compare = qobject_cast<ComparePanel*>(w.panel("compare"));
    QVERIFY(compare);
    QVERIFY(compare->waitForResult());
    QCOMPARE(compare->arms(), QStringList({"tiny-cpu", "uniform"}));
    // The conflict is shown in the panel: the compared folder and the ones left out.
    const QString text = compare->conflictText();
    QVERIFY2(text.contains("'tiny-cpu'") && text.contains("seed 42"), qPrintable(text));
    QVERIFY2(text.contains("comparing tiny-cpu-20261201-110000"), qPrintable(text));
    QVERIFY(text.contains("tiny-cpu-20261201-100000") && text.contains("tiny-cpu-20261201-120000"));
    QCOMPARE(int(compare->conflicts().size()), 1);
    QCOMPARE(compare->conflicts()[0].others.size(), 2);
    // The comparison pairs the kept run: tiny-cpu {42: 2.00, 43: 2.04} against uniform
    // {2.20, 2.30}.
    const auto& arms = compare->comparison()["arms"];
    QCOMPARE(arms.size(), size_t(2));
    QCOMPARE(arms[0]["arm"].get<std::string>(), std::string("uniform"));  // the baseline first
    QCOMPARE(arms[1]["runs"].get<int>(), 2);
    QVERIFY(std::fabs(arms[1]["values"]["42"].get<double>() - 2.00) < 1e-12);
    QVERIFY(std::fabs(arms[1]["vs_baseline"]["mean"].get<double>() - (-0.23)) < 1e-12);
    QVERIFY(compare->deltaTable()->rowCount() == 2);
  }

  void oneRunPerArmAndSeedRule() {
    std::vector<RunInfo> runs(4);
    runs[0] = {};
    runs[0].dir = "a-1", runs[0].name = "a", runs[0].seed = 1, runs[0].status = "completed";
    runs[1].dir = "a-2", runs[1].name = "a", runs[1].seed = 1, runs[1].status = "interrupted";
    runs[2].dir = "b-1", runs[2].name = "b", runs[2].seed = 1, runs[2].status = "running";
    runs[3].dir = "b-2", runs[3].name = "b", runs[3].seed = 1, runs[3].status = "failed";
    std::vector<SeedConflict> conflicts;
    const auto kept = oneRunPerArmAndSeed(runs, &conflicts);
    QCOMPARE(int(kept.size()), 2);
    QCOMPARE(kept[0].dir, std::string("a-1"));  // the completed one, though older
    QCOMPARE(kept[1].dir, std::string("b-2"));  // none completed: the newest
    QCOMPARE(int(conflicts.size()), 2);
    QCOMPARE(conflicts[0].others, QStringList({"a-2"}));
    QCOMPARE(conflicts[1].kept, QStringLiteral("b-2"));
  }

  void listingDoesNotBlock() {
    // setRunsFolder returns before the folders are read; the result arrives through the event loop.
    ComparePanel panel;
    QVERIFY(panel.waitForResult());
    panel.setRunsFolder(tmp_.filePath("runs"));
    QVERIFY(panel.busy());
    QVERIFY(panel.arms().isEmpty() || panel.statusText().contains("Reading"));
    QVERIFY(panel.waitForResult());
    QCOMPARE(panel.arms().size(), 2);
    // A baseline change is compared anew without listing again.
    panel.setBaseline("tiny-cpu");
    QVERIFY(panel.waitForResult());
    QCOMPARE(panel.comparison()["baseline"].get<std::string>(), std::string("tiny-cpu"));
  }

  void uniformArmIsTheDefaultBaseline() {
    // The ladder's arms: the comparison starts against ladder-uniform, not the first arm by name.
    QCOMPARE(uniform_arm({"ladder-educated", "ladder-uniform", "ladder-random"}),
             std::string("ladder-uniform"));
    QCOMPARE(uniform_arm({"uniform-wide", "uniform"}), std::string("uniform"));
    QVERIFY(uniform_arm({"a", "b"}).empty());
    const QString dir = tmp_.filePath("ladder");
    writeRun(dir + "/ladder-educated-s1", "ladder-educated", 1, 1.80);
    writeRun(dir + "/ladder-educated-s2", "ladder-educated", 2, 1.81);
    writeRun(dir + "/ladder-uniform-s1", "ladder-uniform", 1, 1.85);
    writeRun(dir + "/ladder-uniform-s2", "ladder-uniform", 2, 1.86);
    ComparePanel panel;
    QVERIFY(panel.waitForResult());
    panel.setRunsFolder(dir);
    QVERIFY(panel.waitForResult());
    QCOMPARE(panel.comparison()["baseline"].get<std::string>(), std::string("ladder-uniform"));
  }
};

QTEST_MAIN(TestCompare)
#include "test_widgets_compare.moc"
