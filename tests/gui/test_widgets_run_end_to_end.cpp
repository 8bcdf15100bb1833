// End to end through the workbench window: the launcher trains a tiny Brown-corpus run edited in
// the preset form; Cancel stops it within a step, a restart finds the queue on disk, Resume
// completes it.
#include <QDir>
#include <QFile>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QtTest>
#include <set>

#include "engine/data/brown_fetch.h"
#include "engine/io/atomic_file.h"
#include "engine/train/run_store.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

const int kSteps = 6;
const int kTimeoutMs = 120000;  // per wait; a run of the tiny config takes seconds
// The monitor keys a run by its folder's name ("<name>-s<seed>-<start time>").
QString runKey(const QString& runDir) {
  return QDir(runDir).dirName();
}

QPushButton* button(LauncherPanel* launcher, const QString& text) {
  for (QPushButton* b : launcher->findChildren<QPushButton*>())
    if (b->text() == text) return b;
  return nullptr;
}

// The row the launcher shows for `id`: status text and the progress bar's text.
QString shownStatus(LauncherPanel* launcher, const QString& id) {
  QTableWidget* t = launcher->table();
  for (int i = 0; i < t->rowCount(); ++i)
    if (t->item(i, 0)->data(Qt::UserRole).toString() == id) return t->item(i, 2)->text();
  return {};
}
QString shownProgress(LauncherPanel* launcher, const QString& id) {
  QTableWidget* t = launcher->table();
  for (int i = 0; i < t->rowCount(); ++i)
    if (t->item(i, 0)->data(Qt::UserRole).toString() == id)
      if (auto* bar = qobject_cast<QProgressBar*>(t->cellWidget(i, 3))) return bar->format();
  return {};
}

// Steps of the training records in a run folder's metrics.jsonl, in file order.
std::vector<int64_t> lossSteps(const QString& dir) {
  std::vector<int64_t> out;
  const QString f = dir + QStringLiteral("/metrics.jsonl");
  if (!QFile::exists(f)) return out;
  for (const auto& r : read_metrics(f.toStdString()).records)
    if (r.contains("loss") && r["loss"].is_number()) out.push_back(r["step"].get<int64_t>());
  return out;
}

nlohmann::json summary(const QString& dir) {
  return nlohmann::json::parse(read_file((dir + QStringLiteral("/summary.json")).toStdString()));
}

bool hasCheckpoint(const QString& dir, int64_t step) {
  const QString base =
      dir + QStringLiteral("/checkpoints/step_%1").arg(step, 6, 10, QLatin1Char('0'));
  return QFile::exists(base + QStringLiteral(".safetensors")) &&
         QFile::exists(base + QStringLiteral(".json"));
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t s = from; s <= to; ++s) v.push_back(s);
  return v;
}

}  // namespace

class TestRunEndToEnd : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  struct Window {
    MainWindow w;
    LauncherPanel* launcher = nullptr;
    PresetForm* form = nullptr;
    MonitorPanel* monitor = nullptr;
    RunQueue* queue = nullptr;
    Window() {
      w.resize(1280, 800);
      w.show();
      w.showPanel(QStringLiteral("queue"));
      launcher = qobject_cast<LauncherPanel*>(w.panel(QStringLiteral("queue")));
      form = qobject_cast<PresetForm*>(w.panel(QStringLiteral("preset")));
      monitor = qobject_cast<MonitorPanel*>(w.panel(QStringLiteral("monitor")));
      queue = launcher ? launcher->queue() : nullptr;
    }
  };

 private Q_SLOTS:
  void initTestCase() {
    if (!brown_corpus_present()) QSKIP("Brown corpus not fetched; run `gllm data fetch`");
    QVERIFY(tmp_.isValid());
    // The window keeps its queue and run folders here, and leaves the user's settings alone.
    qputenv("GLLM_RUNS", tmp_.filePath("runs").toUtf8());
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
  }

  void launchCancelRestartResume() {
    QElapsedTimer clock;
    clock.start();
    QString id, runDir;
    int64_t cancelledAt = 0, interruptedAt = 0;
    {
      Window a;
      QVERIFY(a.launcher && a.form && a.monitor && a.queue);
      QVERIFY(QTest::qWaitForWindowExposed(&a.w));
      QVERIFY(a.queue->entries().isEmpty());
      // The tiny-cpu preset scaled down in the form, field by field as a user edits it.
      QVERIFY(a.launcher->choosePreset(QStringLiteral("tiny-cpu")).isEmpty());
      const std::pair<const char*, const char*> edits[] = {{"name", "e2e-tiny"},
                                                           {"model.n_layer", "2"},
                                                           {"model.n_embd", "64"},
                                                           {"model.sequence_len", "64"},
                                                           {"train.device_batch", "2"},
                                                           {"train.steps", "6"},
                                                           {"train.eval_every", "3"},
                                                           {"train.eval_tokens", "4096"},
                                                           {"train.heldout_tokens", "4096"}};
      for (const auto& [path, text] : edits)
        QVERIFY2(a.form->editField(path, text),
                 qPrintable(QString("%1: %2").arg(path, a.form->fieldError(path))));
      QCOMPARE(a.form->config().train.steps, int64_t(kSteps));
      QCOMPARE(a.form->config().model.n_layer, 2);
      a.launcher->setSeedsText(QStringLiteral("7"));

      // Cancel (the button) as soon as the first step reaches the window.
      QPushButton* cancel = button(a.launcher, QStringLiteral("Cancel"));
      QPushButton* resume = button(a.launcher, QStringLiteral("Resume"));
      QVERIFY(cancel && resume);
      int64_t onDiskAtCancel = -1;
      bool cancelEnabled = false;
      QMetaObject::Connection c =
          connect(a.queue, &RunQueue::step, this, [&](const QString& rid, const StepRecord&) {
            if (onDiskAtCancel >= 0 || rid != id) return;
            cancelEnabled = cancel->isEnabled();
            cancel->click();
            // The stop flag is set now; the worker may finish the step it is in, no more.
            const auto steps = lossSteps(a.queue->entry(id)->runDir);
            onDiskAtCancel = steps.empty() ? 0 : steps.back();
          });
      QPushButton* launch = button(a.launcher, QStringLiteral("Launch"));
      QVERIFY(launch);
      launch->click();
      QCOMPARE(a.queue->entries().size(), 1);
      id = a.queue->entries()[0].id;
      QCOMPARE(a.launcher->selectedId(), id);
      QTRY_COMPARE_WITH_TIMEOUT(a.queue->entry(id)->status, QStringLiteral("cancelled"),
                                kTimeoutMs);
      disconnect(c);
      QVERIFY(cancelEnabled);
      runDir = a.queue->entry(id)->runDir;
      cancelledAt = a.queue->entry(id)->step;
      qInfo("e2e: cancel pressed with step %lld on disk; the run stopped at step %lld (%lld ms)",
            (long long)onDiskAtCancel, (long long)cancelledAt, (long long)clock.elapsed());
      QVERIFY(onDiskAtCancel >= 1);
      QVERIFY2(cancelledAt <= onDiskAtCancel + 1, "cancel did not take effect within one step");
      QVERIFY(cancelledAt < kSteps);
      QCOMPARE(shownStatus(a.launcher, id), QStringLiteral("cancelled"));
      QCOMPARE(shownProgress(a.launcher, id),
               QStringLiteral("%1 / %2").arg(cancelledAt).arg(kSteps));
      // The folder holds what a resume needs: config, metrics up to the stop, a checkpoint there.
      QVERIFY(QFile::exists(runDir + "/config.json"));
      QCOMPARE(lossSteps(runDir), range(1, cancelledAt));
      QVERIFY(hasCheckpoint(runDir, cancelledAt));
      QCOMPARE(summary(runDir)["status"].get<std::string>(), std::string("cancelled"));
      // The monitor drew the live loss curve.
      const auto& loss = a.monitor->points(runKey(runDir), QStringLiteral("loss"));
      QCOMPARE(loss.size(), size_t(cancelledAt));
      for (const auto& p : loss) QVERIFY(std::isfinite(p.value) && p.value > 0);
      a.monitor->redrawNow();
      QVERIFY(a.monitor->drawnPointCount(QStringLiteral("loss")) > 0);

      // Resume from the window, then quit the workbench while it runs (a restart).
      a.launcher->selectId(id);
      QVERIFY(resume->isEnabled());
      const size_t before = loss.size();
      resume->click();
      QCOMPARE(a.queue->entry(id)->status, QStringLiteral("running"));
      QTRY_VERIFY_WITH_TIMEOUT(
          a.monitor->points(runKey(runDir), QStringLiteral("loss")).size() > before, kTimeoutMs);
      QCOMPARE(a.monitor->points(runKey(runDir), QStringLiteral("loss"))[before].step,
               double(cancelledAt + 1));
    }  // the window closes: the queue stops the run (checkpoint) and keeps "running" on disk
    const auto afterQuit = lossSteps(runDir);
    QVERIFY(!afterQuit.empty());
    interruptedAt = afterQuit.back();
    QVERIFY(interruptedAt > cancelledAt);
    QCOMPARE(afterQuit, range(1, interruptedAt));
    QVERIFY(hasCheckpoint(runDir, interruptedAt));

    {
      Window b;  // the restarted workbench
      QVERIFY(b.launcher && b.monitor && b.queue);
      QCOMPARE(b.queue->entries().size(), 1);
      const QueueEntry* e = b.queue->entry(id);
      QVERIFY(e);
      QCOMPARE(e->status, QStringLiteral("interrupted"));
      QCOMPARE(e->runDir, runDir);
      QCOMPARE(e->seed, 7);
      QCOMPARE(e->config["model"]["n_embd"].get<int>(), 64);
      QCOMPARE(shownStatus(b.launcher, id), QStringLiteral("interrupted"));
      QVERIFY(b.queue->runningId().isEmpty());  // nothing starts by itself on opening
      b.launcher->selectId(id);
      QPushButton* resume = button(b.launcher, QStringLiteral("Resume"));
      QVERIFY(resume && resume->isEnabled());
      resume->click();
      QTRY_COMPARE_WITH_TIMEOUT(b.queue->entry(id)->status, QStringLiteral("completed"),
                                kTimeoutMs);
      e = b.queue->entry(id);
      QCOMPARE(e->step, int64_t(kSteps));
      QCOMPARE(e->totalSteps, int64_t(kSteps));
      QCOMPARE(shownStatus(b.launcher, id), QStringLiteral("completed"));
      QCOMPARE(shownProgress(b.launcher, id), QStringLiteral("%1 / %1").arg(kSteps));
      // Every step trained once across the three sessions, no gaps and no repeats.
      QCOMPARE(lossSteps(runDir), range(1, kSteps));
      QVERIFY(hasCheckpoint(runDir, kSteps));
      const auto s = summary(runDir);
      QCOMPARE(s["status"].get<std::string>(), std::string("completed"));
      QCOMPARE(s["step"].get<int64_t>(), int64_t(kSteps));
      // The monitor shows the whole history of the resumed run (read from its folder at startup
      // and on resume), each step once, then the live steps, and validation BPB.
      std::vector<int64_t> shown;
      for (const auto& p : b.monitor->points(runKey(runDir), QStringLiteral("loss")))
        shown.push_back(int64_t(p.step));
      QCOMPARE(shown, range(1, kSteps));
      QCOMPARE(b.monitor->runs(),
               QStringList({runKey(runDir)}));  // one run, not a second "2 seeds" copy
      // The launcher's status line says how the run ended, not "Resuming …".
      QVERIFY2(!b.launcher->statusText().contains("Resuming"),
               qPrintable(b.launcher->statusText()));
      const auto& val = b.monitor->points(runKey(runDir), QStringLiteral("val_bpb"));
      QVERIFY(!val.empty());
      QCOMPARE(val.back().step, double(kSteps));
      QVERIFY(val.back().value > 0 && val.back().value < 20);
      QCOMPARE(val.back().value, e->valBpb);
      QCOMPARE(b.monitor->points(runKey(runDir), QStringLiteral("heldout_bpb")).size(), size_t(1));
      for (const auto& p : val) QCOMPARE(std::fmod(p.step, 3.0), 0.0);  // eval_every 3
    }
    {
      Window c;  // once more: the finished entry is on disk as it was shown
      QCOMPARE(c.queue->entries().size(), 1);
      QCOMPARE(c.queue->entry(id)->status, QStringLiteral("completed"));
      QCOMPARE(c.queue->entry(id)->step, int64_t(kSteps));
      QCOMPARE(shownProgress(c.launcher, id), QStringLiteral("%1 / %1").arg(kSteps));
      QVERIFY(!c.queue->entry(id)->resumable());
    }
    qInfo("e2e: launch, cancel, restart and resume took %lld ms", (long long)clock.elapsed());
  }
};

QTEST_MAIN(TestRunEndToEnd)
#include "test_widgets_run_end_to_end.moc"
