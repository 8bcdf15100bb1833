// A researcher's day, round two (issue 42), points 3, 4 and 6: the heatmaps follow a run's
// checkpoints as they are written, committed results open and pair, the layout stays.
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QTableWidget>
#include <QtTest>
#include <algorithm>
#include <filesystem>

#include "engine/config/run_config.h"
#include "engine/io/atomic_file.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"
#include "tests/support/workbench_env.h"
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

// The part of `w` its dock's scroll area shows, in w's coordinates.
QRect shownPart(QWidget* w) {
  QWidget* p = w;
  while (p && !qobject_cast<QScrollArea*>(p)) p = p->parentWidget();
  auto* area = qobject_cast<QScrollArea*>(p);
  if (!area) return w->rect();
  const QRect viewport(w->mapFrom(area->viewport(), QPoint(0, 0)), area->viewport()->size());
  return w->rect().intersected(viewport);
}

// Rows of the Runs table in view (header excluded): what the user sees of it without scrolling.
double rowsInView(QTableWidget* t) {
  const int shown = shownPart(t).height() - t->horizontalHeader()->height() - 2 * t->frameWidth();
  return double(shown) / double(t->verticalHeader()->defaultSectionSize());
}

void settle() {
  for (int i = 0; i < 6; ++i) {
    QApplication::processEvents(QEventLoop::AllEvents, 30);
    QTest::qWait(20);
  }
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
    test::isolate_workbench(tmp_);
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

  // Point 6: at 1280 × 800 the Runs table shows rows, not just its header; each panel under the
  // Monitor keeps the height it was given across tab switches, and the layout (heights, the raised
  // tab) comes back after a restart; a long status message does not widen the panel.
  void layoutStays() {
    QTemporaryDir dir;
    qputenv("GLLM_WORKBENCH_SETTINGS", dir.filePath("settings.conf").toUtf8());
    qunsetenv("GLLM_WORKBENCH_NO_SETTINGS");
    const QSize size(1280, 800);
    int chosen = 0;
    {
      MainWindow w;
      auto* launcher = qobject_cast<LauncherPanel*>(w.panel(QStringLiteral("queue")));
      // Three cluster runs listed (names as long as the ladder's).
      QVector<ClusterRunView> views;
      for (int seed : {41, 42, 47}) {
        ClusterRunView v;
        v.dir = tmp_.filePath(QString("ladder-educated-s%1").arg(seed));
        v.label = QStringLiteral("ladder-educated+steps=30");
        v.state = QStringLiteral("unknown");
        v.detail = QStringLiteral("the scheduler is not reachable: unknown host");
        v.seed = seed;
        v.step = v.totalSteps = 30;
        v.valBpb = 2.29;
        v.heldoutBpb = 2.25;
        views << v;
      }
      QVERIFY(w.saveScreenshot(dir.filePath("runs.png"), QStringLiteral("queue"), size).isEmpty());
      launcher->setClusterRuns(views);
      settle();
      QTableWidget* table = launcher->table();
      QVERIFY(table->rowCount() >= 3);  // with the runs of the queue before
      // Point 7: a val BPB from an evaluation before the run's last step says which step.
      {
        QVector<ClusterRunView> cancelled = views;
        cancelled[0].step = 60;
        cancelled[0].totalSteps = 100;
        cancelled[0].valStep = 50;
        cancelled[1].valStep = 30;  // measured at its last step: no mark
        launcher->setClusterRuns(cancelled);
        const int first = table->rowCount() - 3;
        QCOMPARE(table->item(first, 4)->text(), QStringLiteral("2.2900 @50"));
        QVERIFY(table->item(first, 4)->toolTip().contains("step 50"));
        QCOMPARE(table->item(first + 1, 4)->text(), QStringLiteral("2.2900"));
        launcher->setClusterRuns(views);
      }
      // The names read whole where the columns leave the room (they do at 1280 px).
      const int nameNeeds = table->fontMetrics().horizontalAdvance(views[0].label);
      QVERIFY2(table->columnWidth(0) >= nameNeeds,
               qPrintable(QString("Run column %1 px for %2 px of name")
                              .arg(table->columnWidth(0))
                              .arg(nameNeeds)));
      QVERIFY2(rowsInView(table) >= 3.0,
               qPrintable(QString("%1 rows in view; Runs dock %2 px, Monitor dock %3 px")
                              .arg(rowsInView(table))
                              .arg(w.dock("queue")->height())
                              .arg(w.dock("monitor")->height())));
      // ... beside the Monitor's charts at their readable height: the Monitor needs no scrolling.
      auto* monitorArea =
          qobject_cast<QScrollArea*>(w.panel("monitor")->parentWidget()->parentWidget());
      QVERIFY(monitorArea);
      QVERIFY2(!monitorArea->verticalScrollBar()->isVisible(),
               qPrintable(QString("Monitor dock %1 px, its panel needs %2")
                              .arg(w.dock("monitor")->height())
                              .arg(w.panel("monitor")->minimumSizeHint().height())));
      const int first = w.dock(QStringLiteral("queue"))->height();
      // Away to Heatmaps and back: the Runs panel has the height it had.
      QVERIFY(w.showPanel(QStringLiteral("heatmaps")));
      settle();
      QVERIFY(w.showPanel(QStringLiteral("queue")));
      settle();
      QVERIFY2(std::abs(w.dock(QStringLiteral("queue"))->height() - first) <= 4,
               qPrintable(QString("%1 px, was %2").arg(w.dock("queue")->height()).arg(first)));
      QVERIFY(rowsInView(table) >= 3.0);
      // The user drags the separator between Monitor and Runs 90 px up: Runs taller. It stays so
      // across tab switches.
      const QRect m = w.dock("monitor")->geometry(), q = w.dock("queue")->geometry();
      const QPoint grip(m.center().x(), (m.bottom() + q.top()) / 2);
      auto mouse = [&w](QEvent::Type type, QPoint at, Qt::MouseButtons buttons) {
        QMouseEvent e(type, QPointF(at), QPointF(w.mapToGlobal(at)),
                      type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton, buttons, {});
        QApplication::sendEvent(&w, &e);
      };
      mouse(QEvent::MouseButtonPress, grip, Qt::LeftButton);
      for (int dy = 10; dy <= 90; dy += 10) {
        mouse(QEvent::MouseMove, grip - QPoint(0, dy), Qt::LeftButton);
        QApplication::processEvents();  // the window moves the separator on a zero timer
      }
      mouse(QEvent::MouseButtonRelease, grip - QPoint(0, 90), Qt::NoButton);
      settle();
      chosen = w.dock(QStringLiteral("queue"))->height();
      QVERIFY2(chosen > first + 40, qPrintable(QString("%1 px, was %2").arg(chosen).arg(first)));
      for (const QString& other : {QStringLiteral("compare"), QStringLiteral("inspector")}) {
        QVERIFY(w.showPanel(other));
        settle();
        QVERIFY(w.showPanel(QStringLiteral("queue")));
        settle();
        QVERIFY2(std::abs(w.dock(QStringLiteral("queue"))->height() - chosen) <= 4,
                 qPrintable(QString("after %1: %2 px, chosen %3")
                                .arg(other)
                                .arg(w.dock("queue")->height())
                                .arg(chosen)));
      }
      // A long message wraps under the table: the panel is no wider, Seeds stays in view.
      const int wide = w.panel(QStringLiteral("queue"))->minimumSizeHint().width();
      launcher->showClusterStatus(QString("sbatch refused the job array: ").repeated(20));
      settle();
      QVERIFY(w.panel(QStringLiteral("queue"))->minimumSizeHint().width() <= wide);
      auto* seeds = launcher->findChild<QLineEdit*>(QStringLiteral("seeds"));
      QVERIFY(seeds);
      QVERIFY2(shownPart(seeds).width() == seeds->width(),
               qPrintable(QString("Seeds %1 px wide, %2 shown")
                              .arg(seeds->width())
                              .arg(shownPart(seeds).width())));
      QVERIFY(w.showPanel(QStringLiteral("compare")));  // the tab raised when quitting
      settle();
      QVERIFY(w.close());
    }
    {
      MainWindow w;
      w.show();
      settle();
      // Compare raised as it was, and the Runs panel at the height the user gave it.
      // (a tab behind another is moved off-screen: nothing of it is in view).
      QVERIFY(!w.dock(QStringLiteral("compare"))->visibleRegion().isEmpty());
      QVERIFY(w.dock(QStringLiteral("queue"))->visibleRegion().isEmpty());
      QVERIFY(w.showPanel(QStringLiteral("queue")));
      settle();
      QVERIFY2(std::abs(w.dock(QStringLiteral("queue"))->height() - chosen) <= 4,
               qPrintable(QString("after a restart: %1 px, chosen %2")
                              .arg(w.dock("queue")->height())
                              .arg(chosen)));
      QVERIFY(w.close());
    }
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
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
    // Point 5: the arm names read whole (they were "lad…" beside the numbers).
    for (int r = 0; r < delta->rowCount(); ++r) {
      const QString n = delta->item(r, 0)->text();
      QVERIFY2(delta->columnWidth(0) >= delta->fontMetrics().horizontalAdvance(n) + 16,
               qPrintable(QString("'%1' in %2 px").arg(n).arg(delta->columnWidth(0))));
    }
    // The Monitor draws the same 6 arms as seed groups of 5 (forks included), not 30 runs.
    // (other runs of the runs folder are in it too).
    // The runs' configs and curves arrive from workers one run at a time: a group drawn before
    // all its seeds are read says "3 seeds" for a while (CI saw it), so the wait is for the
    // whole picture — six groups, each of five seeds.
    auto ladderEntries = [&] { return monitor->legendEntries().filter("ladder-"); };
    auto allOfFive = [&] {
      const QStringList e = ladderEntries();
      return e.size() == 6 && std::all_of(e.begin(), e.end(),
                                          [](const QString& x) { return x.endsWith("5 seeds"); });
    };
    QTRY_VERIFY2_WITH_TIMEOUT(allOfFive(), qPrintable(ladderEntries().join(" | ")), kTimeoutMs);
    // Once every run is read the status bar still says what the folder held (each run's read
    // used to replace it with "Opened …/ladder-uniform-s49", as if one run had been opened).
    QTRY_VERIFY_WITH_TIMEOUT(w.pendingReads() == 0, kTimeoutMs);
    QVERIFY2(w.statusBar()->currentMessage().startsWith("Opened 30 run(s) from " + results),
             qPrintable(w.statusBar()->currentMessage()));

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
