// A checkpoint timeline (issue 28): a tiny run keeps checkpoints at steps 2, 4 and 6; the step
// slider of the inspector and of the Heatmaps lists them and opens the one chosen, off the GUI
// thread.
#include <QSignalSpy>
#include <QSlider>
#include <QtTest>

#include "tests/support/test_configs.h"
#include "widgets/checkpoint_timeline.h"
#include "widgets/heatmap_panel.h"
#include "widgets/inspector_panel.h"
#include "widgets/main_window.h"
#include "widgets/run_queue.h"

using namespace gllm;
using namespace gllm::gui;

class TestCheckpointTimeline : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString runDir_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("window-queue.json").toUtf8());
    qputenv("GLLM_RUNS", tmp_.filePath("other-runs").toUtf8());
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    RunConfig c = test::tiny_text_run(6);
    c.name = "timeline";
    c.train.checkpoint_every = 2;
    c.train.keep_checkpoints = 5;
    RunQueue queue(tmp_.filePath("queue.json"), tmp_.filePath("runs"));
    queue.enqueue(c, {5});
    QVERIFY(queue.waitIdle(180000));
    QCOMPARE(queue.entries()[0].status, QStringLiteral("completed"));
    runDir_ = queue.entries()[0].runDir;
  }

  void inspectorFollowsTheSlider() {
    InspectorPanel inspector;
    QSignalSpy opened(&inspector, &InspectorPanel::opened);
    inspector.open(runDir_);
    QVERIFY(inspector.waitForResult(60000));
    CheckpointTimeline* t = inspector.timeline();
    QCOMPARE(t->steps(), QVector<qint64>({2, 4, 6}));
    QCOMPARE(t->currentStep(), qint64(6));  // a run opens on its newest checkpoint
    QVERIFY(t->slider()->isEnabled());
    QVERIFY(opened.last()[0].toString().endsWith("step_000006.safetensors"));
    t->chooseStep(2);
    QTRY_VERIFY_WITH_TIMEOUT(opened.size() >= 2, 30000);
    QVERIFY(inspector.waitForResult(60000));
    QVERIFY2(opened.last()[0].toString().endsWith("step_000002.safetensors"),
             qPrintable(opened.last()[0].toString()));
    QCOMPARE(t->currentStep(), qint64(2));  // the slider stays where it was put
    // Opening one checkpoint of the run puts the slider on it.
    inspector.open(runDir_ + "/checkpoints/step_000004.safetensors");
    QVERIFY(inspector.waitForResult(60000));
    QCOMPARE(t->currentStep(), qint64(4));
  }

  void heatmapsFollowTheSlider() {
    MainWindow w;
    QVERIFY(w.openRun(runDir_).isEmpty());
    QVERIFY(w.waitForIdle(60000));
    auto* heatmaps = qobject_cast<HeatmapPanel*>(w.panel("heatmaps"));
    QVERIFY(heatmaps);
    CheckpointTimeline* t = heatmaps->timeline();
    QCOMPARE(t->steps(), QVector<qint64>({2, 4, 6}));
    const QString run = QDir(runDir_).dirName();
    t->chooseStep(4);
    QTRY_COMPARE_WITH_TIMEOUT(heatmaps->sourceA(), run + "/step_000004", 30000);
    t->chooseStep(2);
    QTRY_COMPARE_WITH_TIMEOUT(heatmaps->sourceA(), run + "/step_000002", 30000);
    QVERIFY(heatmaps->sourceNames().contains(run + "/step_000004"));
  }
};

QTEST_MAIN(TestCheckpointTimeline)
#include "test_widgets_checkpoint_timeline.moc"
