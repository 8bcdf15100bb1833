// MainWindow: the workbench's frame. Every panel is a dockable widget registered by a short name
// ("grades", "cone", "monitor", ...) so `--panel NAME` and tests can raise it.
#pragma once
#include <QDir>
#include <QHash>
#include <QMainWindow>
#include <QMap>
#include <QPair>
#include <QVector>
#include <functional>

#include "widgets/metric_store.h"

class QDockWidget;

class QTabBar;

namespace gllm::gui {

class PresetForm;
class GradeEditor;
class ConePanel;
class MonitorPanel;
class DataPanel;
class HeatmapPanel;
class LauncherPanel;
class ClusterPanel;
class InspectorPanel;
class ComparePanel;
class AttentionCostPanel;
class LadderPanel;
class RunQueue;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  QStringList panelNames() const { return m_order; }
  // Makes the named panel visible and raises it over tabbed neighbours; false for unknown names.
  bool showPanel(const QString& name);
  QWidget* panel(const QString& name) const;
  // Opens a run folder: its metrics in the monitor, its newest checkpoint in the inspector and
  // the heatmaps. Reads on worker threads: returns at once ("" or "not a folder"); what the reads
  // find wrong goes to the status bar and runOpenFailed().
  QString openRun(const QString& dir);
  int pendingReads() const { return m_pendingReads; }  // metrics and grade reads in flight
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

  // The window's first size on a screen whose available area is `available`: most of it, at least
  // 1280 × 800 when the screen has room, never more than the screen (title bar included).
  static QSize initialSize(QSize available);
  // Sizes and centres the window on its screen unless a saved geometry was restored.
  void fitToScreen();

  // Quitting while a run is in progress asks first; `ask` replaces the dialog (tests). It gets
  // the question and returns true to quit.
  void setQuitQuestion(std::function<bool(const QString&)> ask) { m_askQuit = std::move(ask); }
  // True while a run of the queue is running or starting.
  bool runInProgress() const;

 Q_SIGNALS:
  void runOpenFailed(const QString& dir, const QString& error);

 private:
  QDockWidget* addPanel(const QString& name, const QString& title, const QString& icon,
                        QWidget* widget, Qt::DockWidgetArea area);
  void buildMenus();
  // Initial dock sizes for a window of `size`: three columns (grade editor | cone | monitor over
  // runs) from kThreeColumnWidth px, below that the cone under the grade editor in one column so
  // both stay in view and every panel keeps its minimum width; the run settings share the
  // editor's tabs. Once, and not when a saved layout was restored.
  void arrangeDocks(QSize size);
  // Gives a panel raised in the tabs under the monitor the height the user last dragged it to (it
  // stays across tab switches and restarts), else its share of the column's height.
  void fitRaisedPanel(const QString& name);
  // Notes the height of the panel in view in the tabs under the monitor: after the user drags a
  // separator (a mouse release on the window), and on closing.
  void rememberPanelHeights();
  bool event(QEvent* event) override;
  // `d` is docked in the tabs right under the monitor (in the layout the workbench made).
  bool isUnderMonitor(QDockWidget* d) const;
  // The tab bar under a tabified dock (nullptr when it has none), its height (0 then), and whether
  // the dock is its current tab (false without one).
  QTabBar* tabBarOf(QDockWidget* d) const;
  int tabBarHeight(QDockWidget* d) const;
  bool isCurrentTab(QDockWidget* d) const;
  static double heightShare(const QString& panel);
  // The Monitor dock's least height: its charts at their readable minimum.
  int monitorFloor() const;
  void showEvent(QShowEvent* event) override;
  void restoreLayout();
  void saveLayout();
  // The run settings, seeds and Compare folder: written on close, read back at start (QSettings;
  // not under GLLM_WORKBENCH_NO_SETTINGS).
  void restoreSettings();
  void saveSettings();
  void closeEvent(QCloseEvent* event) override;

  QMap<QString, QDockWidget*> m_docks;
  QStringList m_order;
  // Reads the grades of a checkpoint (or a run folder's newest one) on a worker thread into the
  // heatmaps, as source "RUN/step_NNNNNN"; the newest request per path wins.
  // `show`: make it source A once read (the heatmaps' checkpoint slider).
  void loadCheckpointGrades(const QString& runOrCheckpoint, bool show = false);
  static QString checkpointSourceName(const QString& weightsPath);
  static bool sameFolder(const QString& a, const QString& b);
  // A run started (`liveSource` empty) or wrote a checkpoint at `step`: the heatmaps' step slider
  // and source A follow it when it is the run they follow.
  void followRunCheckpoints(const QString& runDir, const QString& liveSource, qint64 step);
  QMap<QString, int> m_gradeRequests;  // path → generation of its newest request
  // Queue id → the heatmap source of its live run ("live: NAME sSEED") and its newest checkpoint.
  QMap<QString, QPair<QString, QString>> m_liveHeatmapSources;
  QString m_followedRun;  // the run folder the heatmaps follow (the run started last)
  // The monitor keys a run by its folder's name: a live run, the same folder opened, and the
  // history of a resumed run are one run; two folders of one name and seed are two.
  static QString runKey(const QString& runDir) { return QDir(runDir).dirName(); }
  QString liveKey(const QString& queueId) const;
  // Reads a run folder's metrics on a worker into the monitor. Live points that arrive while it
  // reads are kept and re-applied past the file's last step.
  // announce: the status bar says "Opened DIR" when the read ends (a folder's runs leave the
  // folder's own message there instead); a read's error is always shown.
  void loadRunMetrics(const QString& dir, bool announce = true);
  void addLivePoint(const QString& key, const QString& metric, const MetricPoint& p);
  // Every run folder under the runs folder (listed on a worker) joins the monitor at startup.
  // `opened`: the user opened the folder (the status bar says what it held).
  void loadRunsFolder(const QString& runs, bool opened = false);
  QMap<QString, int> m_metricReads;  // run key → reads in flight
  QMap<QString, QVector<QPair<QString, MetricPoint>>> m_liveDuringRead;
  int m_pendingReads = 0;  // metrics and grade reads in flight
  PresetForm* m_presetForm = nullptr;
  GradeEditor* m_grades = nullptr;
  ConePanel* m_cone = nullptr;
  MonitorPanel* m_monitor = nullptr;
  HeatmapPanel* m_heatmaps = nullptr;
  LauncherPanel* m_launcher = nullptr;
  ClusterPanel* m_cluster = nullptr;
  InspectorPanel* m_inspector = nullptr;
  ComparePanel* m_compare = nullptr;
  AttentionCostPanel* m_attention = nullptr;
  LadderPanel* m_ladder = nullptr;
  DataPanel* m_data = nullptr;
  RunQueue* m_queue = nullptr;
  bool m_syncing = false;
  bool m_arranged = false;             // arrangeDocks() ran or a saved layout was restored
  QHash<QString, int> m_panelHeights;  // px of each panel under the monitor when last raised
  bool m_restoredGeometry = false;
  std::function<bool(const QString&)> m_askQuit;
  static constexpr int kThreeColumnWidth = 1800;
};

}  // namespace gllm::gui
