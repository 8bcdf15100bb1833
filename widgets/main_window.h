// MainWindow: the workbench's frame. Every panel is a dockable widget registered by a short name
// ("grades", "cone", "monitor", ...) so `--panel NAME` and tests can raise it.
#pragma once
#include <QMainWindow>
#include <QMap>

class QDockWidget;

namespace gllm::gui {

class PresetForm;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  QStringList panelNames() const { return m_order; }
  // Makes the named panel visible and raises it over tabbed neighbours; false for unknown names.
  bool showPanel(const QString& name);
  QWidget* panel(const QString& name) const;
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
  void restoreLayout();
  void saveLayout();
  void closeEvent(QCloseEvent* event) override;

  QMap<QString, QDockWidget*> m_docks;
  QStringList m_order;
  PresetForm* m_presetForm = nullptr;
};

}  // namespace gllm::gui
