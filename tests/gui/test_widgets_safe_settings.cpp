// Nothing changes by accident (issue 28, points 2, 3 and 5): the wheel leaves unfocused combo boxes
// alone, Launch and Queue refuse while a field is invalid, quitting during a run asks, the queue
// keeps a run's progress across a restart, and the run settings persist (QSettings).
#include <sys/stat.h>

#include <QComboBox>
#include <QFileInfo>
#include <QLineEdit>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QtTest>

#include "tests/support/test_configs.h"
#include "tests/support/workbench_env.h"
#include "widgets/compare_panel.h"
#include "widgets/grade_editor.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/wheel_guard.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

// One notch of the wheel (down) over the middle of `w`, delivered as the window system does.
void wheelOver(QWidget* w) {
  const QPointF local(w->width() / 2.0, w->height() / 2.0);
  QWheelEvent e(local, w->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton,
                Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(w, &e);
}

}  // namespace

class TestSafeSettings : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    test::isolate_workbench(tmp_);
    MainWindow::applyStyle();
  }

  // Point 2: scrolling the Run settings form over `storage` and `mlp` changes nothing.
  void wheelLeavesUnfocusedChoicesAlone() {
    WheelGuard::install();
    PresetForm form;
    form.resize(500, 400);
    form.show();
    QVERIFY(QTest::qWaitForWindowExposed(&form));
    for (const char* path : {"model.storage", "model.mlp"}) {
      auto* combo = qobject_cast<QComboBox*>(form.fieldEditor(path));
      QVERIFY2(combo, path);
      QCOMPARE(combo->focusPolicy(), Qt::StrongFocus);  // a wheel notch gives it no focus
      const QString before = form.fieldText(path);
      const int index = combo->currentIndex();
      for (int i = 0; i < 3; ++i) wheelOver(combo);
      QCOMPARE(combo->currentIndex(), index);
      QCOMPARE(form.fieldText(path), before);
      QVERIFY(!combo->hasFocus());
    }
    // Clicked (focused), the combo box still ignores the wheel (issue 42, point 7): only an
    // explicit click and choice changes it.
    auto* storage = qobject_cast<QComboBox*>(form.fieldEditor("model.storage"));
    form.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&form));
    storage->setFocus(Qt::MouseFocusReason);
    QTRY_VERIFY(storage->hasFocus());
    const QString before = form.fieldText("model.storage");
    wheelOver(storage);
    wheelOver(storage);
    QCOMPARE(form.fieldText("model.storage"), before);
    // The guard is what holds it: without it the same two notches change the choice.
    delete qApp->findChild<WheelGuard*>(QString(), Qt::FindDirectChildrenOnly);
    wheelOver(storage);
    wheelOver(storage);
    QVERIFY(form.fieldText("model.storage") != before);
    QCOMPARE(QString::fromStdString(form.config().model.storage), form.fieldText("model.storage"));
    WheelGuard::install();
  }

  // Point 3: steps "-5" in red and Launch refuses, naming the field; so does a typed value not
  // yet committed, and a refused clip in the grade editor.
  void launchRefusesWhileAFieldIsInvalid() {
    QTemporaryDir dir;
    PresetForm form;
    form.setConfig(test::tiny_text_run(5));
    RunQueue queue(dir.filePath("queue.json"), dir.filePath("runs"));
    queue.setAutoStart(false);
    LauncherPanel launcher(&queue, &form);
    GradeEditor grades;
    grades.setConfig(form.config());
    launcher.setExtraCheck([&] { return grades.invalidFields(); });

    QVERIFY(!form.editField("train.steps", "-5"));
    QCOMPARE(form.fieldText("train.steps"), QStringLiteral("-5"));
    for (bool start : {true, false}) {
      const QString why = launcher.launch(start);
      QVERIFY2(why.contains("train.steps"), qPrintable(why));
      QCOMPARE(launcher.refusal(), why);
      QVERIFY(queue.entries().isEmpty());
    }
    QVERIFY(form.editField("train.steps", "7"));
    // Typed but not yet committed (the field still has focus): checked before anything starts.
    qobject_cast<QLineEdit*>(form.fieldEditor("train.eval_every"))->setText("0.5");
    QString why = launcher.launch(false);
    QVERIFY2(why.contains("train.eval_every"), qPrintable(why));
    QVERIFY(queue.entries().isEmpty());
    QVERIFY(form.editField("train.eval_every", "2"));
    // The grade editor's refusals count too.
    QVERIFY(!grades.setClipText("abc").isEmpty());
    why = launcher.launch(false);
    QVERIFY2(why.contains("grading C"), qPrintable(why));
    QVERIFY(queue.entries().isEmpty());
    QVERIFY(grades.setClipText("4").isEmpty());
    // All valid: queued with the values shown.
    QVERIFY2(launcher.launch(false).isEmpty(), qPrintable(launcher.refusal()));
    QCOMPARE(queue.entries().size(), 1);
    QCOMPARE(queue.entries()[0].config["train"]["steps"].get<int>(), 7);
    QVERIFY(launcher.refusal().isEmpty());
  }

  // Point 5: Ctrl+Q during a run asks; after a restart the interrupted entry shows the step and
  // the validation BPB it reached.
  void quitDuringARunAsksAndKeepsProgress() {
    QTemporaryDir dir;
    qputenv("GLLM_RUNS", dir.filePath("runs").toUtf8());
    qputenv("GLLM_WORKBENCH_QUEUE", dir.filePath("queue.json").toUtf8());
    QString id;
    {
      MainWindow w;
      auto* form = qobject_cast<PresetForm*>(w.panel("preset"));
      auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
      QVERIFY(form && launcher);
      RunConfig c = test::tiny_text_run(4000);
      c.name = "quit-test";
      form->setConfig(c);
      launcher->setSeedsText("3");
      QStringList asked;
      bool answer = false;
      w.setQuitQuestion([&](const QString& q) {
        asked << q;
        return answer;
      });
      w.show();
      QVERIFY(w.close());  // nothing runs: no question
      QVERIFY(asked.isEmpty());
      w.show();
      QVERIFY2(launcher->launch(true).isEmpty(), qPrintable(launcher->refusal()));
      id = launcher->queue()->entries().value(0).id;
      QVERIFY(w.runInProgress());
      QVERIFY(!w.close());  // refused: the run goes on
      QCOMPARE(asked.size(), 1);
      QVERIFY2(asked[0].contains("quit-test") && asked[0].contains("Resume"), qPrintable(asked[0]));
      QVERIFY(w.isVisible());
      // Let it reach an evaluation (every 4 steps), then quit for real.
      QTRY_VERIFY_WITH_TIMEOUT(launcher->queue()->entry(id)->valBpb >= 0, 120000);
      QCOMPARE(launcher->queue()->entry(id)->status, QStringLiteral("running"));
      answer = true;
      QVERIFY(w.close());
      QCOMPARE(asked.size(), 2);
    }
    RunQueue reopened(dir.filePath("queue.json"), dir.filePath("runs"));
    reopened.setAutoStart(false);
    const QueueEntry* e = reopened.entry(id);
    QVERIFY(e);
    QCOMPARE(e->status, QStringLiteral("interrupted"));
    QVERIFY2(e->step >= 4, qPrintable(QString::number(e->step)));
    QVERIFY(e->valBpb > 0);
    QCOMPARE(e->totalSteps, qint64(4000));
    qputenv("GLLM_RUNS", tmp_.filePath("runs").toUtf8());
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
  }

  // Settings persist across restarts: the run settings, the seeds, the Compare folder.
  void settingsPersistAcrossRestarts() {
    QTemporaryDir dir;
    qputenv("GLLM_WORKBENCH_SETTINGS", dir.filePath("settings.conf").toUtf8());
    qunsetenv("GLLM_WORKBENCH_NO_SETTINGS");
    QDir().mkpath(dir.filePath("other-runs"));
    {
      MainWindow w;
      auto* form = qobject_cast<PresetForm*>(w.panel("preset"));
      auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
      QVERIFY(form->editField("train.steps", "37"));
      QVERIFY(form->editField("model.storage", "bf16"));
      launcher->setSeedsText("5, 6");
      auto* compare = qobject_cast<ComparePanel*>(w.panel("compare"));
      compare->setRunsFolder(dir.filePath("other-runs"));
      QVERIFY(w.waitForIdle());
      w.show();
      QVERIFY(w.close());
    }
    {
      MainWindow w;
      auto* form = qobject_cast<PresetForm*>(w.panel("preset"));
      auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
      auto* grades = qobject_cast<GradeEditor*>(w.panel("grades"));
      QCOMPARE(form->config().train.steps, int64_t(37));
      QCOMPARE(form->fieldText("model.storage"), QStringLiteral("bf16"));
      QCOMPARE(grades->config().train.steps, int64_t(37));  // the editor follows the settings
      QCOMPARE(launcher->seedsText(), QStringLiteral("5, 6"));
      auto* compare = qobject_cast<ComparePanel*>(w.panel("compare"));
      QCOMPARE(compare->runsFolder(), dir.filePath("other-runs"));
      QVERIFY(w.waitForIdle());
    }
    QVERIFY(QFileInfo(dir.filePath("settings.conf")).isFile());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
  }

  // A settings file that is a FIFO (or a folder) is refused by its kind, never opened: the
  // workbench starts with default settings, says why, and saves nothing over it.
  void settingsFileThatIsNotAFileIsRefused() {
    QTemporaryDir dir;
    const QString fifo = dir.filePath("fifo.conf");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    qputenv("GLLM_WORKBENCH_SETTINGS", fifo.toUtf8());
    qunsetenv("GLLM_WORKBENCH_NO_SETTINGS");
    {
      MainWindow w;  // would block in QSettings' first read of the FIFO
      QVERIFY2(w.statusBar()->currentMessage().contains("named pipe"),
               qPrintable(w.statusBar()->currentMessage()));
      QVERIFY(w.waitForIdle());
      w.show();
      QVERIFY(w.close());
    }
    QVERIFY(QFileInfo(fifo).exists() && !QFileInfo(fifo).isFile());  // left as it was
    // Saved run settings that are not a config (a key twice) are dropped with a message.
    const QString conf = dir.filePath("dup.conf");
    {
      QSettings s(conf, QSettings::IniFormat);
      s.setValue("settings/config", QByteArray(R"({"name": "a", "name": "b"})"));
    }
    qputenv("GLLM_WORKBENCH_SETTINGS", conf.toUtf8());
    {
      MainWindow w;
      QVERIFY2(w.statusBar()->currentMessage().contains("twice"),
               qPrintable(w.statusBar()->currentMessage()));
      QVERIFY(w.waitForIdle());
    }
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
  }

  // The first window fits the screen it opens on (not a fixed 1440 × 900).
  void initialSizeFitsTheScreen() {
    const QSize small = MainWindow::initialSize(QSize(1280, 770));
    QVERIFY(small.width() <= 1280 && small.height() <= 770 - 32);
    QVERIFY(small.width() >= 1200);
    const QSize hd = MainWindow::initialSize(QSize(1920, 1050));
    QVERIFY(hd.width() <= 1920 && hd.height() <= 1050 - 32);
    QVERIFY(hd.width() >= 1700 && hd.height() >= 900);
    const QSize tiny = MainWindow::initialSize(QSize(1024, 700));
    QVERIFY(tiny.width() <= 1024 && tiny.height() <= 700);
  }
};

QTEST_MAIN(TestSafeSettings)
#include "test_widgets_safe_settings.moc"
