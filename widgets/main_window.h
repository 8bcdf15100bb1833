// MainWindow: the workbench's frame. Every panel is a dockable widget registered by a short name
// ("grades", "cone", "monitor", ...) so `--panel NAME` and tests can raise it.
#pragma once
#include <QMainWindow>
#include <QMap>

class QDockWidget;

namespace gllm::gui {

class PresetForm;
class GradeEditor;
class ConePanel;
class MonitorPanel;
class HeatmapPanel;
class LauncherPanel;
class InspectorPanel;
class ComparePanel;
class AttentionCostPanel;
class LadderPanel;
class RunQueue;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  QStringList panelNames() const { return m_order; }
  // Makes the named panel visible and raises it over tabbed neighbours; false for unknown names.
  bool showPanel(const QString& name);
  QWidget* panel(const QString& name) const;
  // Opens a run folder: its metrics in the monitor, its newest checkpoint in the inspector and
  // the heatmaps. Reads on worker threads: returns at once ("" or "not a folder"); what the reads
  // find wrong goes to the status bar and runOpenFailed().
  QString openRun(const QString& dir);
  // Loads a `gllm profiles` file into the cone panel. "" or the error (also shown in the panel).
  QString loadProfiles(const QString& path);
  // The profiles file the cone panel starts on: the newest profiles*.json in the data cache
  // (where `gllm profiles --out` is pointed), "" when there is none.
  static QString defaultProfilesFile();
  // Blocks with an event loop until no panel is reading or computing (tests, screenshots).
  bool waitForIdle(int ms = 20000);
  QDockWidget* dock(const QString& name) const { return m_docks.value(name, nullptr); }

  // Lays the window out at `size`, raises `panel` if given, and saves a grab() as PNG. Works
  // under the offscreen platform. Returns an empty string or the reason the file was not written.
  QString saveScreenshot(const QString& path, const QString& panel = {},
                         QSize size = QSize(1440, 900));

  // Loads the workbench style sheet and Fusion palette into the application.
  static void applyStyle();

 Q_SIGNALS:
  void runOpenFailed(const QString& dir, const QString& error);

 private:
  QDockWidget* addPanel(const QString& name, const QString& title, const QString& icon,
                        QWidget* widget, Qt::DockWidgetArea area);
  void buildMenus();
  // Initial dock sizes for a window of `size`: three columns (grade editor | cone | monitor over
  // runs) from kThreeColumnWidth px, below that the cone shares the grade editor's tabs so every
  // panel keeps its minimum width. Once, and not when a saved layout was restored.
  void arrangeDocks(QSize size);
  // Gives a panel raised in the tabs under the monitor its share of the column's height.
  void fitRaisedPanel(const QString& name);
  static double heightShare(const QString& panel);
  void showEvent(QShowEvent* event) override;
  void restoreLayout();
  void saveLayout();
  void closeEvent(QCloseEvent* event) override;

  QMap<QString, QDockWidget*> m_docks;
  QStringList m_order;
  // Reads the grades of a checkpoint (or a run folder's newest one) on a worker thread into the
  // heatmaps, as source "RUN/step_NNNNNN"; the newest request per path wins.
  void loadCheckpointGrades(const QString& runOrCheckpoint);
  static QString checkpointSourceName(const QString& weightsPath);
  QMap<QString, int> m_gradeRequests;  // path → generation of its newest request
  int m_pendingReads = 0;              // metrics and grade reads in flight
  PresetForm* m_presetForm = nullptr;
  GradeEditor* m_grades = nullptr;
  ConePanel* m_cone = nullptr;
  MonitorPanel* m_monitor = nullptr;
  HeatmapPanel* m_heatmaps = nullptr;
  LauncherPanel* m_launcher = nullptr;
  InspectorPanel* m_inspector = nullptr;
  ComparePanel* m_compare = nullptr;
  AttentionCostPanel* m_attention = nullptr;
  LadderPanel* m_ladder = nullptr;
  RunQueue* m_queue = nullptr;
  bool m_syncing = false;
  bool m_arranged = false;  // arrangeDocks() ran or a saved layout was restored
  static constexpr int kThreeColumnWidth = 1800;
};

}  // namespace gllm::gui
