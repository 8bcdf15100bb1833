// MainWindow layout and settings: the first dock arrangement for the window's size, heights of
// raised panels, the fit to the screen, saved layout and settings, quitting, screenshots.
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QEventLoop>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLayout>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QShowEvent>
#include <QStatusBar>
#include <QTabBar>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/io/json_read.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/settings_file.h"

namespace gllm::gui {

void MainWindow::arrangeDocks(QSize size) {
  if (m_arranged) return;
  m_arranged = true;
  // Widths the panels need without clipping (with a scroll bar): grade editor ~540, cone ~560,
  // monitor and the tabs under it (runs, heatmaps, inspector, compare) ~700. 140 px of height go
  // to the menu, tool and status bars.
  const bool three = size.width() >= kThreeColumnWidth;
  const int grades = three ? 540 : 560, cone = three ? 560 : 0;
  const int right = std::max(700, size.width() - grades - cone);
  // The certificate stays in view while grades are edited: beside the editor when three columns
  // fit, else below it in the same column. The run settings and the Data panel (whose dataset the
  // run settings train from) share the editor's tabs.
  splitDockWidget(m_docks["grades"], m_docks["cone"], three ? Qt::Horizontal : Qt::Vertical);
  tabifyDockWidget(m_docks["grades"], m_docks["preset"]);
  tabifyDockWidget(m_docks["grades"], m_docks["data"]);
  m_docks["grades"]->raise();
  if (three) {
    resizeDocks({m_docks["grades"], m_docks["cone"], m_docks["monitor"]}, {grades, cone, right},
                Qt::Horizontal);
  } else {
    resizeDocks({m_docks["grades"], m_docks["monitor"]}, {grades, right}, Qt::Horizontal);
    const int left = std::max(500, size.height() - 140);
    const int top = int(std::lround(left * 0.5));
    resizeDocks({m_docks["grades"], m_docks["cone"]}, {top, left - top}, Qt::Vertical);
  }
  const int column = std::max(500, size.height() - 140);
  const int bottom =
      std::max(120, std::min(int(std::lround(column * heightShare(QStringLiteral("queue")))),
                             column - monitorFloor()));
  resizeDocks({m_docks["monitor"], m_docks["queue"]}, {column - bottom, bottom}, Qt::Vertical);
}

int MainWindow::monitorFloor() const {
  // The panel's minimum (charts at their readable minimum, with the controls) and the dock's
  // title bar.
  QDockWidget* d = m_docks.value(QStringLiteral("monitor"), nullptr);
  const int title = d && d->widget() ? std::max(24, d->height() - d->widget()->height()) : 24;
  // A wrapped legend of many runs is taller than the two lines the minimum counts, and runs read
  // after the fit (the runs folder at startup) add the seeds toggles and the legend's marks: 12 px
  // more at 1280 × 800, kept in reserve so the charts never need scrolling.
  int panel = m_monitor->minimumSizeHint().height();
  if (QLayout* l = m_monitor->layout(); l && l->hasHeightForWidth() && m_monitor->width() > 0)
    panel = std::max(panel, l->minimumHeightForWidth(m_monitor->width()));
  return panel + title + 12;
}

double MainWindow::heightShare(const QString& panel) {
  if (panel == QLatin1String("queue")) return 0.38;
  if (panel == QLatin1String("cluster")) return 0.45;
  if (panel == QLatin1String("inspector")) return 0.66;
  return 0.6;
}

MainWindow::~MainWindow() {
  // The docks are deleted after this object's members: their last signals (hidden, resized) must
  // not reach handlers that read those members.
  for (QDockWidget* d : std::as_const(m_docks)) d->disconnect(this);
}

bool MainWindow::isUnderMonitor(QDockWidget* d) const {
  QDockWidget* monitor = m_docks.value(QStringLiteral("monitor"), nullptr);
  if (!m_arranged || !d || !monitor || d->isFloating() || monitor->isFloating() ||
      !monitor->isVisible())
    return false;
  // Only in the layout the workbench made: the panel in the tabs right under the monitor.
  return dockWidgetArea(d) == dockWidgetArea(monitor) &&
         d->geometry().top() > monitor->geometry().bottom() &&
         d->geometry().left() < monitor->geometry().right() &&
         monitor->geometry().left() < d->geometry().right();
}

QTabBar* MainWindow::tabBarOf(QDockWidget* d) const {
  for (QTabBar* bar : findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly)) {
    if (!bar->isVisible()) continue;
    for (int i = 0; i < bar->count(); ++i)
      if (bar->tabText(i) == d->windowTitle()) return bar;
  }
  return nullptr;
}

int MainWindow::tabBarHeight(QDockWidget* d) const {
  QTabBar* bar = tabBarOf(d);
  return bar ? bar->height() : 0;
}

bool MainWindow::isCurrentTab(QDockWidget* d) const {
  QTabBar* bar = tabBarOf(d);
  return bar && bar->tabText(bar->currentIndex()) == d->windowTitle();
}

void MainWindow::rememberPanelHeights() {
  // The current tab of the tabs under the monitor.
  for (auto it = m_docks.constBegin(); it != m_docks.constEnd(); ++it) {
    QDockWidget* d = it.value();
    if (it.key() == QLatin1String("monitor") || !isCurrentTab(d) || !isUnderMonitor(d) ||
        d->height() < 80)
      continue;
    m_panelHeights[it.key()] = d->height();
  }
}

bool MainWindow::event(QEvent* event) {
  const bool handled = QMainWindow::event(event);
  // A drag of a separator between docks ends here (QMainWindow moves them on its own events).
  if (event->type() == QEvent::MouseButtonRelease && isVisible()) rememberPanelHeights();
  return handled;
}

void MainWindow::fitRaisedPanel(const QString& name) {
  QDockWidget* d = m_docks.value(name, nullptr);
  QDockWidget* monitor = m_docks.value(QStringLiteral("monitor"), nullptr);
  if (!d || !d->isVisible() || !isUnderMonitor(d)) return;
  const int column = monitor->height() + d->height();
  // The height the user last dragged it to; else its share, never below the height the Monitor's
  // charts need to stay readable.
  const auto kept = m_panelHeights.constFind(name);
  const int bottom =
      kept != m_panelHeights.constEnd()
          ? std::clamp(*kept, 80, column - 80)
          : std::min(int(std::lround(column * heightShare(name))), column - monitorFloor());
  if (bottom < 80 || std::abs(d->height() - bottom) < 4) return;  // not laid out yet, or there
  // resizeDocks sizes the tab group, its tab bar included.
  const int tabs = tabBarHeight(d);
  resizeDocks({monitor, d}, {column - bottom, bottom + tabs}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
  arrangeDocks(size());
  QMainWindow::showEvent(event);
}

void MainWindow::restoreLayout() {
  const auto settings = openSettings(nullptr);  // restoreSettings() reported any problem
  if (!settings) return;
  m_restoredGeometry =
      restoreGeometry(settings->value(QStringLiteral("window/geometry")).toByteArray());
  m_arranged = restoreState(settings->value(QStringLiteral("window/state")).toByteArray());
  const QVariantMap heights = settings->value(QStringLiteral("window/panelHeights")).toMap();
  for (auto it = heights.begin(); it != heights.end(); ++it)
    if (m_docks.contains(it.key()) && it.value().toInt() >= 80)
      m_panelHeights[it.key()] = it.value().toInt();
}

void MainWindow::saveLayout() {
  const auto settings = openSettings(nullptr);
  if (!settings) return;
  settings->setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings->setValue(QStringLiteral("window/state"), saveState());
  rememberPanelHeights();
  QVariantMap heights;
  for (auto it = m_panelHeights.begin(); it != m_panelHeights.end(); ++it)
    heights[it.key()] = it.value();
  settings->setValue(QStringLiteral("window/panelHeights"), heights);
}

bool MainWindow::runInProgress() const {
  return !m_queue->runningId().isEmpty() || m_queue->starting();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (runInProgress()) {
    const QueueEntry* e = m_queue->entry(m_queue->runningId());
    const QString question =
        tr("%1 is running. Quit anyway? It stops after its current step with a checkpoint, and "
           "Resume in Runs continues it when you reopen the workbench.")
            .arg(e ? QStringLiteral("%1 (seed %2)").arg(e->name).arg(e->seed) : tr("A run"));
    const bool quit = m_askQuit ? m_askQuit(question)
                                : QMessageBox::question(this, tr("Quit during a run?"), question,
                                                        QMessageBox::Yes | QMessageBox::Cancel,
                                                        QMessageBox::Cancel) == QMessageBox::Yes;
    if (!quit) {
      event->ignore();
      return;
    }
  }
  saveLayout();
  saveSettings();
  event->accept();
}

void MainWindow::restoreSettings() {
  QString problem;
  const auto settings = openSettings(&problem);
  if (!problem.isEmpty()) statusBar()->showMessage(problem);
  if (!settings) return;
  const QByteArray config = settings->value(QStringLiteral("settings/config")).toByteArray();
  if (!config.isEmpty()) {
    try {  // a config the schema no longer accepts (or bytes that are not one) is dropped
      m_presetForm->setConfig(RunConfig::from_json(gllm::parse_json(
          config.toStdString(), settingsFilePath().toStdString() + " (settings/config)", "")));
    } catch (const std::exception& e) {
      statusBar()->showMessage(tr("The saved run settings were not restored: %1").arg(e.what()));
    }
  }
  const QString seeds = settings->value(QStringLiteral("settings/seeds")).toString();
  if (!seeds.isEmpty()) m_launcher->setSeedsText(seeds);
  const QString folder = settings->value(QStringLiteral("settings/compareFolder")).toString();
  if (!folder.isEmpty() && QFileInfo(folder).isDir()) m_compare->setRunsFolder(folder);
}

void MainWindow::saveSettings() {
  const auto settings = openSettings(nullptr);
  if (!settings) return;
  settings->setValue(QStringLiteral("settings/config"),
                     QByteArray::fromStdString(m_presetForm->config().to_json().dump()));
  settings->setValue(QStringLiteral("settings/seeds"), m_launcher->seedsText());
  settings->setValue(QStringLiteral("settings/compareFolder"), m_compare->runsFolder());
}

QSize MainWindow::initialSize(QSize available) {
  const QSize frame(0, 32);  // the title bar the window manager adds
  const QSize room = (available - frame).expandedTo(QSize(640, 480));
  const QSize most(int(available.width() * 0.92), int(available.height() * 0.92));
  return most.expandedTo(QSize(1280, 800)).boundedTo(room);
}

void MainWindow::fitToScreen() {
  if (m_restoredGeometry) return;
  QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
  if (!screen) return;
  const QRect avail = screen->availableGeometry();
  const QSize size = initialSize(avail.size());
  resize(size);
  move(avail.center() - QPoint(size.width() / 2, size.height() / 2));
}

QString MainWindow::saveScreenshot(const QString& path, const QString& panelName, QSize size) {
  if (!panelName.isEmpty() && !m_docks.contains(panelName))
    return tr("unknown panel '%1'; choose one of: %2")
        .arg(panelName, m_order.join(QStringLiteral(", ")));
  size = size.expandedTo(QSize(1280, 800));
  resize(size);
  arrangeDocks(size);
  show();
  resize(size);
  if (!panelName.isEmpty()) {
    showPanel(panelName);
    QApplication::processEvents();
    fitRaisedPanel(panelName);  // as a raise by the user does
  }
  // Let readers finish, then layouts, charts and coalescing timers settle before grabbing.
  waitForIdle();
  for (int i = 0; i < 8; ++i) {
    QApplication::processEvents(QEventLoop::AllEvents, 50);
    m_cone->waitForResult(200);
    QTimer t;
    t.setSingleShot(true);
    QEventLoop loop;
    QObject::connect(&t, &QTimer::timeout, &loop, &QEventLoop::quit);
    t.start(25);
    loop.exec();
  }
  const QPixmap pix = grab();
  if (pix.isNull()) return tr("the window could not be rendered");
  if (!pix.save(path, "PNG"))
    return tr("could not write %1; check the folder exists and is writable").arg(path);
  return {};
}

}  // namespace gllm::gui
