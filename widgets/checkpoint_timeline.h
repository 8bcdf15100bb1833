// CheckpointTimeline: a step slider over a run folder's checkpoints (listed on a worker thread), so
// grades, query scales and the audit can be followed through training; emits the chosen one.
#pragma once
#include <QFutureWatcher>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QLabel;
class QSlider;
class QTimer;

namespace gllm::gui {

// A run folder's checkpoints by step (sidecars that parse; files are verified when opened).
struct CheckpointList {
  int generation = 0;
  QString runDir;
  QVector<qint64> steps;
  QStringList weights;  // the .safetensors of each step
};

class CheckpointTimeline : public QWidget {
  Q_OBJECT
 public:
  explicit CheckpointTimeline(QWidget* parent = nullptr);
  // Lists the checkpoints of `runDir` (a run folder; a checkpoint path inside one names its run)
  // on a worker thread. `step` (−1: the newest) is the one shown selected once listed.
  void setRun(const QString& runOrCheckpoint, qint64 step = -1);
  // The run folder a path belongs to: itself, or the run of RUN/checkpoints/step_N.safetensors.
  static QString runOf(const QString& path);
  static qint64 stepOf(const QString& weightsPath);  // −1 when the name is not step_NNNNNN

  QString runDir() const { return m_list.runDir; }
  QVector<qint64> steps() const { return m_list.steps; }
  qint64 currentStep() const;
  // Moves the slider to `step` (the nearest checkpoint) as a user would; checkpointChosen follows.
  void chooseStep(qint64 step);
  bool busy() const { return m_watcher->isRunning(); }
  QSlider* slider() const { return m_slider; }

 Q_SIGNALS:
  // The user (or chooseStep) picked a checkpoint; the slider settles for 120 ms first.
  void checkpointChosen(const QString& weightsPath, qint64 step);

 private:
  void applyList(const CheckpointList& list);
  void updateLabel();
  CheckpointList m_list;
  int m_generation = 0;
  qint64 m_wantStep = -1;
  bool m_updating = false;
  QFutureWatcher<CheckpointList>* m_watcher = nullptr;
  QSlider* m_slider = nullptr;
  QLabel* m_label = nullptr;
  QTimer* m_settle = nullptr;
};

}  // namespace gllm::gui
