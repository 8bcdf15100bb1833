// ClusterPanel implementation: polls (watch_cluster_runs: one squeue, at most one sacct) and
// every sbatch / scancel / scontrol call run on QtConcurrent workers; the GUI thread only draws.
#include "widgets/cluster_panel.h"

#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/cluster/cluster_profile.h"
#include "engine/cluster/cluster_watch.h"
#include "engine/cluster/submit.h"
#include "engine/config/run_config.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "widgets/launcher_panel.h"
#include "widgets/widget_util.h"

namespace gllm::gui {
namespace {

enum Column { kRun, kSeed, kState, kDetail, kOwn, kStep, kValBpb, kColumns };

struct PollResult {
  std::shared_ptr<ClusterSnapshot> snapshot;
  QStringList profiles, profileRoots;
  QString problems;
};

PollResult pollCluster(const QStringList& roots) {
  PollResult r;
  std::vector<std::string> problems;
  QStringList all = roots;
  for (const auto& name : list_cluster_profiles(&problems)) {
    r.profiles << qs(name);
    try {
      const ClusterProfile p = load_cluster_profile(name);
      if (!p.runs_root.empty()) r.profileRoots << qs(p.runs_root);
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  all += r.profileRoots;
  all.removeDuplicates();
  std::vector<std::string> dirs;
  for (const QString& d : all)
    if (QDir(d).exists()) dirs.push_back(ss(d));
  r.snapshot = std::make_shared<ClusterSnapshot>(watch_cluster_runs(dirs));
  for (const auto& e : r.snapshot->errors) problems.push_back(e);
  QStringList lines;
  for (const auto& p : problems) lines << qs(p);
  r.problems = lines.join(QLatin1Char('\n'));
  return r;
}

QString ids(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << qs(s);
  return out.join(QStringLiteral(", "));
}

}  // namespace

ClusterPanel::ClusterPanel(LauncherPanel* launcher, QWidget* parent)
    : QWidget(parent), m_launcher(launcher) {
  bool ok = false;
  const int env = qEnvironmentVariableIntValue("GLLM_CLUSTER_POLL_S", &ok);
  if (ok) m_pollSeconds = std::max(1, env);
  m_confirm = [this](const QString& q) {
    return QMessageBox::question(this, tr("Cancel the sweep"), q) == QMessageBox::Yes;
  };

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* row = new QHBoxLayout;
  m_profile = new QComboBox(this);
  m_profile->setObjectName(QStringLiteral("clusterProfile"));
  m_profile->setToolTip(
      tr("Cluster profile: partition, account, time limit, GPUs and the shared runs root "
         "(gllm cluster set NAME … makes one; they live in %1)")
          .arg(qs(cluster_profiles_dir())));
  m_profile->setMinimumContentsLength(10);
  m_profile->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_throttle = new QSpinBox(this);
  m_throttle->setObjectName(QStringLiteral("clusterThrottle"));
  m_throttle->setRange(0, 10000);
  m_throttle->setSpecialValueText(tr("profile's"));
  m_throttle->setToolTip(
      tr("Array tasks running at once (sbatch --array=…%N); \"profile's\" uses its max_parallel"));
  m_submit =
      new QPushButton(QIcon(QStringLiteral(":/icons/launch.svg")), tr("Submit to cluster"), this);
  m_submit->setObjectName(QStringLiteral("primary"));
  m_submit->setToolTip(
      tr("Send the run settings once per seed (the Runs panel's Seeds) as one SLURM job array: "
         "folders are made now and show as pending; the batch script is kept beside them."));
  m_script = new QPushButton(tr("Script…"), this);
  m_script->setToolTip(tr("Show the batch script Submit would send; submit and make nothing."));
  row->addWidget(new QLabel(tr("Cluster"), this));
  row->addWidget(m_profile, 2);
  row->addWidget(new QLabel(tr("At once"), this));
  row->addWidget(m_throttle);
  row->addWidget(m_submit);
  row->addWidget(m_script);
  layout->addLayout(row);
  m_hint = new QLabel(this);
  m_hint->setObjectName(QStringLiteral("hint"));
  m_hint->setWordWrap(true);
  m_hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_hint->setVisible(false);
  layout->addWidget(m_hint);

  m_table = new QTableWidget(0, kColumns, this);
  m_table->setObjectName(QStringLiteral("clusterRuns"));
  m_table->setHorizontalHeaderLabels({tr("Run"), tr("Seed"), tr("Cluster"), tr("Where / why"),
                                      tr("Status"), tr("Step"), tr("val BPB")});
  m_table->horizontalHeader()->setStretchLastSection(false);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(kRun, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(kDetail, QHeaderView::Interactive);
  m_table->setColumnWidth(kDetail, 170);
  m_table->setTextElideMode(Qt::ElideMiddle);
  m_table->setWordWrap(false);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->setVisible(false);
  m_table->verticalHeader()->setDefaultSectionSize(24);
  layout->addWidget(m_table, 1);

  // The task actions sit in a menu (the Tasks button, and the table's context menu) so the table
  // keeps the height of a dock under the Monitor.
  m_tasks = new QToolButton(this);
  m_tasks->setText(tr("Tasks"));
  m_tasks->setObjectName(QStringLiteral("clusterTasks"));
  m_tasks->setPopupMode(QToolButton::InstantPopup);
  m_tasks->setToolButtonStyle(Qt::ToolButtonTextOnly);
  auto* menu = new QMenu(m_tasks);
  m_cancel = menu->addAction(QIcon(QStringLiteral(":/icons/cancel.svg")), tr("Cancel task"));
  m_cancel->setToolTip(tr("scancel the selected run's task (a running one stops at once)"));
  m_cancelSweep = menu->addAction(tr("Cancel sweep"));
  m_cancelSweep->setToolTip(tr("scancel every unfinished task of the selected run's sweep"));
  m_requeue = menu->addAction(QIcon(QStringLiteral(":/icons/resume.svg")), tr("Requeue"));
  m_requeue->setToolTip(
      tr("scontrol requeue: a running task checkpoints at its next step and resumes exactly"));
  menu->addSeparator();
  m_open = menu->addAction(tr("Open in the Monitor"));
  QAction* watch = menu->addAction(tr("Watch folder…"));
  watch->setToolTip(tr("Also watch a sweep or runs folder submitted elsewhere (gllm submit)"));
  QAction* refresh = menu->addAction(QIcon(QStringLiteral(":/icons/refresh.svg")), tr("Refresh"));
  refresh->setToolTip(tr("Ask the scheduler now (it is asked every %1 s while runs are active)")
                          .arg(m_pollSeconds));
  menu->setToolTipsVisible(true);
  m_tasks->setMenu(menu);
  row->addWidget(m_tasks);
  m_table->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_table, &QWidget::customContextMenuRequested, this, [this, menu](const QPoint& at) {
    if (auto* item = m_table->itemAt(at)) m_table->selectRow(item->row());
    menu->popup(m_table->viewport()->mapToGlobal(at));
  });
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_status);

  connect(m_submit, &QPushButton::clicked, this, [this] { submit(false); });
  connect(m_script, &QPushButton::clicked, this, [this] { submit(true); });
  connect(m_cancel, &QAction::triggered, this, &ClusterPanel::cancelSelected);
  connect(m_cancelSweep, &QAction::triggered, this, &ClusterPanel::cancelSelectedSweep);
  connect(m_requeue, &QAction::triggered, this, &ClusterPanel::requeueSelected);
  connect(m_open, &QAction::triggered, this, [this] {
    if (!selectedRun().isEmpty()) Q_EMIT openRequested(selectedRun());
  });
  connect(watch, &QAction::triggered, this, [this] {
    const QString d =
        QFileDialog::getExistingDirectory(this, tr("Watch a sweep or runs folder"), qs(runs_dir()));
    if (!d.isEmpty()) addWatchedFolder(d);
  });
  connect(refresh, &QAction::triggered, this, &ClusterPanel::pollNow);
  connect(m_table, &QTableWidget::itemSelectionChanged, this, &ClusterPanel::updateButtons);
  m_timer = new QTimer(this);
  m_timer->setSingleShot(true);
  connect(m_timer, &QTimer::timeout, this, &ClusterPanel::poll);
  setStatus(tr("Watching %1 for cluster runs").arg(qs(runs_dir())));
  updateButtons();
  QTimer::singleShot(0, this, &ClusterPanel::poll);
}

ClusterPanel::~ClusterPanel() = default;

QString ClusterPanel::profile() const {
  return m_profile->currentData().toString();
}

bool ClusterPanel::setProfile(const QString& name) {
  const int i = m_profile->findData(name);
  if (i < 0) return false;
  m_profile->setCurrentIndex(i);
  return true;
}

void ClusterPanel::setThrottle(int tasks) {
  m_throttle->setValue(tasks);
}

QStringList ClusterPanel::roots() const {
  QStringList r{QDir(qs(runs_dir())).absolutePath()};
  r += m_profileRoots;
  r += m_extraRoots;
  r.removeDuplicates();
  return r;
}

void ClusterPanel::pollNow() {
  if (m_polling) {
    m_pollAgain = true;
    return;
  }
  poll();
}

void ClusterPanel::poll() {
  if (m_polling) return;
  m_timer->stop();
  m_polling = true;
  auto* watcher = new QFutureWatcher<PollResult>(this);
  connect(watcher, &QFutureWatcher<PollResult>::finished, this, [this, watcher] {
    const PollResult r = watcher->result();
    watcher->deleteLater();
    m_polling = false;
    ++m_polls;
    m_profileRoots = r.profileRoots;
    applySnapshot(r.snapshot, r.profiles, r.problems);
    if (m_pollAgain) {
      m_pollAgain = false;
      QTimer::singleShot(0, this, &ClusterPanel::poll);
      return;
    }
    // A shared controller is not ours to load: one poll per interval while a run is active,
    // one per four intervals otherwise (to see runs submitted elsewhere).
    bool active = false;
    for (const auto& run : r.snapshot->runs)
      if (!cluster_state_final(run.cluster.state) && run.cluster.state != "never_submitted")
        active = true;
    m_timer->start((active ? 1 : 4) * m_pollSeconds * 1000);
  });
  watcher->setFuture(QtConcurrent::run(pollCluster, roots()));
}

void ClusterPanel::applySnapshot(const std::shared_ptr<ClusterSnapshot>& snap,
                                 const QStringList& profiles, const QString& problems) {
  // Profiles: keep the chosen one when it still exists.
  const QString chosen = profile();
  m_profile->clear();
  for (const QString& p : profiles) m_profile->addItem(p, p);
  if (profiles.isEmpty())
    m_profile->addItem(tr("(no profile)"), QString());
  else if (!setProfile(chosen))
    m_profile->setCurrentIndex(0);
  QString hint;
  if (profiles.isEmpty())
    hint =
        tr("No cluster profile yet: make one with  gllm cluster set NAME --partition P "
           "[--account A --time-limit 2:00:00 --gpus-per-node 1 --runs-root /shared/runs]  "
           "(on one machine: scripts/slurm-local.sh start, then gllm cluster set local "
           "--partition debug).");
  if (!problems.isEmpty()) hint += (hint.isEmpty() ? QString() : QStringLiteral("\n")) + problems;
  m_hint->setText(hint);
  m_hint->setVisible(!hint.isEmpty());

  const QString selected = selectedRun();
  m_snapshot = snap;
  m_table->setRowCount(int(snap->runs.size()));
  for (int i = 0; i < int(snap->runs.size()); ++i) {
    const ClusterRunRow& r = snap->runs[size_t(i)];
    const QString dir = qs(r.dir);
    auto* name = new QTableWidgetItem(qs(r.label));
    name->setData(Qt::UserRole, dir);
    name->setToolTip(
        tr("%1\ntask %2 · sweep folder %3").arg(dir, qs(r.cluster.task_id), qs(r.sweep_dir)));
    m_table->setItem(i, kRun, name);
    m_table->setItem(i, kSeed, new QTableWidgetItem(QString::number(r.seed)));
    auto* st = new QTableWidgetItem(qs(r.cluster.state));
    st->setForeground(clusterStateColor(st->text()));
    QFont f = st->font();
    f.setBold(true);
    st->setFont(f);
    st->setToolTip(tr("from %1").arg(qs(r.cluster.source)));
    m_table->setItem(i, kState, st);
    auto* detail = new QTableWidgetItem(qs(r.cluster.detail));
    QString tip = qs(r.cluster.detail);
    if (!r.cluster.log.empty()) tip += tr("\nlog: %1").arg(qs(r.cluster.log));
    if (!r.cluster.log_tail.empty()) tip += QStringLiteral("\n\n") + qs(r.cluster.log_tail);
    detail->setToolTip(tip);
    m_table->setItem(i, kDetail, detail);
    m_table->setItem(i, kOwn,
                     new QTableWidgetItem(r.step > 0 ? qs(r.run_status) : QStringLiteral("—")));
    m_table->setItem(
        i, kStep, new QTableWidgetItem(QStringLiteral("%1 / %2").arg(r.step).arg(r.total_steps)));
    m_table->setItem(i, kValBpb,
                     new QTableWidgetItem(r.val_bpb >= 0 ? QString::number(r.val_bpb, 'f', 4)
                                                         : QStringLiteral("—")));
    // The Monitor draws a cluster run from its metrics on the shared filesystem: reread when the
    // file grew (or on first sight).
    QString note = qs(r.cluster.state);
    if (!r.cluster.detail.empty()) note += QStringLiteral(" · ") + qs(r.cluster.detail);
    const qint64 seen = m_metricsSeen.value(dir, -1);
    if (r.metrics_bytes > 0 && r.metrics_bytes != seen) {
      m_metricsSeen[dir] = r.metrics_bytes;
      m_notes[dir] = note;
      Q_EMIT runMetricsChanged(dir, note);
    } else if (seen > 0 && m_notes.value(dir) != note) {
      m_notes[dir] = note;  // the scheduler moved on (completed, requeued) with no new step
      Q_EMIT runNoteChanged(dir, note);
    }
  }
  if (!selected.isEmpty()) selectRun(selected);
  updateButtons();
  Q_EMIT runsListed();
}

QString ClusterPanel::submit(bool dryRun) {
  if (m_acting) return tr("wait: the last cluster action is still running");
  const QString name = profile();
  if (name.isEmpty()) {
    const QString why = tr("no cluster profile: make one with gllm cluster set NAME --partition P");
    setStatus(why, true);
    return why;
  }
  RunConfig config;
  QList<int> seeds;
  nlohmann::json preset;
  const QString why = m_launcher->plannedRuns(tr("Submit to cluster"), &config, &seeds, &preset);
  if (!why.isEmpty()) {
    setStatus(why, true);
    return why;
  }
  const int throttle = m_throttle->value() == 0 ? -1 : m_throttle->value();
  std::vector<int> seedList(seeds.begin(), seeds.end());
  auto script = std::make_shared<QString>();
  auto sweepDir = std::make_shared<QString>();
  act(dryRun ? tr("Writing the script")
             : tr("Submitting %1 run(s) of %2").arg(seeds.size()).arg(qs(config.name)),
      [=] {
        const ClusterProfile p = load_cluster_profile(ss(name));
        const std::string root = p.runs_root.empty() ? runs_dir() : p.runs_root;
        SubmitRequest rq = plan_seed_submission(config, seedList, p, root);
        rq.throttle = throttle;
        rq.dry_run = dryRun;
        const SubmitOutcome out = submit_to_slurm(rq);
        *script = qs(out.script);
        *sweepDir = qs(rq.sweep_dir);
        if (dryRun)
          return tr("Script for %1 task(s) on %2 (nothing submitted)")
              .arg(out.run_dirs.size())
              .arg(name);
        return tr("Submitted job %1: %2 task(s) on %3 — script %4")
            .arg(qs(out.job_id))
            .arg(out.run_dirs.size())
            .arg(name, qs(out.script_path));
      });
  // Shown (and the folder watched) once the worker is done: act() polls afterwards.
  m_afterAction = [this, script, sweepDir, dryRun] {
    if (script->isEmpty()) return;
    m_lastScript = *script;
    if (!dryRun) {
      m_extraRoots << *sweepDir;
      m_extraRoots.removeDuplicates();
      return;
    }
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Batch script (dry run)"));
    auto* v = new QVBoxLayout(dialog);
    auto* text = new QPlainTextEdit(*script, dialog);
    text->setReadOnly(true);
    text->setLineWrapMode(QPlainTextEdit::NoWrap);
    text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    v->addWidget(text);
    dialog->resize(760, 520);
    dialog->show();
  };
  return {};
}

void ClusterPanel::act(const QString& what, std::function<QString()> work) {
  m_acting = true;
  updateButtons();
  setStatus(what + QStringLiteral(" …"));
  auto* watcher = new QFutureWatcher<QPair<QString, bool>>(this);
  connect(watcher, &QFutureWatcher<QPair<QString, bool>>::finished, this, [this, watcher] {
    const auto [message, ok] = watcher->result();
    watcher->deleteLater();
    m_acting = false;
    if (ok && m_afterAction) m_afterAction();
    m_afterAction = nullptr;
    setStatus(message, !ok);
    updateButtons();
    pollNow();
  });
  watcher->setFuture(QtConcurrent::run([work]() -> QPair<QString, bool> {
    try {
      return {work(), true};
    } catch (const std::exception& e) {
      return {QString::fromUtf8(e.what()), false};
    }
  }));
}

QString ClusterPanel::selectedRun() const {
  const auto rows = m_table->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  return m_table->item(rows.first().row(), kRun)->data(Qt::UserRole).toString();
}

bool ClusterPanel::selectRun(const QString& dir) {
  for (int i = 0; i < m_table->rowCount(); ++i)
    if (m_table->item(i, kRun)->data(Qt::UserRole).toString() == dir) {
      m_table->selectRow(i);
      return true;
    }
  return false;
}

QString ClusterPanel::stateOf(const QString& dir) const {
  for (int i = 0; i < m_table->rowCount(); ++i)
    if (m_table->item(i, kRun)->data(Qt::UserRole).toString() == dir)
      return m_table->item(i, kState)->text();
  return {};
}

QString ClusterPanel::detailOf(const QString& dir) const {
  for (int i = 0; i < m_table->rowCount(); ++i)
    if (m_table->item(i, kRun)->data(Qt::UserRole).toString() == dir)
      return m_table->item(i, kDetail)->text();
  return {};
}

QString ClusterPanel::cancelSelected() {
  const QString dir = selectedRun();
  if (dir.isEmpty()) return tr("select a cluster run to cancel");
  if (m_acting) return tr("wait: the last cluster action is still running");
  act(tr("Cancelling %1").arg(QDir(dir).dirName()), [dir] {
    const auto done = cancel_cluster_runs({ss(dir)});
    return done.empty() ? tr("Nothing to cancel: the task has ended")
                        : tr("Cancelled task %1").arg(ids(done));
  });
  return {};
}

QString ClusterPanel::cancelRun(const QString& dir) {
  if (!selectRun(dir)) return tr("%1 is not a cluster run listed in the Cluster tab").arg(dir);
  const QString why = cancelSelected();
  return why.isEmpty() ? tr("Cancelling the task of %1 …").arg(QDir(dir).dirName()) : why;
}

QStringList ClusterPanel::profiles() const {
  QStringList out;
  for (int i = 0; i < m_profile->count(); ++i)
    if (!m_profile->itemData(i).toString().isEmpty()) out << m_profile->itemData(i).toString();
  return out;
}

QVector<ClusterRunView> ClusterPanel::runViews() const {
  QVector<ClusterRunView> out;
  if (!m_snapshot) return out;
  for (const auto& r : m_snapshot->runs) {
    ClusterRunView v;
    v.dir = qs(r.dir);
    v.label = qs(r.label);
    v.state = qs(r.cluster.state);
    v.detail = qs(r.cluster.detail);
    v.seed = r.seed;
    v.step = r.step;
    v.totalSteps = r.total_steps;
    v.valBpb = r.val_bpb;
    v.valStep = r.val_bpb_step;
    v.heldoutBpb = r.heldout_bpb;
    out.push_back(v);
  }
  return out;
}

QString ClusterPanel::cancelSelectedSweep() {
  const QString dir = selectedRun();
  if (dir.isEmpty() || !m_snapshot) return tr("select a run of the sweep to cancel");
  if (m_acting) return tr("wait: the last cluster action is still running");
  std::string sweep;
  for (const auto& r : m_snapshot->runs)
    if (qs(r.dir) == dir) sweep = r.sweep_dir;
  std::vector<std::string> dirs;
  for (const auto& r : m_snapshot->runs)
    if (r.sweep_dir == sweep && !cluster_state_final(r.cluster.state)) dirs.push_back(r.dir);
  if (dirs.empty()) return tr("every task of this sweep has ended");
  if (!m_confirm(tr("Cancel the %1 unfinished task(s) of %2?").arg(dirs.size()).arg(qs(sweep))))
    return tr("not cancelled");
  act(tr("Cancelling %1 task(s)").arg(dirs.size()), [dirs] {
    const auto done = cancel_cluster_runs(dirs);
    return tr("Cancelled %1 task(s): %2").arg(done.size()).arg(ids(done));
  });
  return {};
}

QString ClusterPanel::requeueSelected() {
  const QString dir = selectedRun();
  if (dir.isEmpty()) return tr("select a cluster run to requeue");
  if (m_acting) return tr("wait: the last cluster action is still running");
  act(tr("Requeueing %1").arg(QDir(dir).dirName()), [dir] {
    return tr("Requeued task %1: it checkpoints and resumes where it stopped")
        .arg(ids(requeue_cluster_runs({ss(dir)})));
  });
  return {};
}

void ClusterPanel::addWatchedFolder(const QString& dir) {
  m_extraRoots << QDir(dir).absolutePath();
  m_extraRoots.removeDuplicates();
  pollNow();
}

QString ClusterPanel::statusText() const {
  return m_status->text();
}

void ClusterPanel::setStatus(const QString& text, bool error) {
  m_status->setObjectName(error ? QStringLiteral("fieldError") : QStringLiteral("hint"));
  m_status->style()->unpolish(m_status);
  m_status->style()->polish(m_status);
  m_status->setText(text);
  Q_EMIT statusChanged(text, error);
}

void ClusterPanel::updateButtons() {
  const bool chosen = !selectedRun().isEmpty();
  m_cancel->setEnabled(chosen && !m_acting);
  m_cancelSweep->setEnabled(chosen && !m_acting);
  m_requeue->setEnabled(chosen && !m_acting);
  m_open->setEnabled(chosen);
  m_submit->setEnabled(!m_acting);
  m_script->setEnabled(!m_acting);
}

}  // namespace gllm::gui
