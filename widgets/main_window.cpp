// MainWindow implementation: builds the docks, menus and tool bar, restores the saved layout,
// and renders offscreen screenshots for the documentation and the GUI tests.
#include "widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPalette>
#include <QSettings>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "widgets/preset_form.h"
#include "widgets/widget_util.h"

static void initWorkbenchResources() { Q_INIT_RESOURCE(resources); }

namespace gllm::gui {

void MainWindow::applyStyle() {
  initWorkbenchResources();
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QPalette p = QApplication::palette();
  p.setColor(QPalette::Window, QColor(0xee, 0xf1, 0xf5));
  p.setColor(QPalette::Base, Qt::white);
  p.setColor(QPalette::AlternateBase, QColor(0xf5, 0xf8, 0xfb));
  p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb2));
  p.setColor(QPalette::Button, QColor(0xf7, 0xf9, 0xfb));
  p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xff, 0xf4));
  QApplication::setPalette(p);
  QFile qss(QStringLiteral(":/style.qss"));
  if (qss.open(QIODevice::ReadOnly)) qApp->setStyleSheet(QString::fromUtf8(qss.readAll()));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/app.svg")));
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  initWorkbenchResources();
  setObjectName(QStringLiteral("workbenchMainWindow"));
  setWindowTitle(QStringLiteral("GLLM Workbench %1").arg(qs(engine_version())));
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

  m_presetForm = new PresetForm(this);
  try {
    m_presetForm->setConfig(RunConfig::load(resolve_preset_path("tiny-cpu")));
  } catch (const Error&) {
    m_presetForm->setConfig(RunConfig{});
  }
  addPanel(QStringLiteral("preset"), tr("Run settings"), QStringLiteral("preset"), m_presetForm,
           Qt::LeftDockWidgetArea);

  buildMenus();
  statusBar()->showMessage(tr("Ready — engine %1").arg(qs(engine_version())));
  restoreLayout();
}

QDockWidget* MainWindow::addPanel(const QString& name, const QString& title, const QString& icon,
                                  QWidget* widget, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(QStringLiteral("dock_") + name);
  dock->setWidget(widget);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                    QDockWidget::DockWidgetClosable);
  dock->toggleViewAction()->setIcon(QIcon(QStringLiteral(":/icons/%1.svg").arg(icon)));
  widget->setObjectName(QStringLiteral("panel_") + name);
  addDockWidget(area, dock);
  m_docks.insert(name, dock);
  m_order << name;
  return dock;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* view = menuBar()->addMenu(tr("&Panels"));
  QToolBar* bar = addToolBar(tr("Panels"));
  bar->setObjectName(QStringLiteral("panelsToolBar"));
  bar->setIconSize(QSize(20, 20));
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  for (const QString& name : m_order) {
    QAction* a = m_docks[name]->toggleViewAction();
    view->addAction(a);
    bar->addAction(a);
  }
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About"), this, [this] {
    QMessageBox::about(this, tr("About GLLM Workbench"),
                       tr("<b>GLLM Workbench</b> %1<br>Graded language-model research: grades and the "
                          "admissible cone, runs, monitors and checkpoint audits.")
                           .arg(qs(engine_version())));
  });
}

bool MainWindow::showPanel(const QString& name) {
  QDockWidget* d = m_docks.value(name, nullptr);
  if (!d) return false;
  d->show();
  d->raise();
  return true;
}

QWidget* MainWindow::panel(const QString& name) const {
  QDockWidget* d = m_docks.value(name, nullptr);
  return d ? d->widget() : nullptr;
}

void MainWindow::restoreLayout() {
  if (qEnvironmentVariableIsSet("GLLM_WORKBENCH_NO_SETTINGS")) return;
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::saveLayout() {
  if (qEnvironmentVariableIsSet("GLLM_WORKBENCH_NO_SETTINGS")) return;
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveLayout();
  event->accept();
}

QString MainWindow::saveScreenshot(const QString& path, const QString& panelName, QSize size) {
  if (!panelName.isEmpty() && !m_docks.contains(panelName))
    return tr("unknown panel '%1'; choose one of: %2").arg(panelName, m_order.join(QStringLiteral(", ")));
  size = size.expandedTo(QSize(1280, 800));
  resize(size);
  show();
  if (!panelName.isEmpty()) showPanel(panelName);
  // Let layouts, charts and coalescing timers settle before grabbing.
  for (int i = 0; i < 8; ++i) {
    QApplication::processEvents(QEventLoop::AllEvents, 50);
    QTimer t;
    t.setSingleShot(true);
    QEventLoop loop;
    QObject::connect(&t, &QTimer::timeout, &loop, &QEventLoop::quit);
    t.start(25);
    loop.exec();
  }
  const QPixmap pix = grab();
  if (pix.isNull()) return tr("the window could not be rendered");
  if (!pix.save(path, "PNG")) return tr("could not write %1; check the folder exists and is writable").arg(path);
  return {};
}

}  // namespace gllm::gui
