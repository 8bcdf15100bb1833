// MainWindow: builds the docks, menus and tool bar and wires the panels together (its runs and
// checkpoints: main_window_runs.cpp; its layout and settings: main_window_layout.cpp).
#include "widgets/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QPalette>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>
#include <algorithm>
#include <cmath>

#include "engine/config/run_config.h"
#include "engine/engine_info.h"
#include "engine/io/paths.h"
#include "widgets/attention_cost_panel.h"
#include "widgets/checkpoint_timeline.h"
#include "widgets/cluster_panel.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/data_panel.h"
#include "widgets/grade_editor.h"
#include "widgets/heatmap_panel.h"
#include "widgets/inspector_panel.h"
#include "widgets/ladder_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/metric_store.h"
#include "widgets/monitor_panel.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/wheel_guard.h"
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
  WheelGuard::install();  // a wheel notch over a form never changes a setting
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
  m_cluster = new ClusterPanel(m_launcher, this);
  m_inspector = new InspectorPanel(this);
  m_compare = new ComparePanel(this);
  m_attention = new AttentionCostPanel(this);
  m_ladder = new LadderPanel(this);
  m_data = new DataPanel(this);
  m_attention->setResultsDir(projectFolder(QStringLiteral("bench/results")));

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
  addPanel(QStringLiteral("cluster"), tr("Cluster"), QStringLiteral("cluster"), m_cluster,
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
  addPanel(QStringLiteral("data"), tr("Data"), QStringLiteral("data"), m_data,
           Qt::LeftDockWidgetArea);
  // Grade editor, cone and run settings are placed by arrangeDocks (side by side or stacked).
  splitDockWidget(m_docks["monitor"], m_docks["queue"], Qt::Vertical);
  tabifyDockWidget(m_docks["queue"], m_docks["cluster"]);
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
       {QStringLiteral("queue"), QStringLiteral("cluster"), QStringLiteral("heatmaps"),
        QStringLiteral("inspector"), QStringLiteral("compare"), QStringLiteral("attention"),
        QStringLiteral("ladder")}) {
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
  // A prepared dataset chosen in the Data panel: the run settings train from it.
  connect(m_data, &DataPanel::datasetChosen, this, [this](const QString& dir, int vocab) {
    // Folder and vocabulary first: "prepared" is accepted only with a dataset folder.
    m_presetForm->editField(QStringLiteral("data.corpus_path"), dir);
    if (vocab > 0)
      m_presetForm->editField(QStringLiteral("data.vocab_size"), QString::number(vocab));
    if (!m_presetForm->editField(QStringLiteral("data.corpus"), QStringLiteral("prepared"))) {
      statusBar()->showMessage(
          tr("The run settings refused the dataset %1: %2")
              .arg(dir, m_presetForm->fieldError(QStringLiteral("data.corpus"))));
      return;
    }
    showPanel(QStringLiteral("preset"));
    statusBar()->showMessage(
        tr("Run settings train from the prepared dataset %1 (vocabulary %2)").arg(dir).arg(vocab));
  });
  connect(m_cone, &ConePanel::educatedRequested, this,
          [this](const std::vector<double>& v) { m_grades->setLevelGrades(v); });
  m_grades->setConfig(m_presetForm->config());
  pushCone();
  m_launcher->setExtraCheck([this] { return m_grades->invalidFields(); });
  // Launch's refusal points at a field the user can see: its panel raised, the field focused.
  connect(m_launcher, &LauncherPanel::refusedAtField, this, [this] {
    QDockWidget* dock = nullptr;
    QWidget* field = nullptr;
    if (m_grades->firstInvalidField()) {
      dock = m_docks["grades"];
    } else if (const QStringList bad = m_presetForm->invalidFields(); !bad.isEmpty()) {
      dock = m_docks["preset"];
      field = m_presetForm->fieldEditor(bad.first().section(QStringLiteral(": "), 0, 0));
    }
    if (!dock) return;
    dock->show();
    dock->raise();
    if (field)
      revealField(field);
    else
      m_grades->revealInvalidField();
  });

  // Runs → monitor, heatmaps, compare.
  connect(m_queue, &RunQueue::step, this, [this](const QString& id, const StepRecord& r) {
    const QString run = liveKey(id);
    MetricPoint p{double(r.step), double(r.tokens), r.flops, r.wall_s, r.loss};
    addLivePoint(run, QStringLiteral("loss"), p);
    p.value = r.tokens_per_s;
    addLivePoint(run, QStringLiteral("tokens_per_s"), p);
    p.value = r.peak_mem_mib;
    addLivePoint(run, QStringLiteral("peak_mem_mib"), p);
    if (r.estimate_mem_mib > 0) {
      p.value = r.estimate_mem_mib;
      addLivePoint(run, QStringLiteral("estimate_mem_mib"), p);
    }
    statusBar()->showMessage(tr("%1: step %2/%3, loss %4, %5 tok/s")
                                 .arg(run)
                                 .arg(r.step)
                                 .arg(r.total_steps)
                                 .arg(r.loss, 0, 'f', 4)
                                 .arg(r.tokens_per_s, 0, 'f', 0));
  });
  connect(m_queue, &RunQueue::eval, this, [this](const QString& id, const EvalRecord& r) {
    addLivePoint(liveKey(id), qs(r.split + "_bpb"),
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
            m_heatmaps->setSource(source,
                                  gridFromTensor(r.attn_grades.shape, r.attn_grades.values, false),
                                  gridFromTensor(r.q_tau.shape, r.q_tau.values, true), levels);
            if (!e) return;
            const QString weights = QDir(e->runDir).absoluteFilePath(qs(r.path));
            m_liveHeatmapSources[id] = {source, weights};
            followRunCheckpoints(e->runDir, source, r.step);
          });
  // A run that ends: its live heatmap source takes its last checkpoint's name (no "live:" left on
  // a run that is over), and the step slider lists its final checkpoints.
  connect(m_queue, &RunQueue::runFinished, this, [this](const QString& id, const QString&) {
    const QueueEntry* e = m_queue->entry(id);
    const auto live = m_liveHeatmapSources.take(id);
    if (!live.first.isEmpty())
      m_heatmaps->renameSource(live.first, checkpointSourceName(live.second));
    if (e && sameFolder(m_followedRun, e->runDir)) m_heatmaps->timeline()->setRun(e->runDir);
  });
  // Live runs join their seed group in the monitor (runs whose configs differ only in the seed).
  connect(m_queue, &RunQueue::runStarted, this, [this](const QString& id, const QString& dir) {
    const QueueEntry* e = m_queue->entry(id);
    if (!e) return;
    m_monitor->setRunConfig(liveKey(id), e->config);
    m_monitor->setRunFolder(liveKey(id), QDir(dir).absolutePath());
    // The step slider follows a run that starts (a resumed one lists its checkpoints at once)
    // unless it shows another run's.
    followRunCheckpoints(dir, QString(), -1);
    // A resumed run: its history from the folder first, the live steps after it.
    if (QFileInfo(QDir(dir).filePath(QStringLiteral("metrics.jsonl"))).size() > 0)
      loadRunMetrics(dir);
  });
  connect(m_queue, &RunQueue::runFinished, this,
          [this] { m_compare->setRunsFolder(QDir(qs(runs_dir())).absolutePath()); });
  // Cluster runs are drawn from their metrics on the shared filesystem, like any run folder; the
  // legend says where each stands with the scheduler.
  connect(m_cluster, &ClusterPanel::runMetricsChanged, this,
          [this](const QString& dir, const QString& note) {
            m_monitor->setRunNote(runKey(dir), tr("cluster: %1").arg(note));
            if (m_metricReads.value(runKey(dir)) == 0) loadRunMetrics(dir, false);
          });
  connect(m_cluster, &ClusterPanel::runNoteChanged, this,
          [this](const QString& dir, const QString& note) {
            m_monitor->setRunNote(runKey(dir), tr("cluster: %1").arg(note));
          });
  // The Runs table lists the cluster's runs under the queue's; its Launch submits when "Run on"
  // names a cluster profile.
  connect(m_cluster, &ClusterPanel::runsListed, this, [this] {
    m_launcher->setClusterProfiles(m_cluster->profiles());
    m_launcher->setClusterRuns(m_cluster->runViews());
  });
  connect(m_cluster, &ClusterPanel::statusChanged, m_launcher, &LauncherPanel::showClusterStatus);
  m_launcher->setClusterSubmit([this](const QString& profile) {
    if (!m_cluster->setProfile(profile))
      return tr("cluster profile %1 is gone; choose another in Run on").arg(profile);
    return m_cluster->submit(false);
  });
  m_launcher->setClusterCancel([this](const QString& dir) { return m_cluster->cancelRun(dir); });
  connect(m_cluster, &ClusterPanel::openRequested, this, [this](const QString& dir) {
    openRun(dir);
    showPanel(QStringLiteral("monitor"));
  });
  connect(m_inspector, &InspectorPanel::opened, this, [this](const QString& path) {
    // openRun() reads a run's grades itself (every run opened becomes a heatmap source).
    if (!m_heatmaps->sourceNames().contains(checkpointSourceName(path))) loadCheckpointGrades(path);
  });
  connect(m_heatmaps, &HeatmapPanel::openCheckpointRequested, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), qs(runs_dir()),
                                                   tr("safetensors (*.safetensors)"));
    if (!f.isEmpty()) loadCheckpointGrades(f);
  });
  connect(m_heatmaps->timeline(), &CheckpointTimeline::checkpointChosen, this,
          [this](const QString& weights) { loadCheckpointGrades(weights, true); });
  connect(m_inspector, &InspectorPanel::failed, this,
          [this](const QString& error) { statusBar()->showMessage(error); });
  m_compare->setRunsFolder(runs);
  loadRunsFolder(runs);  // like a log directory: every run there, with its whole history
  // The ladder sweep writes runs/ladder-tiny (gllm train --sweep presets/sweeps/ladder-tiny.json).
  const QString ladderRuns = QDir(runs).filePath(QStringLiteral("ladder-tiny"));
  if (QDir(ladderRuns).exists()) m_ladder->setRunsFolder(ladderRuns);
  // The cone starts on the Brown profiles when `gllm profiles` wrote them into the data cache; the
  // geometric (ν, μ) explorer of Table 3 is one click away.
  const QString profiles = defaultProfilesFile();
  if (!profiles.isEmpty()) loadProfiles(profiles);

  buildMenus();
  statusBar()->showMessage(tr("Ready — engine %1").arg(qs(engine_version())));
  restoreSettings();
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

bool MainWindow::waitForIdle(int ms) {
  return runEventsUntil(
      [this] {
        return m_pendingReads == 0 && !m_inspector->busy() && !m_compare->busy() &&
               !m_heatmaps->timeline()->busy() && !m_cone->busy() && !m_ladder->busy() &&
               !m_queue->starting() && !m_cluster->busy() && m_cluster->pollCount() > 0;
      },
      ms);
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

}  // namespace gllm::gui
