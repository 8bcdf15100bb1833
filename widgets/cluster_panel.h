// ClusterPanel: the Runs panel's runs sent to SLURM. Submit the run settings × seeds as one job
// array under a named cluster profile, watch every cluster run's scheduler state beside its own,
// cancel or requeue tasks; every scheduler call runs on a worker thread, polls at a bounded rate.
#pragma once
#include <QMap>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <functional>
#include <memory>

class QAction;
class QComboBox;
class QToolButton;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace gllm {
struct ClusterSnapshot;
}

namespace gllm::gui {

class LauncherPanel;
struct ClusterRunView;

class ClusterPanel : public QWidget {
  Q_OBJECT
 public:
  // `launcher` gives the runs Submit sends (its settings, seeds and preset, refused as Launch
  // refuses). Polls every `GLLM_CLUSTER_POLL_S` seconds (default 15; at least 1) while a watched
  // run is not final, four times slower otherwise.
  explicit ClusterPanel(LauncherPanel* launcher, QWidget* parent = nullptr);
  ~ClusterPanel() override;

  // The profile Submit uses ("" when none exists: the panel says how to make one).
  QString profile() const;
  bool setProfile(const QString& name);
  // Tasks at once (the array's %N); 0 = the profile's max_parallel.
  void setThrottle(int tasks);

  // Submits the launcher's runs (or with `dryRun` only writes out the script, shown in a window
  // and kept in lastScript()). Returns at once: "" when the work started, else the refusal.
  QString submit(bool dryRun = false);
  QString lastScript() const { return m_lastScript; }

  // Folders watched besides the runs folder and the profiles' runs roots (a sweep submitted from
  // the CLI elsewhere, say). The panel polls at once.
  void addWatchedFolder(const QString& dir);
  QStringList watchedFolders() const { return m_extraRoots; }

  // Cancels / requeues the selected run's task, or every task of the selected run's sweep.
  QString cancelSelected();
  // Cancels the task of the cluster run in `dir` (the Runs table's Cancel on a cluster row).
  QString cancelRun(const QString& dir);
  QString cancelSelectedSweep();
  QString requeueSelected();
  bool selectRun(const QString& dir);
  QString selectedRun() const;

  // Asks the scheduler now (unless a poll is in flight: then right after it).
  void pollNow();
  // True while a poll, submit, cancel or requeue runs on a worker.
  bool busy() const { return m_polling || m_acting; }
  int pollCount() const { return m_polls; }
  QString statusText() const;
  QTableWidget* table() const { return m_table; }
  // The profiles offered (as of the last poll) and the runs listed, for the Runs table.
  QStringList profiles() const;
  QVector<ClusterRunView> runViews() const;
  // The state and detail the table shows for a run folder ("" when it is not listed).
  QString stateOf(const QString& dir) const;
  QString detailOf(const QString& dir) const;
  // Replaces the "cancel the whole sweep?" question (tests): gets the question, returns yes.
  void setConfirm(std::function<bool(const QString&)> ask) { m_confirm = std::move(ask); }

 Q_SIGNALS:
  // A cluster run's metrics.jsonl changed (or was seen the first time): the Monitor reads it.
  void runMetricsChanged(const QString& dir, const QString& note);
  // The scheduler's word on a run the Monitor shows changed, its metrics did not.
  void runNoteChanged(const QString& dir, const QString& note);
  // The Open button: show this run folder in the Monitor, the inspector and the heatmaps.
  void openRequested(const QString& dir);
  // A poll listed the runs and profiles anew (runViews(), profiles()).
  void runsListed();
  // The status line changed (an action started, ended or was refused).
  void statusChanged(const QString& text, bool error);

 private:
  void poll();
  void applySnapshot(const std::shared_ptr<ClusterSnapshot>& snap, const QStringList& profiles,
                     const QString& problems);
  // Runs `work` on a worker; its returned message goes to the status line (red when it failed),
  // then the panel polls.
  void act(const QString& what, std::function<QString()> work);
  void setStatus(const QString& text, bool error = false);
  void updateButtons();
  QStringList roots() const;

  LauncherPanel* m_launcher;
  QComboBox* m_profile = nullptr;
  QSpinBox* m_throttle = nullptr;
  QPushButton* m_submit = nullptr;
  QPushButton* m_script = nullptr;
  QToolButton* m_tasks = nullptr;
  QAction* m_cancel = nullptr;
  QAction* m_cancelSweep = nullptr;
  QAction* m_requeue = nullptr;
  QAction* m_open = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_hint = nullptr;
  QTableWidget* m_table = nullptr;
  QTimer* m_timer = nullptr;
  std::shared_ptr<ClusterSnapshot> m_snapshot;
  QMap<QString, qint64> m_metricsSeen;  // run folder → metrics.jsonl size at the last poll
  QMap<QString, QString> m_notes;       // run folder → the note last sent with it
  QStringList m_extraRoots;
  QStringList m_profileRoots;  // the profiles' runs_root folders (read by the poll)
  QString m_lastScript;
  std::function<void()> m_afterAction;  // what a successful act() does next, on the GUI thread
  bool m_polling = false, m_acting = false, m_pollAgain = false;
  int m_polls = 0;
  int m_pollSeconds = 15;
  std::function<bool(const QString&)> m_confirm;
};

}  // namespace gllm::gui
