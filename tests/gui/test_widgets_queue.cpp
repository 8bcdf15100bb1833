// GUI test of the run queue and launcher: seeds are parsed and refused with reasons, the queue is
// written atomically and survives re-creation (an app restart); a running entry comes back
// resumable.
#include <QTableWidget>
#include <QtTest>

#include "engine/config/run_config.h"
#include "widgets/launcher_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"

using namespace gllm;
using namespace gllm::gui;

class TestQueue : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void persistsAcrossRestart() {
    QTemporaryDir dir;
    const QString file = dir.filePath("queue.json");
    QStringList ids;
    {
      RunQueue q(file, dir.filePath("runs"));
      q.setAutoStart(false);
      PresetForm form;
      RunConfig c;
      c.name = "arm-a";
      form.setConfig(c);
      LauncherPanel launcher(&q, &form);
      launcher.setSeedsText("41, x");
      QVERIFY(launcher.launch(false).contains("not a seed"));
      QVERIFY(!launcher.seedError().isEmpty());
      QCOMPARE(q.entries().size(), 0);
      launcher.setSeedsText("41-43");
      QVERIFY(launcher.launch(false).isEmpty());  // Queue: added, not started
      QCOMPARE(q.entries().size(), 3);
      QCOMPARE(launcher.table()->rowCount(), 3);
      for (const auto& e : q.entries()) ids << e.id;
      for (const auto& e : q.entries()) QCOMPARE(e.status, QStringLiteral("queued"));
      QVERIFY(q.runningId().isEmpty());
      QVERIFY(!q.autoStart());
      launcher.selectId(ids[0]);
      QVERIFY(launcher.resumeSelected().contains(
          "only cancelled"));  // a queued entry has nothing to resume
      QVERIFY(q.cancel(ids[2]));
      QCOMPARE(q.entry(ids[2])->status, QStringLiteral("cancelled"));
    }
    QVERIFY(QFile::exists(file));
    RunQueue again(file, dir.filePath("runs"));
    again.setAutoStart(false);
    QCOMPARE(again.entries().size(), 3);
    QCOMPARE(again.entries()[0].seed, 41);
    QCOMPARE(again.entries()[2].seed, 43);
    QCOMPARE(again.entries()[2].status, QStringLiteral("cancelled"));
    QCOMPARE(again.entries()[1].config["train"]["seed"].get<int>(), 42);
    QCOMPARE(again.entries()[0].name, QStringLiteral("arm-a"));
    QVERIFY(again.remove(ids[0]));
    QCOMPARE(RunQueue(file, dir.filePath("runs")).entries().size(), 2);
  }
  void runningEntryBecomesInterrupted() {
    QTemporaryDir dir;
    const QString file = dir.filePath("queue.json");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        R"({"format":"gllm-queue/1","entries":[{"id":"abc","name":"tiny","seed":7,"config":{},"status":"running","run_dir":"/tmp/x","step":12,"total_steps":100}]})");
    f.close();
    RunQueue q(file, dir.filePath("runs"));
    q.setAutoStart(false);
    QCOMPARE(q.entries().size(), 1);
    QCOMPARE(q.entries()[0].status, QStringLiteral("interrupted"));
    QVERIFY(q.entries()[0].resumable());
    QCOMPARE(q.entries()[0].step, 12);
  }
  void corruptQueueIsReported() {
    QTemporaryDir dir;
    QFile f(dir.filePath("queue.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{not json");
    f.close();
    RunQueue q(f.fileName(), dir.path());
    QVERIFY(q.entries().isEmpty());
    QVERIFY(q.lastError().contains("could not read the queue"));
  }
};

QTEST_MAIN(TestQueue)
#include "test_widgets_queue.moc"
