// MainWindow implementation: builds the docks, menus and tool bar, restores the saved layout,
// and renders offscreen screenshots for the documentation and the GUI tests.
#include "widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QShowEvent>
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
#include <QScrollArea>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "widgets/attention_cost_panel.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/grade_editor.h"
#include "widgets/heatmap_panel.h"
#include "widgets/inspector_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include <QDir>
#include <QFileDialog>
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
  const QString runs = QDir(qs(runs_dir())).absolutePath();
  const QString queueFile = qEnvironmentVariableIsSet("GLLM_WORKBENCH_QUEUE")
                                ? qEnvironmentVariable("GLLM_WORKBENCH_QUEUE")
                                : runs + QStringLiteral("/workbench-queue.json");
  m_queue = new RunQueue(queueFile, runs, this);
  m_queue->setAutoStart(false);  // nothing starts by itself when the app opens; Launch starts the queue
  m_grades = new GradeEditor(this);
  m_cone = new ConePanel(this);
  m_monitor = new MonitorPanel(this);
  m_heatmaps = new HeatmapPanel(this);
  m_launcher = new LauncherPanel(m_queue, m_presetForm, this);
  m_inspector = new InspectorPanel(this);
  m_compare = new ComparePanel(this);
  m_attention = new AttentionCostPanel(this);
  m_attention->setResultsDir(qs(std::string(GLLM_SOURCE_DIR) + "/bench/results"));

  setCentralWidget(nullptr);
  addPanel(QStringLiteral("monitor"), tr("Monitor"), QStringLiteral("monitor"), m_monitor, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("grades"), tr("Grade editor"), QStringLiteral("grades"), m_grades, Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("preset"), tr("Run settings"), QStringLiteral("preset"), m_presetForm, Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("cone"), tr("Cone certificate"), QStringLiteral("cone"), m_cone, Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("queue"), tr("Runs"), QStringLiteral("queue"), m_launcher, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("heatmaps"), tr("Heatmaps"), QStringLiteral("heatmap"), m_heatmaps, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("inspector"), tr("Checkpoint inspector"), QStringLiteral("inspect"), m_inspector, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("compare"), tr("Compare"), QStringLiteral("compare"), m_compare, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("attention"), tr("Attention cost"), QStringLiteral("attention"), m_attention, Qt::RightDockWidgetArea);
  splitDockWidget(m_docks["grades"], m_docks["cone"], Qt::Horizontal);
  tabifyDockWidget(m_docks["grades"], m_docks["preset"]);
  splitDockWidget(m_docks["monitor"], m_docks["queue"], Qt::Vertical);
  tabifyDockWidget(m_docks["queue"], m_docks["heatmaps"]);
  tabifyDockWidget(m_docks["queue"], m_docks["inspector"]);
  tabifyDockWidget(m_docks["queue"], m_docks["compare"]);
  tabifyDockWidget(m_docks["queue"], m_docks["attention"]);
  m_docks["grades"]->raise();
  m_docks["queue"]->raise();

  // Grade editor ⇄ run settings ⇄ cone.
  auto pushCone = [this] { m_cone->setGrades(m_grades->levelGrades(), m_grades->lambda(), m_grades->clip()); };
  connect(m_grades, &GradeEditor::gradingChanged, this, [this, pushCone] {
    pushCone();
    if (m_syncing) return;
    m_syncing = true;
    m_presetForm->setConfig(m_grades->config());
    m_syncing = false;
  });
  connect(m_presetForm, &PresetForm::configChanged, this, [this] {
    if (m_syncing) return;
    m_syncing = true;
    m_grades->setConfig(m_presetForm->config());
    m_syncing = false;
  });
  connect(m_cone, &ConePanel::educatedRequested, this, [this](const std::vector<double>& v) { m_grades->setLevelGrades(v); });
  m_grades->setConfig(m_presetForm->config());
  pushCone();

  // Runs → monitor, heatmaps, compare.
  connect(m_queue, &RunQueue::step, this, [this](const QString& id, const StepRecord& r) {
    const QueueEntry* e = m_queue->entry(id);
    const QString run = e ? QStringLiteral("%1 s%2").arg(e->name).arg(e->seed) : id;
    MetricPoint p{double(r.step), double(r.tokens), r.flops, r.wall_s, r.loss};
    m_monitor->addPoint(run, QStringLiteral("loss"), p);
    p.value = r.tokens_per_s;
    m_monitor->addPoint(run, QStringLiteral("tokens_per_s"), p);
    p.value = r.peak_mem_mib;
    m_monitor->addPoint(run, QStringLiteral("peak_mem_mib"), p);
    statusBar()->showMessage(tr("%1: step %2/%3, loss %4, %5 tok/s").arg(run).arg(r.step).arg(r.total_steps)
                                 .arg(r.loss, 0, 'f', 4).arg(r.tokens_per_s, 0, 'f', 0));
  });
  connect(m_queue, &RunQueue::eval, this, [this](const QString& id, const EvalRecord& r) {
    const QueueEntry* e = m_queue->entry(id);
    const QString run = e ? QStringLiteral("%1 s%2").arg(e->name).arg(e->seed) : id;
    m_monitor->addPoint(run, qs(r.split + "_bpb"), MetricPoint{double(r.step), double(r.tokens), NAN, r.wall_s, r.bpb});
  });
  connect(m_queue, &RunQueue::checkpoint, this, [this](const QString& id, const CheckpointRecord& r) {
    const QueueEntry* e = m_queue->entry(id);
    loadCheckpointGrades(QStringLiteral("live: %1 s%2").arg(e ? e->name : id).arg(e ? e->seed : 0), qs(r.path));
  });
  connect(m_queue, &RunQueue::runFinished, this, [this] { m_compare->setRunsFolder(QDir(qs(runs_dir())).absolutePath()); });
  connect(m_inspector, &InspectorPanel::opened, this, [this](const QString& path) {
    loadCheckpointGrades(QFileInfo(path).dir().dirName() == QLatin1String("checkpoints")
                             ? QFileInfo(path).dir().absolutePath().section('/', -2, -2) + '/' + QFileInfo(path).completeBaseName()
                             : QFileInfo(path).fileName(),
                         path);
  });
  connect(m_heatmaps, &HeatmapPanel::openCheckpointRequested, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), qs(runs_dir()), tr("safetensors (*.safetensors)"));
    if (!f.isEmpty()) loadCheckpointGrades(QFileInfo(f).fileName(), f);
  });
  m_compare->setRunsFolder(runs);

  buildMenus();
  statusBar()->showMessage(tr("Ready — engine %1").arg(qs(engine_version())));
  restoreLayout();
}

QDockWidget* MainWindow::addPanel(const QString& name, const QString& title, const QString& icon,
                                  QWidget* widget, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(QStringLiteral("dock_") + name);
  // A scroll area lets every panel shrink below its natural size instead of growing the window.
  auto* scroll = new QScrollArea(dock);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(widget);
  dock->setWidget(scroll);
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
  file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open &run or checkpoint…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Open run folder"), qs(runs_dir()));
    if (!d.isEmpty()) {
      openRun(d);
      showPanel(QStringLiteral("inspector"));
    }
  });
  file->addSeparator();
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

QString MainWindow::openRun(const QString& dir) {
  const QString name = QDir(dir).dirName();
  QString err = m_monitor->loadMetricsFile(name, dir + QStringLiteral("/metrics.jsonl"));
  const QString ierr = m_inspector->open(dir);
  if (err.isEmpty()) err = ierr;
  statusBar()->showMessage(err.isEmpty() ? tr("Opened %1").arg(dir) : err);
  return err;
}

void MainWindow::loadCheckpointGrades(const QString& source, const QString& weightsPath) {
  try {
    const SafetensorsFile f = SafetensorsFile::open(ss(weightsPath));
    auto read3 = [&](const char* name, bool exponentiate) {
      GradeGrid g;
      if (!f.has(name)) return g;
      const auto& info = f.info(name);
      if (info.shape.size() != 3) return g;
      g = GradeGrid::zeros(int(info.shape[0]), int(info.shape[1]), int(info.shape[2]));
      const std::vector<float> v = f.to_float(name);
      for (size_t i = 0; i < v.size() && i < g.values.size(); ++i) g.values[i] = exponentiate ? std::exp(double(v[i])) : v[i];
      return g;
    };
    m_heatmaps->setSource(source, read3("attn_grades", false), read3("q_tau", true));
  } catch (const std::exception& e) {
    statusBar()->showMessage(qs(e.what()));
  }
}

void MainWindow::arrangeDocks(QSize size) {
  if (m_arranged) return;
  m_arranged = true;
  // Widths the panels need without clipping (with a scroll bar): grade editor ~540, cone ~560,
  // monitor and the tabs under it (runs, heatmaps, inspector, compare) ~700. 140 px of height go
  // to the menu, tool and status bars.
  const bool three = size.width() >= kThreeColumnWidth;
  const int grades = three ? 540 : 560, cone = three ? 560 : 0;
  const int right = std::max(700, size.width() - grades - cone);
  if (three) {
    resizeDocks({m_docks["grades"], m_docks["cone"], m_docks["monitor"]}, {grades, cone, right}, Qt::Horizontal);
  } else {
    tabifyDockWidget(m_docks["grades"], m_docks["cone"]);
    m_docks["grades"]->raise();
    resizeDocks({m_docks["grades"], m_docks["monitor"]}, {grades, right}, Qt::Horizontal);
  }
  const int column = std::max(500, size.height() - 140);
  resizeDocks({m_docks["monitor"], m_docks["queue"]}, {column * 62 / 100, column - column * 62 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
  arrangeDocks(size());
  QMainWindow::showEvent(event);
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
  auto* scroll = d ? qobject_cast<QScrollArea*>(d->widget()) : nullptr;
  return scroll ? scroll->widget() : nullptr;
}

void MainWindow::restoreLayout() {
  if (qEnvironmentVariableIsSet("GLLM_WORKBENCH_NO_SETTINGS")) return;
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  m_arranged = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
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
  arrangeDocks(size);
  show();
  resize(size);
  if (!panelName.isEmpty()) showPanel(panelName);
  // Let layouts, charts and coalescing timers settle before grabbing.
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
  if (!pix.save(path, "PNG")) return tr("could not write %1; check the folder exists and is writable").arg(path);
  return {};
}

}  // namespace gllm::gui
