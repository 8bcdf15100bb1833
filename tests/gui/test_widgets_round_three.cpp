// A researcher's day, round two (issue 42), points 3, 4 and 6: the heatmaps follow a run's
// checkpoints as they are written, committed results open and pair, the layout stays.
#include <QDir>
#include <QStatusBar>
#include <QTableWidget>
#include <QtTest>
#include <filesystem>

#include "engine/config/run_config.h"
#include "engine/io/atomic_file.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"
#include "widgets/checkpoint_timeline.h"
#include "widgets/compare_panel.h"
#include "widgets/heatmap_panel.h"
#include "widgets/ladder_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

const int kTimeoutMs = 60000;

bool anyLiveSource(HeatmapPanel* h) {
  for (const QString& n : h->sourceNames())
    if (n.startsWith(QStringLiteral("live:"))) return true;
  return false;
}

// The step slider lists the checkpoints of `runDir`.
bool onRun(HeatmapPanel* h, const QString& runDir) {
  return QDir(h->timeline()->runDir()).canonicalPath() == QDir(runDir).canonicalPath();
}

QString stepSource(const QString& runDir, qint64 step) {
  return QDir(runDir).dirName() + QStringLiteral("/step_%1").arg(step, 6, 10, QLatin1Char('0'));
}

}  // namespace

class TestRoundThree : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  QString writePreset(const QString& name, int steps, int checkpointEvery) {
    RunConfig c = test::tiny_text_run(steps);
    c.name = ss(name);
    c.train.checkpoint_every = checkpointEvery;
    const QString p = tmp_.filePath(name + ".json");
    write_file_atomic(ss(p), RunConfig::from_json(c.to_json()).to_json().dump(2));
    return p;
  }
  // Launches `preset` with one seed and returns its queue id.
  static QString launchOne(LauncherPanel* l, const QString& preset) {
    if (!l->choosePreset(preset).isEmpty()) return {};
    l->setSeedsText(QStringLiteral("5"));
    if (!l->launch(true).isEmpty()) return {};
    return l->queue()->entries().last().id;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
    qputenv("GLLM_RUNS", tmp_.filePath("runs").toUtf8());
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    // Each step takes at least 100 ms: a tiny run is watchable between its checkpoints.
    qputenv("GLLM_TEST_STEP_DELAY_MS", "100");
  }

  // Point 3: the step slider lists a new run's checkpoints while it runs and after, source A is
  // the run (no "live:" label left once it has ended), and a resumed run after a restart is
  // followed from its first step although another run was open.
  void heatmapsFollowCheckpoints() {
    QString id, runDir, otherDir;
    qint64 stoppedAt = 0;
    {
      MainWindow w;
      auto* launcher = qobject_cast<LauncherPanel*>(w.panel(QStringLiteral("queue")));
      auto* heat = qobject_cast<HeatmapPanel*>(w.panel(QStringLiteral("heatmaps")));
      QVERIFY(launcher && heat);
      const QString other = launchOne(launcher, writePreset(QStringLiteral("other"), 3, 3));
      QVERIFY(!other.isEmpty());
      QTRY_COMPARE_WITH_TIMEOUT(launcher->queue()->entry(other)->status, QString("completed"),
                                kTimeoutMs);
      otherDir = launcher->queue()->entry(other)->runDir;
      QVERIFY(w.openRun(otherDir).isEmpty());  // opened by hand: the heatmaps show it

      id = launchOne(launcher, writePreset(QStringLiteral("follow"), 30, 3));
      QVERIFY(!id.isEmpty());
      // While it runs: its checkpoints on the slider, its live grades in A.
      QTRY_VERIFY_WITH_TIMEOUT(heat->timeline()->steps().size() >= 2 &&
                                   onRun(heat, launcher->queue()->entry(id)->runDir),
                               kTimeoutMs);
      runDir = launcher->queue()->entry(id)->runDir;
      QCOMPARE(launcher->queue()->entry(id)->status, QString("running"));
      QVERIFY2(heat->sourceA().startsWith("live: follow"), qPrintable(heat->sourceA()));
      launcher->queue()->cancel(id);
      QTRY_COMPARE_WITH_TIMEOUT(launcher->queue()->entry(id)->status, QString("cancelled"),
                                kTimeoutMs);
      stoppedAt = launcher->queue()->entry(id)->step;
      QTRY_VERIFY_WITH_TIMEOUT(!heat->timeline()->busy() && !heat->timeline()->steps().isEmpty() &&
                                   heat->timeline()->steps().last() == stoppedAt,
                               kTimeoutMs);
      QVERIFY2(!anyLiveSource(heat), qPrintable(heat->sourceNames().join(", ")));
      QCOMPARE(heat->sourceA(), stepSource(runDir, stoppedAt));
    }
    // A restart: the window opens both runs; the user looks at the other; Resume follows `follow`.
    MainWindow w;
    auto* launcher = qobject_cast<LauncherPanel*>(w.panel(QStringLiteral("queue")));
    auto* heat = qobject_cast<HeatmapPanel*>(w.panel(QStringLiteral("heatmaps")));
    QVERIFY(w.openRun(otherDir).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!heat->timeline()->busy() && heat->timeline()->steps().size() == 1,
                             kTimeoutMs);
    launcher->selectId(id);
    QVERIFY(launcher->resumeSelected().isEmpty());
    // At once (before a new checkpoint): the resumed run's checkpoints so far.
    QTRY_VERIFY_WITH_TIMEOUT(onRun(heat, runDir) && heat->timeline()->steps().size() >= 2 &&
                                 launcher->queue()->entry(id)->status == QString("running"),
                             kTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(launcher->queue()->entry(id)->status, QString("completed"),
                              kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!heat->timeline()->busy() && heat->timeline()->steps().last() == 30,
                             kTimeoutMs);
    QVERIFY(onRun(heat, runDir));
    QVERIFY2(!anyLiveSource(heat), qPrintable(heat->sourceNames().join(", ")));
    QCOMPARE(heat->sourceA(), stepSource(runDir, 30));
  }

  // Point 4: the committed route-2 results open from the command line's way in (openRun of a
  // folder of runs): Monitor, Compare and Ladder on it; its 30 runs pair as 6 arms over 5 seeds
  // (forks with per-seed ladder files included); one seed per arm gives no interval, not a
  // zero-width bold one; a folder holding no run says so in the window.
  void committedResultsOpenAndPair() {
    const QString results = QDir::cleanPath(
        QString::fromStdString(test::source_file("bench/results/ladder-route2-20261202")));
    QVERIFY2(QDir(results).exists(), qPrintable(results));
    MainWindow w;
    auto* compare = qobject_cast<ComparePanel*>(w.panel(QStringLiteral("compare")));
    auto* ladder = qobject_cast<LadderPanel*>(w.panel(QStringLiteral("ladder")));
    auto* monitor = qobject_cast<MonitorPanel*>(w.panel(QStringLiteral("monitor")));
    QVERIFY(compare && ladder && monitor);
    QVERIFY(w.openRun(results).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(
        !compare->busy() && compare->runsFolder() == results && !compare->arms().isEmpty(),
        kTimeoutMs);
    QCOMPARE(ladder->runsFolder(), results);
    QCOMPARE(compare->arms().size(), 6);
    for (const QString& a : compare->arms()) QVERIFY2(!a.contains('#'), qPrintable(a));
    QTRY_VERIFY_WITH_TIMEOUT(monitor->runs().size() >= 30, kTimeoutMs);
    QTableWidget* delta = compare->deltaTable();
    for (int r = 0; r < delta->rowCount(); ++r)
      if (delta->item(r, 6)) QCOMPARE(delta->item(r, 6)->text().section('/', 1), QString("5"));

    // One seed of two arms: n = 1, no interval drawn, nothing bold.
    const std::string one = tmp_.filePath("one-seed").toStdString();
    std::filesystem::create_directories(one);
    for (const char* run : {"ladder-uniform-s41", "ladder-educated-s41"})
      std::filesystem::copy(test::source_file("bench/results/ladder-route2-20261202/") + run,
                            one + "/" + run, std::filesystem::copy_options::recursive);
    compare->setRunsFolder(QString::fromStdString(one));
    QTRY_VERIFY_WITH_TIMEOUT(!compare->busy() && compare->arms().size() == 2, kTimeoutMs);
    bool sawOne = false;
    for (int r = 0; r < delta->rowCount(); ++r) {
      if (!delta->item(r, 5)) continue;
      sawOne = true;
      QVERIFY2(delta->item(r, 5)->text().contains("no interval"),
               qPrintable(delta->item(r, 5)->text()));
      QVERIFY(!delta->item(r, 3)->font().bold());
    }
    QVERIFY(sawOne);

    // A folder with no run in it: the window says so.
    QDir(tmp_.path()).mkdir(QStringLiteral("empty"));
    QVERIFY(w.openRun(tmp_.filePath("empty")).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains("holds no run folder"),
                             kTimeoutMs);
  }
};

QTEST_MAIN(TestRoundThree)
#include "test_widgets_round_three.moc"
