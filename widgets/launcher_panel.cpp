// LauncherPanel implementation: the queue table is rebuilt from RunQueue on every change signal;
// step updates only touch the progress cells so a streaming run stays cheap to display.
#include "widgets/launcher_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "engine/cluster/cluster_state.h"
#include "engine/config/run_config.h"
#include "engine/config/run_identity.h"
#include "widgets/preset_form.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

LauncherPanel::LauncherPanel(RunQueue* queue, PresetForm* form, QWidget* parent)
    : QWidget(parent), m_queue(queue), m_form(form) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* row = new QHBoxLayout;
  m_preset = new QComboBox(this);
  m_preset->setObjectName(QStringLiteral("presetChoice"));
  for (const auto& n : list_presets()) m_preset->addItem(qs(n));
  m_seeds = new QLineEdit(QStringLiteral("42"), this);
  m_seeds->setObjectName(QStringLiteral("seeds"));
  m_seeds->setPlaceholderText(tr("e.g. 41, 42, 47 or 41-43"));
  m_seeds->setToolTip(tr("One run per seed; the preset's train.seed is replaced."));
  m_launch = new QPushButton(QIcon(QStringLiteral(":/icons/launch.svg")), tr("Launch"), this);
  m_launch->setObjectName(QStringLiteral("primary"));
  m_launch->setToolTip(
      tr("Add one run per seed and start the queue: runs start one after another."));
  m_enqueue = new QPushButton(tr("Queue"), this);
  m_enqueue->setToolTip(
      tr("Add one run per seed without starting; Launch or Resume starts the queue."));
  m_cancel = new QPushButton(QIcon(QStringLiteral(":/icons/cancel.svg")), tr("Cancel"), this);
  m_cancel->setToolTip(
      tr("Stop the selected run after its current step (it keeps a checkpoint) or drop a queued "
         "one."));
  m_resume = new QPushButton(QIcon(QStringLiteral(":/icons/resume.svg")), tr("Resume"), this);
  m_resume->setToolTip(
      tr("Continue the selected cancelled or interrupted run from its last checkpoint."));
  m_remove = new QPushButton(tr("Remove"), this);
  auto* fork = m_fork = new QPushButton(tr("Fork…"), this);
  fork->setObjectName(QStringLiteral("forkButton"));
  fork->setToolTip(
      tr("Start the form's runs from a checkpoint of another run: its weights, optimizer state "
         "and data position, with these settings' grades (the arms of route 2 fork from the "
         "uniform trunk's checkpoint the profiles were read in)."));
  m_annotate = new QPushButton(tr("Tags…"), this);
  m_annotate->setToolTip(tr("Tag the selected run and give it a note (kept in the queue file)."));
  // Two rows so the panel fits a dock of about 500 px: what to run, then the actions.
  m_preset->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_preset->setMinimumContentsLength(16);
  row->addWidget(new QLabel(tr("Preset"), this));
  row->addWidget(m_preset, 3);
  row->addWidget(new QLabel(tr("Seeds"), this));
  row->addWidget(m_seeds, 2);
  m_target = new QComboBox(this);
  m_target->setObjectName(QStringLiteral("runTarget"));
  m_target->addItem(tr("this machine"), QString());
  m_target->setToolTip(
      tr("Where Launch sends the runs: this machine's queue, or a cluster profile (one SLURM job "
         "array; make profiles with gllm cluster set NAME --partition P)."));
  row->addWidget(new QLabel(tr("Run on"), this));
  row->addWidget(m_target, 1);
  layout->addLayout(row);
  auto* actions = new QHBoxLayout;
  actions->addWidget(m_launch);
  actions->addWidget(m_enqueue);
  actions->addSpacing(8);
  actions->addWidget(m_cancel);
  actions->addWidget(m_resume);
  actions->addWidget(m_remove);
  actions->addWidget(fork);
  actions->addWidget(m_annotate);
  actions->addStretch(1);
  layout->addLayout(actions);
  m_seedError = new QLabel(this);
  m_seedError->setObjectName(QStringLiteral("fieldError"));
  m_seedError->setWordWrap(true);
  m_seedError->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_seedError->setVisible(false);
  layout->addWidget(m_seedError);
  m_refusal = new QLabel(this);
  m_refusal->setObjectName(QStringLiteral("fieldError"));
  m_refusal->setWordWrap(true);
  m_refusal->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_refusal->setVisible(false);
  layout->addWidget(m_refusal);

  m_table = new QTableWidget(0, 7, this);
  m_table->setHorizontalHeaderLabels({tr("Run"), tr("Seed"), tr("Status"), tr("Progress"),
                                      tr("val BPB"), tr("held-out"), tr("Folder / message")});
  m_table->horizontalHeaderItem(5)->setToolTip(
      tr("held-out BPB: bits per byte on the held-out split"));
  // Headers and numbers at their width, the progress bar fixed; the run's name gets the width it
  // needs (it is what tells runs apart: fitNameColumn) and the folder or message the rest, both
  // elided in the middle so a name keeps its preset at the start and its distinguishing settings
  // at the end.
  m_table->horizontalHeader()->setStretchLastSection(false);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
  m_table->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Fixed);
  m_table->horizontalHeader()->setSectionResizeMode(6, QHeaderView::Stretch);
  m_table->setColumnWidth(3, 100);
  m_table->viewport()->installEventFilter(this);
  connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int column) {
    if (column != 0 && column != 6) fitNameColumn();
  });
  m_table->setTextElideMode(Qt::ElideMiddle);
  m_table->setWordWrap(false);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->setVisible(false);
  m_table->verticalHeader()->setDefaultSectionSize(24);
  layout->addWidget(m_table, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  // A long message wraps inside the panel instead of widening it (and pushing Seeds off-screen).
  m_status->setWordWrap(true);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_status->setText(tr("Queue file: %1").arg(m_queue->queueFile()));
  layout->addWidget(m_status);

  connect(m_preset, &QComboBox::activated, this, [this] { choosePreset(m_preset->currentText()); });
  connect(m_launch, &QPushButton::clicked, this, [this] { launch(true); });
  connect(m_enqueue, &QPushButton::clicked, this, [this] { launch(false); });
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    const QString dir = selectedClusterRun();
    if (dir.isEmpty())
      m_queue->cancel(selectedId());
    else if (m_clusterCancel)
      m_status->setText(m_clusterCancel(dir));
  });
  connect(m_target, &QComboBox::currentIndexChanged, this, &LauncherPanel::updateButtons);
  connect(m_resume, &QPushButton::clicked, this, [this] { resumeSelected(); });
  connect(m_remove, &QPushButton::clicked, this, [this] { m_queue->remove(selectedId()); });
  connect(fork, &QPushButton::clicked, this, [this] {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Checkpoint to fork from"), QString(),
                                     tr("Run checkpoints (step_*.safetensors);;All files (*)"));
    if (!file.isEmpty()) launch(true, file);
  });
  connect(m_annotate, &QPushButton::clicked, this, &LauncherPanel::annotateSelected);
  connect(m_table, &QTableWidget::itemSelectionChanged, this, &LauncherPanel::updateButtons);
  connect(m_queue, &RunQueue::changed, this, &LauncherPanel::refreshTable);
  connect(m_queue, &RunQueue::step, this, [this](const QString& id, const StepRecord& r) {
    for (int i = 0; i < m_table->rowCount(); ++i) {
      if (m_table->item(i, 0)->data(Qt::UserRole).toString() != id) continue;
      if (auto* bar = qobject_cast<QProgressBar*>(m_table->cellWidget(i, 3))) {
        bar->setMaximum(int(std::max<int64_t>(1, r.total_steps)));
        bar->setValue(int(r.step));
        bar->setFormat(QStringLiteral("%1 / %2").arg(r.step).arg(r.total_steps));
      }
    }
  });
  // A finished run replaces "Resuming …" / "Queued …" with how it ended.
  connect(m_queue, &RunQueue::runFinished, this, [this](const QString& id, const QString& status) {
    const QueueEntry* e = m_queue->entry(id);
    m_status->setText(e ? tr("%1 (seed %2) %3").arg(e->name).arg(e->seed).arg(status)
                        : tr("a run %1").arg(status));
  });
  const int idx = m_preset->findText(QStringLiteral("tiny-cpu"));
  if (idx >= 0) m_preset->setCurrentIndex(idx);
  refreshTable();
}

QString LauncherPanel::choosePreset(const QString& nameOrPath) {
  try {
    const RunConfig preset = RunConfig::load(resolve_preset_path(ss(nameOrPath)));
    m_presetJson = preset.to_json();
    m_form->setConfig(preset);
    const int i = m_preset->findText(nameOrPath);
    if (i >= 0) m_preset->setCurrentIndex(i);
    m_status->setText(tr("Loaded preset %1").arg(nameOrPath));
    return {};
  } catch (const Error& e) {
    m_status->setText(qs(e.what()));
    return qs(e.what());
  }
}

bool LauncherPanel::parseSeeds(QList<int>* seeds, QString* why) const {
  seeds->clear();
  const QStringList parts =
      m_seeds->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
  if (parts.isEmpty()) {
    *why = tr("give at least one seed, e.g. 42 or 41, 42, 47");
    return false;
  }
  static const QRegularExpression range(QStringLiteral("^(\\d+)-(\\d+)$"));
  for (const QString& p : parts) {
    auto m = range.match(p);
    if (m.hasMatch()) {
      const long long a = m.captured(1).toLongLong(), b = m.captured(2).toLongLong();
      if (b < a || b - a > 99 || b > 2147483647) {
        *why = tr("'%1' is not a range of at most 100 seeds (write low-high)").arg(p);
        return false;
      }
      for (long long s = a; s <= b; ++s) seeds->append(int(s));
      continue;
    }
    bool ok = false;
    const long long s = p.toLongLong(&ok);
    if (!ok || s < 0 || s > 2147483647) {
      *why = tr("'%1' is not a seed; seeds are whole numbers in [0, 2147483647]").arg(p);
      return false;
    }
    if (seeds->contains(int(s))) {
      *why = tr("seed %1 is listed twice").arg(s);
      return false;
    }
    seeds->append(int(s));
  }
  return true;
}

void LauncherPanel::setSeedsText(const QString& text) {
  m_seeds->setText(text);
}

QString LauncherPanel::seedsText() const {
  return m_seeds->text();
}

QString LauncherPanel::seedError() const {
  return m_seedError->isHidden() ? QString() : m_seedError->text();
}

QString LauncherPanel::statusText() const {
  return m_status->text();
}

QString LauncherPanel::refusal() const {
  return m_refusal->isHidden() ? QString() : m_refusal->text();
}

QString LauncherPanel::plannedRuns(const QString& action, RunConfig* config, QList<int>* seeds,
                                   nlohmann::json* preset) {
  // Nothing starts from settings other than those shown: a field in red refuses the launch.
  QStringList bad = m_form->invalidFields();
  if (m_extraCheck) bad += m_extraCheck();
  if (!bad.isEmpty()) {
    const QString why = tr("%1 refused: fix the field shown in red first — %2")
                            .arg(action, bad.join(QStringLiteral("; ")));
    m_refusal->setText(why);
    m_refusal->setVisible(true);
    Q_EMIT refusedAtField();
    return why;
  }
  m_refusal->setVisible(false);
  QString why;
  if (!parseSeeds(seeds, &why)) {
    m_seedError->setText(why);
    m_seedError->setVisible(true);
    m_seeds->setProperty("invalid", true);
    return why;
  }
  m_seedError->setVisible(false);
  m_seeds->setProperty("invalid", false);
  try {
    *config = m_form->config();
    *preset = currentPreset();
    if (preset->is_object() && preset->value("name", std::string()) == config->name)
      config->name = run_label(config->to_json(), *preset);
    return {};
  } catch (const Error& e) {
    m_status->setText(qs(e.what()));
    return qs(e.what());
  }
}

QString LauncherPanel::launch(bool start, const QString& forkFrom) {
  if (!runTarget().isEmpty() && forkFrom.isEmpty() && start) return submitToCluster(runTarget());
  if (!runTarget().isEmpty()) {
    const QString why =
        tr("%1 runs on this machine only: choose \"this machine\" in Run on (a forked sweep goes "
           "to a cluster with gllm submit --sweep FILE, its \"fork\" naming the parent)")
            .arg(forkFrom.isEmpty() ? tr("Queue") : tr("Fork…"));
    m_status->setText(why);
    return why;
  }
  RunConfig config;
  QList<int> seeds;
  nlohmann::json preset;
  const QString why = plannedRuns(start ? tr("Launch") : tr("Queue"), &config, &seeds, &preset);
  if (!why.isEmpty()) return why;
  try {
    const QStringList ids = m_queue->enqueue(config, seeds, preset, forkFrom);
    m_status->setText(forkFrom.isEmpty()
                          ? tr("Queued %1 run(s) of %2").arg(ids.size()).arg(qs(config.name))
                          : tr("Queued %1 run(s) of %2 forked from %3")
                                .arg(ids.size())
                                .arg(qs(config.name), forkFrom));
    if (!ids.isEmpty()) selectId(ids.first());
    if (start) m_queue->setAutoStart(true);
    return {};
  } catch (const Error& e) {
    m_status->setText(qs(e.what()));
    return qs(e.what());
  }
}

nlohmann::json LauncherPanel::currentPreset() const {
  if (m_presetJson.is_object()) return m_presetJson;
  try {  // the settings the window started with: the preset of their name, if there is one
    return RunConfig::load(resolve_preset_path(m_form->config().name)).to_json();
  } catch (const std::exception&) {
    return nullptr;
  }
}

void LauncherPanel::annotateSelected() {
  const QueueEntry* e = m_queue->entry(selectedId());
  if (!e) return;
  const QString id = e->id;
  bool ok = false;
  const QString tags =
      QInputDialog::getText(this, tr("Tags of %1").arg(e->name), tr("Tags, comma-separated:"),
                            QLineEdit::Normal, e->tags.join(QStringLiteral(", ")), &ok);
  if (!ok) return;
  const QString note = QInputDialog::getMultiLineText(this, tr("Note on %1").arg(e->name),
                                                      tr("Note:"), e->note, &ok);
  if (!ok) return;
  m_queue->annotate(id, tags.split(QLatin1Char(','), Qt::SkipEmptyParts), note);
}

QString LauncherPanel::resumeSelected() {
  const QueueEntry* e = m_queue->entry(selectedId());
  if (!e) return tr("select a cancelled or interrupted run to resume");
  if (!m_queue->resume(e->id)) {
    const QString why =
        tr("%1 is %2; only cancelled, interrupted or failed runs with a folder resume")
            .arg(e->name, e->status);
    m_status->setText(why);
    return why;
  }
  m_queue->setAutoStart(true);
  m_status->setText(tr("Resuming %1 from %2").arg(e->name, e->runDir));
  return {};
}

QString LauncherPanel::selectedId() const {
  const auto rows = m_table->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  return m_table->item(rows.first().row(), 0)->data(Qt::UserRole).toString();
}

void LauncherPanel::selectId(const QString& id) {
  for (int i = 0; i < m_table->rowCount(); ++i)
    if (m_table->item(i, 0)->data(Qt::UserRole).toString() == id) m_table->selectRow(i);
}

void LauncherPanel::refreshTable() {
  const QString selected = selectedId();
  const QString selectedCluster = selectedClusterRun();
  const auto& entries = m_queue->entries();
  m_table->setRowCount(entries.size() + m_clusterRuns.size());
  for (int i = 0; i < entries.size(); ++i) {
    const QueueEntry& e = entries[i];
    auto* name = new QTableWidgetItem(
        e.tags.isEmpty()
            ? e.name
            : QStringLiteral("%1  [%2]").arg(e.name, e.tags.join(QStringLiteral(", "))));
    name->setData(Qt::UserRole, e.id);
    // On demand (hover): what differs from the preset, and the note.
    const QString diff = m_queue->configDiff(e.id);
    QString tip = tr("queue id %1").arg(e.id);
    if (e.preset.is_object())
      tip += diff.isEmpty()
                 ? tr("\nsame settings as preset %1").arg(qs(e.preset.value("name", std::string())))
                 : tr("\ndiffers from preset %1 in:\n%2")
                       .arg(qs(e.preset.value("name", std::string())), diff);
    if (!e.note.isEmpty()) tip += tr("\nnote: %1").arg(e.note);
    name->setToolTip(tip);
    m_table->setItem(i, 0, name);
    m_table->setItem(i, 1, new QTableWidgetItem(QString::number(e.seed)));
    auto* st = new QTableWidgetItem(e.status);
    QColor c(0x33, 0x47, 0x5b);
    if (e.status == QLatin1String("running"))
      c = QColor(0x2f, 0x6f, 0xb2);
    else if (e.status == QLatin1String("completed"))
      c = QColor(0x2e, 0x9d, 0x57);
    else if (e.status == QLatin1String("failed") || e.status == QLatin1String("diverged"))
      c = QColor(0xc9, 0x30, 0x2c);
    else if (e.status == QLatin1String("interrupted") || e.status == QLatin1String("cancelled"))
      c = QColor(0xb9, 0x7a, 0x1c);
    st->setForeground(c);
    setRunCells(i, st, e.step, e.totalSteps, e.valBpb, e.valStep, e.heldoutBpb, e.runDir,
                e.message);
  }
  fillClusterRows(int(entries.size()));
  if (!selected.isEmpty()) selectId(selected);
  if (!selectedCluster.isEmpty()) selectClusterRun(selectedCluster);
  if (!m_queue->lastError().isEmpty()) m_status->setText(m_queue->lastError());
  updateButtons();
  fitNameColumn();
}

bool LauncherPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_table->viewport() && event->type() == QEvent::Resize) fitNameColumn();
  return QWidget::eventFilter(watched, event);
}

void LauncherPanel::fitNameColumn() {
  // Once per turn of the event loop, after the header has sized the other columns.
  if (m_fitQueued) return;
  m_fitQueued = true;
  QTimer::singleShot(0, this, [this] {
    m_fitQueued = false;
    QHeaderView* header = m_table->horizontalHeader();
    int others = 0;
    for (int c = 1; c < 6; ++c) others += header->sectionSize(c);
    const int free = m_table->viewport()->width() - others;
    const int need = firstColumnNeed(m_table, 16);  // the table does not sort
    const int folderLeast = 90;                     // its full text is in the tool tip
    const int width = need <= free - folderLeast ? need : std::max(free - folderLeast, free / 2);
    m_table->setColumnWidth(0, std::max(60, width));
  });
}

void LauncherPanel::setRunCells(int row, QTableWidgetItem* status, qint64 step, qint64 totalSteps,
                                double valBpb, qint64 valStep, double heldoutBpb,
                                const QString& dir, const QString& message) {
  QFont f = status->font();
  f.setBold(true);
  status->setFont(f);
  m_table->setItem(row, 2, status);
  auto* bar = qobject_cast<QProgressBar*>(m_table->cellWidget(row, 3));
  if (!bar) {
    bar = new QProgressBar(m_table);
    m_table->setCellWidget(row, 3, bar);
  }
  bar->setMaximum(int(std::max<qint64>(1, totalSteps)));
  bar->setValue(int(std::min(step, totalSteps)));
  bar->setFormat(QStringLiteral("%1 / %2").arg(step).arg(totalSteps));
  auto* val =
      new QTableWidgetItem(valBpb >= 0 ? QString::number(valBpb, 'f', 4) : QStringLiteral("—"));
  if (valBpb >= 0 && valStep >= 0 && valStep != step) {
    val->setText(val->text() + QStringLiteral(" @%1").arg(valStep));
    val->setToolTip(tr("validation BPB measured at step %1; the run went on to step %2 without "
                       "another evaluation")
                        .arg(valStep)
                        .arg(step));
  }
  m_table->setItem(row, 4, val);
  m_table->setItem(row, 5,
                   new QTableWidgetItem(heldoutBpb >= 0 ? QString::number(heldoutBpb, 'f', 4)
                                                        : QStringLiteral("—")));
  auto* msg = new QTableWidgetItem(message.isEmpty() ? dir : message);
  msg->setToolTip(dir + (message.isEmpty() ? QString() : QStringLiteral("\n") + message));
  m_table->setItem(row, 6, msg);
}

void LauncherPanel::updateButtons() {
  const QueueEntry* e = m_queue->entry(selectedId());
  const bool local = runTarget().isEmpty();
  m_launch->setText(local ? tr("Launch") : tr("Submit to cluster"));
  m_launch->setToolTip(local ? tr("Add one run per seed and start the queue: runs start one after "
                                  "another.")
                             : tr("Submit one run per seed to cluster profile %1 as one SLURM job "
                                  "array; the runs appear below with the scheduler's state.")
                                   .arg(runTarget()));
  m_enqueue->setEnabled(local);
  m_fork->setEnabled(local);
  QString clusterState;
  const QString clusterDir = selectedClusterRun();
  for (const auto& r : m_clusterRuns)
    if (r.dir == clusterDir) clusterState = r.state;
  const bool clusterLive = !clusterDir.isEmpty() && !cluster_state_final(ss(clusterState));
  m_cancel->setEnabled(clusterLive || (e && (e->status == QLatin1String("running") ||
                                             e->status == QLatin1String("queued"))));
  m_resume->setEnabled(e && e->resumable());
  m_remove->setEnabled(e && e->status != QLatin1String("running"));
  m_annotate->setEnabled(e != nullptr);
}

}  // namespace gllm::gui
