// RunQueue implementation: one Trainer at a time, started on a worker thread (the result comes back
// queued); the bridge's queued signals update the entry; the file is rewritten on state changes.
#include "widgets/run_queue.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "engine/config/run_identity.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/train/trainer.h"
#include "widgets/run_bridge.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
nlohmann::json tagsJson(const QStringList& tags) {
  nlohmann::json a = nlohmann::json::array();
  for (const QString& t : tags) a.push_back(ss(t));
  return a;
}
}  // namespace

RunQueue::RunQueue(QString queueFile, QString runsParent, QObject* parent)
    : QObject(parent), m_file(std::move(queueFile)), m_runsParent(std::move(runsParent)) {
  RunBridge::registerTypes();
  m_saveWatcher = new QFutureWatcher<void>(this);
  connect(m_saveWatcher, &QFutureWatcher<void>::finished, this, [this] {
    if (m_progressPending) saveProgress();
  });
  load();
}

RunQueue::~RunQueue() {
  m_startFuture.waitForFinished();  // a start in flight uses the trainer and the bridge
  if (m_trainer) {
    m_trainer->cancel();
    m_trainer->wait();
  }
  // The step and BPB reached so far: after a restart the interrupted entry shows them.
  if (!m_runningId.isEmpty() || m_progressPending) save();
  m_saveFuture.waitForFinished();
}

QueueEntry* RunQueue::find(const QString& id) {
  for (auto& e : m_entries)
    if (e.id == id) return &e;
  return nullptr;
}

const QueueEntry* RunQueue::entry(const QString& id) const {
  for (const auto& e : m_entries)
    if (e.id == id) return &e;
  return nullptr;
}

void RunQueue::load() {
  m_entries.clear();
  if (!QFileInfo::exists(m_file)) return;
  try {
    const nlohmann::json j = read_json_file(ss(m_file), "", large_json_limits());
    for (const auto& o : j.at("entries")) {
      QueueEntry e;
      e.id = qs(o.value("id", ""));
      e.name = qs(o.value("name", ""));
      e.seed = o.value("seed", 0);
      e.config = o.value("config", nlohmann::json::object());
      e.status = qs(o.value("status", "queued"));
      e.runDir = qs(o.value("run_dir", ""));
      e.forkFrom = qs(o.value("fork", ""));
      e.step = o.value("step", int64_t(0));
      e.totalSteps = o.value("total_steps", int64_t(0));
      e.valBpb = o.value("val_bpb", -1.0);
      e.valStep = o.value("val_step", int64_t(-1));
      e.heldoutBpb = o.value("heldout_bpb", -1.0);
      e.message = qs(o.value("message", ""));
      e.preset = o.value("preset", nlohmann::json());
      for (const auto& t : o.value("tags", nlohmann::json::array()))
        if (t.is_string()) e.tags << qs(t.get<std::string>());
      e.note = qs(o.value("note", ""));
      // The app stopped while this ran: its folder holds checkpoints to resume from.
      if (e.status == QLatin1String("running")) {
        e.status = QStringLiteral("interrupted");
        e.message =
            tr("the workbench stopped during this run; Resume continues from its last checkpoint");
      }
      if (!e.id.isEmpty()) m_entries.push_back(e);
    }
  } catch (const std::exception& ex) {
    m_lastError = tr("could not read the queue %1: %2 (the file was left as is; fix or delete it)")
                      .arg(m_file, ex.what());
  }
}

std::string RunQueue::queueText() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& e : m_entries) {
    arr.push_back({{"id", ss(e.id)},
                   {"name", ss(e.name)},
                   {"seed", e.seed},
                   {"config", e.config},
                   {"status", ss(e.status)},
                   {"run_dir", ss(e.runDir)},
                   {"fork", ss(e.forkFrom)},
                   {"step", e.step},
                   {"total_steps", e.totalSteps},
                   {"val_bpb", e.valBpb},
                   {"val_step", e.valStep},
                   {"heldout_bpb", e.heldoutBpb},
                   {"message", ss(e.message)},
                   {"preset", e.preset},
                   {"tags", tagsJson(e.tags)},
                   {"note", ss(e.note)}});
  }
  return nlohmann::json({{"format", "gllm-queue/1"}, {"entries", arr}}).dump(2) + "\n";
}

void RunQueue::save() {
  m_saveFuture.waitForFinished();  // one writer of the file at a time (a progress save is quick)
  m_progressPending = false;
  try {
    const QString dir = QFileInfo(m_file).absolutePath();
    QDir().mkpath(dir);
    write_file_atomic(ss(m_file), queueText());
  } catch (const Error& e) {
    m_lastError = qs(e.what());
  }
}

void RunQueue::saveProgress() {
  if (m_saveFuture.isRunning()) {
    m_progressPending = true;  // written when the running write ends
    return;
  }
  m_progressPending = false;
  const std::string file = ss(m_file), text = queueText();
  // The GUI thread never waits on the disk for a progress save: write and fsync on a worker.
  m_saveFuture = QtConcurrent::run([file, text] {
    try {
      write_file_atomic(file, text);
    } catch (const std::exception&) {
      // the next save (start, finish, quit) reports a failing disk
    }
  });
  m_saveWatcher->setFuture(m_saveFuture);
}

QStringList RunQueue::enqueue(const RunConfig& config, const QList<int>& seeds,
                              const nlohmann::json& preset, const QString& forkFrom) {
  QStringList ids;
  std::vector<QueueEntry> made;
  for (int seed : seeds) {
    RunConfig c = config;
    set_config_value(c, "train.seed", seed);  // validates; throws ConfigError with the range
    QueueEntry e;
    e.id = QUuid::createUuid().toString(QUuid::WithoutBraces).left(8);
    e.name = qs(c.name);
    e.seed = seed;
    e.config = c.to_json();
    e.totalSteps = c.train.steps;
    e.forkFrom = forkFrom;
    e.preset = preset;
    made.push_back(e);
  }
  for (auto& e : made) {
    ids << e.id;
    m_entries.push_back(e);
  }
  save();
  Q_EMIT changed();
  if (m_autoStart) startNext();
  return ids;
}

bool RunQueue::annotate(const QString& id, const QStringList& tags, const QString& note) {
  QueueEntry* e = find(id);
  if (!e) return false;
  e->tags.clear();
  for (const QString& t : tags)
    if (!t.trimmed().isEmpty() && !e->tags.contains(t.trimmed())) e->tags << t.trimmed();
  e->note = note.trimmed();
  save();
  Q_EMIT changed();
  return true;
}

QString RunQueue::configDiff(const QString& id) const {
  const QueueEntry* e = entry(id);
  if (!e || !e->preset.is_object()) return {};
  return qs(describe_changes(config_changes(e->config, e->preset)));
}

bool RunQueue::remove(const QString& id) {
  if (id == m_runningId) return false;
  for (int i = 0; i < m_entries.size(); ++i) {
    if (m_entries[i].id == id) {
      m_entries.removeAt(i);
      save();
      Q_EMIT changed();
      return true;
    }
  }
  return false;
}

bool RunQueue::cancel(const QString& id) {
  QueueEntry* e = find(id);
  if (!e) return false;
  if (id == m_runningId && m_trainer) {
    e->message = tr("cancelling…");
    // While the run is being started, the trainer is not ready for the flag: set it once it is.
    if (m_starting)
      m_cancelWhenStarted = true;
    else
      m_trainer->cancel();  // the worker reports on_finished("cancelled") within one step
    Q_EMIT changed();
    return true;
  }
  if (e->status == QLatin1String("queued")) {
    e->status = QStringLiteral("cancelled");
    e->message = e->runDir.isEmpty() ? tr("cancelled before it started") : e->message;
    save();
    Q_EMIT changed();
    return true;
  }
  return false;
}

bool RunQueue::resume(const QString& id) {
  QueueEntry* e = find(id);
  if (!e || !e->resumable()) return false;
  e->status = QStringLiteral("queued");
  e->message = tr("resume from %1").arg(e->runDir);
  save();
  Q_EMIT changed();
  if (m_autoStart) startNext();
  return true;
}

void RunQueue::setAutoStart(bool on) {
  m_autoStart = on;
  if (on) startNext();
}

void RunQueue::startNext() {
  if (!m_runningId.isEmpty()) return;
  for (auto& e : m_entries) {
    if (e.status == QLatin1String("queued")) {
      launch(e);
      return;
    }
  }
}

void RunQueue::launch(QueueEntry& e) {
  m_trainer = std::make_unique<Trainer>();
  delete m_bridge;
  m_bridge = new RunBridge(this);
  const QString id = e.id;
  connect(
      m_bridge, &RunBridge::started, this,
      [this, id](const QString& dir, qint64, qint64 total) {
        if (QueueEntry* x = find(id)) {
          x->runDir = dir;
          x->totalSteps = total;
          save();
          Q_EMIT runStarted(id, dir);
          Q_EMIT changed();
        }
      },
      Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::step, this,
      [this, id](const StepRecord& r) {
        if (QueueEntry* x = find(id)) {
          x->step = r.step;
          x->totalSteps = r.total_steps;
        }
        Q_EMIT step(id, r);
      },
      Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::eval, this,
      [this, id](const EvalRecord& r) {
        if (QueueEntry* x = find(id)) {
          (r.split == "heldout" ? x->heldoutBpb : x->valBpb) = r.bpb;
          if (r.split != "heldout") x->valStep = r.step;
          x->step = std::max<qint64>(x->step, r.step);
        }
        saveProgress();  // the queue file keeps the progress a crash would lose
        Q_EMIT eval(id, r);
        Q_EMIT changed();
      },
      Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::checkpoint, this,
      [this, id](const CheckpointRecord& r) { Q_EMIT checkpoint(id, r); }, Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::log, this, [this, id](const QString& line) { Q_EMIT log(id, line); },
      Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::finished, this,
      [this, id](const FinishedRecord& r) {
        if (QueueEntry* x = find(id)) {
          x->step = r.step;
          if (r.val_bpb >= 0) x->valBpb = r.val_bpb, x->valStep = r.val_bpb_step;
          if (r.heldout_bpb >= 0) x->heldoutBpb = r.heldout_bpb;
        }
        finish(id, qs(r.status), qs(r.message));
      },
      Qt::QueuedConnection);
  connect(
      m_bridge, &RunBridge::error, this,
      [this, id](const QString& msg) { finish(id, QStringLiteral("failed"), msg); },
      Qt::QueuedConnection);

  m_runningId = id;
  const bool resuming = !e.runDir.isEmpty();
  e.status = QStringLiteral("running");
  e.message = resuming ? tr("verifying the checkpoints…") : tr("starting…");
  // Trainer::start writes the run folder; Trainer::resume verifies the checkpoints' sizes and
  // SHA-512 digests. Both run on a worker thread; the outcome comes back as a queued call.
  m_starting = true;
  m_cancelWhenStarted = m_finishWhenStarted = false;
  const int launchNo = ++m_launch;
  Trainer* trainer = m_trainer.get();
  RunBridge* bridge = m_bridge;
  const std::string runDir = ss(e.runDir), parent = ss(m_runsParent);
  const std::string folderName = ss(e.name) + "-s" + std::to_string(e.seed);
  const nlohmann::json config = e.config;
  TrainerOptions options;
  options.fork_from = ss(e.forkFrom);
  m_startFuture = QtConcurrent::run(
      [this, id, launchNo, trainer, bridge, resuming, runDir, parent, folderName, config, options] {
        QString dir = qs(runDir), error;
        try {
          if (resuming) {
            trainer->resume(runDir, bridge);
          } else {
            const RunConfig c = RunConfig::from_json(config);
            QDir().mkpath(qs(parent));
            const std::string made = new_run_dir(parent, folderName);
            dir = qs(made);
            trainer->start(c, made, bridge, options);
          }
        } catch (const std::exception& ex) {
          error = qs(ex.what());
          if (error.isEmpty()) error = tr("the run could not start");
        }
        QMetaObject::invokeMethod(
            this, [this, id, launchNo, dir, error] { started(id, launchNo, dir, error); },
            Qt::QueuedConnection);
      });
  save();
  Q_EMIT changed();
}

void RunQueue::started(const QString& id, int launchNo, const QString& runDir,
                       const QString& error) {
  if (launchNo != m_launch || id != m_runningId) return;
  m_starting = false;
  QueueEntry* e = find(id);
  if (!error.isEmpty()) {
    m_startFuture.waitForFinished();  // the worker has posted this call; it ends at once
    m_trainer.reset();
    m_runningId.clear();
    if (e) {
      if (e->runDir.isEmpty()) e->runDir = runDir;  // as before: a failed start keeps its folder
      e->status = QStringLiteral("failed");
      e->message = error;
    }
    save();
    Q_EMIT changed();
    Q_EMIT runFinished(id, QStringLiteral("failed"));
    if (m_autoStart) QMetaObject::invokeMethod(this, &RunQueue::startNext, Qt::QueuedConnection);
    return;
  }
  if (e) {
    if (e->runDir.isEmpty()) e->runDir = runDir;
    if (e->message == tr("starting…") || e->message == tr("verifying the checkpoints…"))
      e->message.clear();
  }
  save();
  Q_EMIT changed();
  if (m_finishWhenStarted) {
    m_finishWhenStarted = false;
    finish(id, m_pendingStatus, m_pendingMessage);
    return;
  }
  if (m_cancelWhenStarted && m_trainer) m_trainer->cancel();
}

void RunQueue::finish(const QString& id, const QString& status, const QString& message) {
  if (id != m_runningId) return;
  if (m_starting) {
    // The run ended before the worker that started it reported back: finish after it has.
    m_finishWhenStarted = true;
    m_pendingStatus = status;
    m_pendingMessage = message;
    return;
  }
  if (m_trainer) m_trainer->wait();  // the worker has reported its last event; joining is quick
  m_trainer.reset();
  m_runningId.clear();
  if (QueueEntry* x = find(id)) {
    x->status = status;
    x->message = message;
  }
  save();
  Q_EMIT changed();
  Q_EMIT runFinished(id, status);
  if (m_autoStart) QMetaObject::invokeMethod(this, &RunQueue::startNext, Qt::QueuedConnection);
}

bool RunQueue::waitIdle(int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    bool busy = !m_runningId.isEmpty();
    if (!busy && m_autoStart)
      for (const auto& e : m_entries) busy = busy || e.status == QLatin1String("queued");
    if (!busy) return true;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return false;
}

}  // namespace gllm::gui
