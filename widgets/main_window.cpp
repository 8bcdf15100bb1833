// MainWindow implementation: builds the docks, menus and tool bar, restores the saved layout,
// and renders offscreen screenshots for the documentation and the GUI tests.
#include "widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QPalette>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QShowEvent>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"
#include "widgets/attention_cost_panel.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/grade_editor.h"
#include "widgets/heatmap_panel.h"
#include "widgets/inspector_panel.h"
#include "widgets/ladder_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/metric_store.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

static void initWorkbenchResources() {
  Q_INIT_RESOURCE(resources);
}

namespace gllm::gui {

namespace {
// The scroll area of a dock: the panel fills the viewport and scrolls only below its minimum size.
// (QScrollArea's widgetResizable sizes a panel with a word-wrapped label to its preferred height,
// so a heatmap or a table would scroll out of a dock it fits in.)
class PanelScrollArea : public QScrollArea {
 public:
  explicit PanelScrollArea(QWidget* parent) : QScrollArea(parent) { setWidgetResizable(false); }
  void setPanel(QWidget* panel) {
    setWidget(panel);
    panel->installEventFilter(this);
    viewport()->installEventFilter(this);
    fit();
  }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QScrollArea::resizeEvent(event);
    fit();
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    // A panel's size hints changed (LayoutRequest reaches the panel and its parent, the viewport).
    if (event->type() == QEvent::LayoutRequest && (watched == widget() || watched == viewport()))
      QTimer::singleShot(0, this, [this] { fit(); });
    return QScrollArea::eventFilter(watched, event);
  }

 private:
  void fit() {
    QWidget* panel = widget();
    if (!panel) return;
    const QSize view = maximumViewportSize();  // the viewport without scroll bars
    const QSize min = panel->minimumSizeHint().expandedTo(panel->minimumSize());
    auto heightFor = [&](int width) {
      int h = min.height();
      if (QLayout* l = panel->layout(); l && l->hasHeightForWidth())
        h = std::max(h, l->minimumHeightForWidth(width));
      return h;
    };
    int width = std::max(view.width(), min.width());
    int height = std::max(view.height(), heightFor(width));
    if (height > view.height()) {  // a vertical scroll bar takes its width from the panel
      width = std::max(view.width() - verticalScrollBar()->sizeHint().width(), min.width());
      height = std::max(view.height(), heightFor(width));
    }
    if (panel->size() != QSize(width, height)) panel->resize(width, height);
  }
};

// A checkpoint's grades as the heatmaps show them: q and exp(q_τ) per (layer, head, plane), and
// the MLGE level grades.
struct CheckpointGrades {
  QString weightsPath;
  GradeGrid grades, queryScale;
  std::vector<double> levelGrades;
  QString error;
};

GradeGrid gridOf(const std::vector<int64_t>& shape, const std::vector<float>& values,
                 bool exponentiate) {
  if (shape.size() != 3) return {};
  GradeGrid g = GradeGrid::zeros(int(shape[0]), int(shape[1]), int(shape[2]));
  for (size_t i = 0; i < values.size() && i < g.values.size(); ++i)
    g.values[i] = exponentiate ? std::exp(double(values[i])) : double(values[i]);
  return g;
}

// Worker thread: resolves a run folder to its newest valid checkpoint (hash checks) and reads the
// file (all of it: safetensors are read whole).
CheckpointGrades readCheckpointGrades(const std::string& runOrCheckpoint) {
  CheckpointGrades out;
  try {
    const std::string path = resolve_weights_path(runOrCheckpoint);
    out.weightsPath = qs(path);
    const SafetensorsFile f = SafetensorsFile::open(path);
    auto read = [&](const char* name, bool exponentiate) {
      if (!f.has(name)) return GradeGrid{};
      return gridOf(f.info(name).shape, f.to_float(name), exponentiate);
    };
    out.grades = read("attn_grades", false);
    out.queryScale = read("q_tau", true);
    if (f.has("mlge.level_grades"))
      for (float v : f.to_float("mlge.level_grades")) out.levelGrades.push_back(v);
  } catch (const std::exception& e) {
    out.error = qs(e.what());
  }
  return out;
}
}  // namespace

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
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks |
                 QMainWindow::AllowNestedDocks);
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
  m_queue->setAutoStart(
      false);  // nothing starts by itself when the app opens; Launch starts the queue
  m_grades = new GradeEditor(this);
  m_cone = new ConePanel(this);
  m_monitor = new MonitorPanel(this);
  m_heatmaps = new HeatmapPanel(this);
  m_launcher = new LauncherPanel(m_queue, m_presetForm, this);
  m_inspector = new InspectorPanel(this);
  m_compare = new ComparePanel(this);
  m_attention = new AttentionCostPanel(this);
  m_ladder = new LadderPanel(this);
  m_attention->setResultsDir(qs(std::string(GLLM_SOURCE_DIR) + "/bench/results"));

  setCentralWidget(nullptr);
  addPanel(QStringLiteral("monitor"), tr("Monitor"), QStringLiteral("monitor"), m_monitor,
           Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("grades"), tr("Grade editor"), QStringLiteral("grades"), m_grades,
           Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("preset"), tr("Run settings"), QStringLiteral("preset"), m_presetForm,
           Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("cone"), tr("Cone certificate"), QStringLiteral("cone"), m_cone,
           Qt::LeftDockWidgetArea);
  addPanel(QStringLiteral("queue"), tr("Runs"), QStringLiteral("queue"), m_launcher,
           Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("heatmaps"), tr("Heatmaps"), QStringLiteral("heatmap"), m_heatmaps,
           Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("inspector"), tr("Checkpoint inspector"), QStringLiteral("inspect"),
           m_inspector, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("compare"), tr("Compare"), QStringLiteral("compare"), m_compare,
           Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("attention"), tr("Attention cost"), QStringLiteral("attention"),
           m_attention, Qt::RightDockWidgetArea);
  addPanel(QStringLiteral("ladder"), tr("Ladder"), QStringLiteral("cone"), m_ladder,
           Qt::RightDockWidgetArea);
  splitDockWidget(m_docks["grades"], m_docks["cone"], Qt::Horizontal);
  tabifyDockWidget(m_docks["grades"], m_docks["preset"]);
  splitDockWidget(m_docks["monitor"], m_docks["queue"], Qt::Vertical);
  tabifyDockWidget(m_docks["queue"], m_docks["heatmaps"]);
  tabifyDockWidget(m_docks["queue"], m_docks["inspector"]);
  tabifyDockWidget(m_docks["queue"], m_docks["compare"]);
  tabifyDockWidget(m_docks["queue"], m_docks["attention"]);
  tabifyDockWidget(m_docks["queue"], m_docks["ladder"]);
  m_docks["grades"]->raise();
  m_docks["queue"]->raise();
  // The panel raised in the tabs under the monitor gets the height it needs (the run queue a third
  // of the column, the charts and tables of the others about two thirds).
  for (const QString& name :
       {QStringLiteral("queue"), QStringLiteral("heatmaps"), QStringLiteral("inspector"),
        QStringLiteral("compare"), QStringLiteral("attention"), QStringLiteral("ladder")}) {
    connect(m_docks[name], &QDockWidget::visibilityChanged, this, [this, name](bool visible) {
      if (visible) QTimer::singleShot(0, this, [this, name] { fitRaisedPanel(name); });
    });
  }

  // Grade editor ⇄ run settings ⇄ cone.
  auto pushCone = [this] {
    m_cone->setGrades(m_grades->levelGrades(), m_grades->lambda(), m_grades->clip());
    m_cone->setConfig(m_grades->config(),
                      tr("the run settings (%1)").arg(qs(m_grades->config().name)));
  };
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
  connect(m_cone, &ConePanel::educatedRequested, this,
          [this](const std::vector<double>& v) { m_grades->setLevelGrades(v); });
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
    statusBar()->showMessage(tr("%1: step %2/%3, loss %4, %5 tok/s")
                                 .arg(run)
                                 .arg(r.step)
                                 .arg(r.total_steps)
                                 .arg(r.loss, 0, 'f', 4)
                                 .arg(r.tokens_per_s, 0, 'f', 0));
  });
  connect(m_queue, &RunQueue::eval, this, [this](const QString& id, const EvalRecord& r) {
    const QueueEntry* e = m_queue->entry(id);
    const QString run = e ? QStringLiteral("%1 s%2").arg(e->name).arg(e->seed) : id;
    m_monitor->addPoint(run, qs(r.split + "_bpb"),
                        MetricPoint{double(r.step), double(r.tokens), NAN, r.wall_s, r.bpb});
  });
  connect(m_queue, &RunQueue::checkpoint, this,
          [this](const QString& id, const CheckpointRecord& r) {
            const QueueEntry* e = m_queue->entry(id);
            const QString source =
                QStringLiteral("live: %1 s%2").arg(e ? e->name : id).arg(e ? e->seed : 0);
            // The record carries the grades: no checkpoint read on the GUI thread (nor on any
            // other).
            std::vector<double> levels(r.level_grades.values.begin(), r.level_grades.values.end());
            m_heatmaps->setSource(source, gridOf(r.attn_grades.shape, r.attn_grades.values, false),
                                  gridOf(r.q_tau.shape, r.q_tau.values, true), levels);
          });
  // Live runs join their seed group in the monitor (runs whose configs differ only in the seed).
  connect(m_queue, &RunQueue::runStarted, this, [this](const QString& id) {
    if (const QueueEntry* e = m_queue->entry(id))
      m_monitor->setRunConfig(QStringLiteral("%1 s%2").arg(e->name).arg(e->seed), e->config);
  });
  connect(m_queue, &RunQueue::runFinished, this,
          [this] { m_compare->setRunsFolder(QDir(qs(runs_dir())).absolutePath()); });
  connect(m_inspector, &InspectorPanel::opened, this, [this](const QString& path) {
    // openRun() reads a run's grades itself (every run opened becomes a heatmap source).
    if (!m_heatmaps->sourceNames().contains(checkpointSourceName(path))) loadCheckpointGrades(path);
  });
  connect(m_heatmaps, &HeatmapPanel::openCheckpointRequested, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), qs(runs_dir()),
                                                   tr("safetensors (*.safetensors)"));
    if (!f.isEmpty()) loadCheckpointGrades(f);
  });
  connect(m_inspector, &InspectorPanel::failed, this,
          [this](const QString& error) { statusBar()->showMessage(error); });
  m_compare->setRunsFolder(runs);
  // The ladder sweep writes runs/ladder-tiny (gllm train --sweep presets/sweeps/ladder-tiny.json).
  const QString ladderRuns = QDir(runs).filePath(QStringLiteral("ladder-tiny"));
  if (QDir(ladderRuns).exists()) m_ladder->setRunsFolder(ladderRuns);
  // The cone starts on the Brown profiles when `gllm profiles` wrote them into the data cache; the
  // geometric (ν, μ) explorer of Table 3 is one click away.
  const QString profiles = defaultProfilesFile();
  if (!profiles.isEmpty()) loadProfiles(profiles);

  buildMenus();
  statusBar()->showMessage(tr("Ready — engine %1").arg(qs(engine_version())));
  restoreLayout();
}

QDockWidget* MainWindow::addPanel(const QString& name, const QString& title, const QString& icon,
                                  QWidget* widget, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(QStringLiteral("dock_") + name);
  // A scroll area lets every panel shrink below its natural size instead of growing the window.
  auto* scroll = new PanelScrollArea(dock);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setPanel(widget);
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
  file->addAction(
      QIcon(QStringLiteral(":/icons/open.svg")), tr("Open &run or checkpoint…"), this, [this] {
        const QString d =
            QFileDialog::getExistingDirectory(this, tr("Open run folder"), qs(runs_dir()));
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
    QMessageBox::about(
        this, tr("About GLLM Workbench"),
        tr("<b>GLLM Workbench</b> %1<br>Graded language-model research: grades and the "
           "admissible cone, runs, monitors and checkpoint audits.")
            .arg(qs(engine_version())));
  });
}

QString MainWindow::openRun(const QString& dir) {
  if (!QFileInfo(dir).isDir())
    return tr("%1 is not a folder; give a run folder (it holds metrics.jsonl)").arg(dir);
  const QString name = QDir(dir).dirName();
  ++m_pendingReads;
  auto* watcher = new QFutureWatcher<LoadedRun>(this);
  connect(watcher, &QFutureWatcher<LoadedRun>::finished, this, [this, watcher, name, dir] {
    --m_pendingReads;
    const LoadedRun data = watcher->result();
    watcher->deleteLater();
    if (!data.error.isEmpty()) {
      statusBar()->showMessage(data.error);
      Q_EMIT runOpenFailed(dir, data.error);
      return;
    }
    m_monitor->setRun(name, data);
    statusBar()->showMessage(data.warning.isEmpty() ? tr("Opened %1").arg(dir) : data.warning);
  });
  watcher->setFuture(
      QtConcurrent::run(&MetricStore::readMetricsFile, dir + QStringLiteral("/metrics.jsonl")));
  loadCheckpointGrades(dir);  // every run opened is a heatmap source (A − B compares two)
  m_inspector->open(dir);
  statusBar()->showMessage(tr("Opening %1 …").arg(dir));
  return {};
}

QString MainWindow::loadProfiles(const QString& path) {
  return m_cone->loadProfilesFile(path);
}

QString MainWindow::defaultProfilesFile() {
  // The newest `gllm profiles` output in the data cache, else the Brown profiles the ladder presets
  // ship with (presets/ladders), so a fresh clone starts on estimated profiles too.
  const QString cached = newestFile(qs(data_cache_dir()), {QStringLiteral("profiles*.json")});
  if (!cached.isEmpty()) return cached;
  return newestFile(QDir(qs(presets_dir())).filePath(QStringLiteral("ladders")),
                    {QStringLiteral("*profiles*.json")});
}

bool MainWindow::waitForIdle(int ms) {
  return runEventsUntil(
      [this] {
        return m_pendingReads == 0 && !m_inspector->busy() && !m_compare->busy() &&
               !m_cone->busy() && !m_queue->starting();
      },
      ms);
}

QString MainWindow::checkpointSourceName(const QString& weightsPath) {
  const QFileInfo f(weightsPath);
  // runs/NAME/checkpoints/step_000300.safetensors → NAME/step_000300
  if (f.dir().dirName() == QLatin1String("checkpoints"))
    return f.dir().absolutePath().section('/', -2, -2) + '/' + f.completeBaseName();
  return f.fileName();
}

void MainWindow::loadCheckpointGrades(const QString& runOrCheckpoint) {
  const int generation = ++m_gradeRequests[runOrCheckpoint];
  ++m_pendingReads;
  auto* watcher = new QFutureWatcher<CheckpointGrades>(this);
  connect(watcher, &QFutureWatcher<CheckpointGrades>::finished, this,
          [this, watcher, runOrCheckpoint, generation] {
            --m_pendingReads;
            const CheckpointGrades g = watcher->result();
            watcher->deleteLater();
            if (generation != m_gradeRequests.value(runOrCheckpoint))
              return;  // a newer read replaced it
            if (!g.error.isEmpty()) {
              statusBar()->showMessage(g.error);
              return;
            }
            m_heatmaps->setSource(checkpointSourceName(g.weightsPath), g.grades, g.queryScale,
                                  g.levelGrades);
          });
  watcher->setFuture(QtConcurrent::run(readCheckpointGrades, ss(runOrCheckpoint)));
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
    resizeDocks({m_docks["grades"], m_docks["cone"], m_docks["monitor"]}, {grades, cone, right},
                Qt::Horizontal);
  } else {
    tabifyDockWidget(m_docks["grades"], m_docks["cone"]);
    m_docks["grades"]->raise();
    resizeDocks({m_docks["grades"], m_docks["monitor"]}, {grades, right}, Qt::Horizontal);
  }
  const int column = std::max(500, size.height() - 140);
  const int bottom = int(std::lround(column * heightShare(QStringLiteral("queue"))));
  resizeDocks({m_docks["monitor"], m_docks["queue"]}, {column - bottom, bottom}, Qt::Vertical);
}

double MainWindow::heightShare(const QString& panel) {
  if (panel == QLatin1String("queue")) return 0.38;
  if (panel == QLatin1String("inspector")) return 0.66;
  return 0.6;
}

void MainWindow::fitRaisedPanel(const QString& name) {
  QDockWidget* d = m_docks.value(name, nullptr);
  QDockWidget* monitor = m_docks.value(QStringLiteral("monitor"), nullptr);
  if (!m_arranged || !d || !monitor || d->isFloating() || monitor->isFloating() ||
      !d->isVisible() || !monitor->isVisible())
    return;
  // Only in the layout the workbench made: the panel in the tabs right under the monitor.
  const bool underMonitor = dockWidgetArea(d) == dockWidgetArea(monitor) &&
                            d->geometry().top() > monitor->geometry().bottom() &&
                            d->geometry().left() < monitor->geometry().right() &&
                            monitor->geometry().left() < d->geometry().right();
  if (!underMonitor) return;
  const int column = monitor->height() + d->height();
  const int bottom = int(std::lround(column * heightShare(name)));
  if (std::abs(d->height() - bottom) < 8) return;
  resizeDocks({monitor, d}, {column - bottom, bottom}, Qt::Vertical);
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
