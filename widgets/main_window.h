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
  // the heatmaps. Returns "" or the reason.
  QString openRun(const QString& dir);
  QDockWidget* dock(const QString& name) const { return m_docks.value(name, nullptr); }

  // Lays the window out at `size`, raises `panel` if given, and saves a grab() as PNG. Works
  // under the offscreen platform. Returns an empty string or the reason the file was not written.
  QString saveScreenshot(const QString& path, const QString& panel = {}, QSize size = QSize(1440, 900));

  // Loads the workbench style sheet and Fusion palette into the application.
  static void applyStyle();

 private:
  QDockWidget* addPanel(const QString& name, const QString& title, const QString& icon, QWidget* widget,
                        Qt::DockWidgetArea area);
  void buildMenus();
  // Initial dock sizes for a window of `size`: three columns (grade editor | cone | monitor over
  // runs) from kThreeColumnWidth px, below that the cone shares the grade editor's tabs so every
  // panel keeps its minimum width. Once, and not when a saved layout was restored.
  void arrangeDocks(QSize size);
  void showEvent(QShowEvent* event) override;
  void restoreLayout();
  void saveLayout();
  void closeEvent(QCloseEvent* event) override;

  QMap<QString, QDockWidget*> m_docks;
  QStringList m_order;
  void loadCheckpointGrades(const QString& source, const QString& weightsPath);
  PresetForm* m_presetForm = nullptr;
  GradeEditor* m_grades = nullptr;
  ConePanel* m_cone = nullptr;
  MonitorPanel* m_monitor = nullptr;
  HeatmapPanel* m_heatmaps = nullptr;
  LauncherPanel* m_launcher = nullptr;
  InspectorPanel* m_inspector = nullptr;
  ComparePanel* m_compare = nullptr;
  AttentionCostPanel* m_attention = nullptr;
  RunQueue* m_queue = nullptr;
  bool m_syncing = false;
  bool m_arranged = false;  // arrangeDocks() ran or a saved layout was restored
  static constexpr int kThreeColumnWidth = 1800;
};

}  // namespace gllm::gui
