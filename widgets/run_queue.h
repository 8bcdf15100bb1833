// RunQueue: the launcher's queue of runs (preset config × seed), executed one at a time on engine
// worker threads through the Trainer facade, persisted as JSON (atomic writes) across restarts.
#pragma once
#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QVector>
#include <map>
#include <memory>

#include "engine/config/run_config.h"
#include "engine/train/events.h"

namespace gllm {
class Trainer;
}

namespace gllm::gui {

class RunBridge;

struct QueueEntry {
  QString id;    // stable identifier
  QString name;  // config name (the preset / arm)
  int seed = 0;
  nlohmann::json config;  // the resolved RunConfig (seed applied)
  QString status =
      QStringLiteral("queued");  // queued|running|completed|cancelled|diverged|failed|interrupted
  QString runDir;                // set once started
  QString forkFrom;  // non-empty: starts from this checkpoint (engine/train/fork.h), its own grades
  qint64 step = 0, totalSteps = 0;
  double valBpb = -1, heldoutBpb = -1;
  qint64 valStep = -1;  // the step valBpb was measured at
  QString message;
  nlohmann::json preset;  // the preset's resolved config the run was made from (null: unknown)
  QStringList tags;       // the user's labels and note for the run
  QString note;
  bool resumable() const {
    return !runDir.isEmpty() &&
           (status == QLatin1String("cancelled") || status == QLatin1String("interrupted") ||
            status == QLatin1String("failed"));
  }
};

class RunQueue : public QObject {
  Q_OBJECT
 public:
  // `queueFile` holds the queue; `runsParent` receives new run folders.
  RunQueue(QString queueFile, QString runsParent, QObject* parent = nullptr);
  ~RunQueue() override;

  // Adds one entry per seed (the config's train.seed replaced); returns their ids. Throws
  // gllm::ConfigError when a seed is out of range.
  // `preset`: the preset the settings were made from (the run's name and diff); `forkFrom`: every
  // entry starts from that run's checkpoint (a run folder, RUN@STEP or a checkpoint file) with its
  // own grades (route 2 of the certificate).
  QStringList enqueue(const RunConfig& config, const QList<int>& seeds,
                      const nlohmann::json& preset = nullptr, const QString& forkFrom = QString());
  // Tags (trimmed, duplicates dropped) and a free-text note for a run; kept in the queue file.
  bool annotate(const QString& id, const QStringList& tags, const QString& note);
  // The entry's settings that differ from its preset, one per line ("" when none or unknown).
  QString configDiff(const QString& id) const;
  bool remove(const QString& id);  // not while running
  bool cancel(const QString& id);  // running → asks the trainer to stop; queued → cancelled
  bool resume(const QString& id);  // re-queues a resumable entry (continues its run folder)
  void setAutoStart(bool on);      // start queued entries as soon as nothing runs (default on)
  bool autoStart() const { return m_autoStart; }
  void startNext();  // starts the first queued entry if nothing runs

  const QVector<QueueEntry>& entries() const { return m_entries; }
  const QueueEntry* entry(const QString& id) const;
  QString runningId() const { return m_runningId; }
  QString queueFile() const { return m_file; }
  QString lastError() const { return m_lastError; }
  // Re-reads the file (done by the constructor). Entries that were running become "interrupted".
  void load();
  void save();
  // Blocks (processing events) until nothing runs or `ms` passes; for tests and shutdown.
  bool waitIdle(int ms);
  // True while a run is being started: Trainer::start / resume (which write the run folder and
  // verify the checkpoints' hashes) run on a worker thread, never on the GUI thread.
  bool starting() const { return m_starting; }

 Q_SIGNALS:
  void changed();
  void runStarted(const QString& id, const QString& runDir);
  void step(const QString& id, const gllm::StepRecord& r);
  void eval(const QString& id, const gllm::EvalRecord& r);
  void checkpoint(const QString& id, const gllm::CheckpointRecord& r);
  void runFinished(const QString& id, const QString& status);
  void log(const QString& id, const QString& line);

 private:
  QueueEntry* find(const QString& id);
  void launch(QueueEntry& e);
  // The worker that called Trainer::start / resume is done: "" or why the run could not start.
  void started(const QString& id, int launch, const QString& runDir, const QString& error);
  void finish(const QString& id, const QString& status, const QString& message);
  std::string queueText() const;  // the queue file's contents
  // Writes the queue on a worker (progress: step and BPB at an evaluation); save() waits for it.
  void saveProgress();

  QString m_file, m_runsParent;
  QVector<QueueEntry> m_entries;
  QString m_runningId;
  std::unique_ptr<Trainer> m_trainer;
  RunBridge* m_bridge = nullptr;
  bool m_autoStart = true;
  QString m_lastError;
  // Starting a run off the GUI thread: which launch, its future, and what arrived meanwhile.
  bool m_starting = false;
  int m_launch = 0;
  QFuture<void> m_startFuture;
  bool m_cancelWhenStarted = false;
  bool m_finishWhenStarted = false;
  QString m_pendingStatus, m_pendingMessage;
  QFuture<void> m_saveFuture;
  QFutureWatcher<void>* m_saveWatcher = nullptr;
  bool m_progressPending = false;
};

}  // namespace gllm::gui
