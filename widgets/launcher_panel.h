// LauncherPanel: choose a preset, edit it in the generated form, pick seeds, and launch, queue,
// cancel, resume or remove runs in the persistent queue (or submit them to a cluster profile);
// shows each entry's progress and results, and the cluster's runs below the queue's.
#pragma once
#include <QColor>
#include <QVector>
#include <QWidget>
#include <functional>
#include <nlohmann/json.hpp>

class QComboBox;
class QLineEdit;
class QLabel;
class QTableWidget;
class QTableWidgetItem;
class QPushButton;

namespace gllm {
struct RunConfig;
}

namespace gllm::gui {

// A cluster run as the Runs table lists it, below the queue's own runs (the Cluster panel reads
// them from the scheduler and the run folders).
struct ClusterRunView {
  QString dir, label, state, detail;
  int seed = 0;
  qint64 step = 0, totalSteps = 0;
  double valBpb = -1, heldoutBpb = -1;
  qint64 valStep = -1;  // the step valBpb was measured at
};

// The colour a scheduler state is shown in (Runs and Cluster tables alike).
QColor clusterStateColor(const QString& state);

class PresetForm;
class RunQueue;

class LauncherPanel : public QWidget {
  Q_OBJECT
 public:
  LauncherPanel(RunQueue* queue, PresetForm* form, QWidget* parent = nullptr);

  // Loads a preset (name or path) into the form; returns "" or the error shown.
  QString choosePreset(const QString& nameOrPath);
  // Parses the seed field ("42, 43, 47" or "41-43"); false with the reason when it cannot.
  bool parseSeeds(QList<int>* seeds, QString* why) const;
  void setSeedsText(const QString& text);
  QString seedsText() const;
  // Adds the form's config once per seed and, when `start`, runs the queue (entries start one
  // after another; Launch does this, Queue does not). Returns "" or the refusal (also shown
  // under the field).
  // `forkFrom` (a run folder, RUN@STEP or a checkpoint file): the runs start from that
  // checkpoint with the form's grades (route 2 of the certificate); "" = from initialisation.
  QString launch(bool start = true, const QString& forkFrom = QString());
  // The runs Launch would add, for another launcher (the Cluster panel's Submit): the form's
  // config named as Launch names it, the seeds and the preset it is compared with. Refuses as
  // Launch does (a red field, bad seeds), `action` naming the button; returns "" or the refusal.
  QString plannedRuns(const QString& action, RunConfig* config, QList<int>* seeds,
                      nlohmann::json* preset);
  // The preset the form's settings are compared with (the one last chosen, else the preset named
  // like the settings; null when there is none). A launched run is named after it and what
  // differs ("tiny-cpu+mlge.pos") unless the settings were given a name of their own.
  nlohmann::json currentPreset() const;
  // Asks for the selected run's tags and note (the Annotate button).
  void annotateSelected();
  // Continues the selected cancelled or interrupted run from its last checkpoint and runs the
  // queue (the Resume button). Returns "" or why it cannot.
  QString resumeSelected();
  RunQueue* queue() const { return m_queue; }
  QString seedError() const;
  // Why the last Launch or Queue was refused because a field is invalid ("" when it was not).
  QString refusal() const;
  // The status line under the table (what was loaded, queued, resumed or how a run ended).
  QString statusText() const;
  // More fields Launch and Queue check besides the run settings form (e.g. the grade editor's):
  // each returns "field: message" for every field that shows a refusal.
  void setExtraCheck(std::function<QStringList()> check) { m_extraCheck = std::move(check); }
  QTableWidget* table() const { return m_table; }

  // "Run on": where Launch sends the runs. "" = this machine (the queue), else a cluster profile
  // (Launch becomes "Submit to cluster": one job array, through `submit`, which returns "" or the
  // refusal). The names offered are the Cluster panel's profiles.
  void setClusterProfiles(const QStringList& names);
  void setClusterSubmit(std::function<QString(const QString& profile)> submit) {
    m_clusterSubmit = std::move(submit);
  }
  QString runTarget() const;
  bool setRunTarget(const QString& profile);
  // The cluster runs watched: listed under the queue's, with the scheduler's state. Cancel on one
  // calls `cancel` with its folder (scancel, through the Cluster panel).
  void setClusterRuns(const QVector<ClusterRunView>& runs);
  void setClusterCancel(std::function<QString(const QString& dir)> cancel) {
    m_clusterCancel = std::move(cancel);
  }
  QString selectedClusterRun() const;
  bool selectClusterRun(const QString& dir);
  // A cluster action's outcome (submitted, refused by sbatch) on the status line.
  void showClusterStatus(const QString& text);

 Q_SIGNALS:
  // Launch or Queue was refused because of a field that shows a refusal: the window brings
  // that field into view (its panel raised, the field focused).
  void refusedAtField();

 public:
  QString selectedId() const;
  void selectId(const QString& id);

 private:
  void refreshTable();
  void fillClusterRows(int firstRow);
  // Columns Status (bold `status`), Progress, val BPB, held-out BPB and Folder / message of a row.
  // A val BPB measured before the run's last step says at which step ("2.2903 @50").
  void setRunCells(int row, QTableWidgetItem* status, qint64 step, qint64 totalSteps, double valBpb,
                   qint64 valStep, double heldoutBpb, const QString& dir, const QString& message);
  void updateButtons();
  // Column Run gets the width its names need, unless that leaves Folder / message under 90 px;
  // then the two share what the other columns leave, the names at least half.
  void fitNameColumn();
  bool eventFilter(QObject* watched, QEvent* event) override;
  QString submitToCluster(const QString& profile);

  RunQueue* m_queue;
  PresetForm* m_form;
  QComboBox* m_preset = nullptr;
  QLineEdit* m_seeds = nullptr;
  QLabel* m_seedError = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_refusal = nullptr;
  std::function<QStringList()> m_extraCheck;
  QTableWidget* m_table = nullptr;
  QPushButton* m_launch = nullptr;
  QPushButton* m_enqueue = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_remove = nullptr;
  QPushButton* m_annotate = nullptr;
  QPushButton* m_fork = nullptr;
  QComboBox* m_target = nullptr;  // "Run on": this machine or a cluster profile
  nlohmann::json m_presetJson;    // the preset last chosen, resolved
  QVector<ClusterRunView> m_clusterRuns;
  bool m_fitQueued = false;
  std::function<QString(const QString&)> m_clusterSubmit, m_clusterCancel;
};

}  // namespace gllm::gui
