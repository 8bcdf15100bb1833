// ComparePanel implementation: a worker lists the run folders and runs the engine's compare_runs /
// token_efficiency (a generation counter drops stale results); the GUI renders the two tables.
#include "widgets/compare_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <map>
#include <set>

#include "engine/config/run_config.h"
#include "engine/config/run_identity.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/compare.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
QTableWidgetItem* cell(const QString& text, bool right = false) {
  auto* it = new QTableWidgetItem(text);
  if (right) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return it;
}
QString num(const nlohmann::json& j, const char* key, int prec = 6) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return QStringLiteral("—");
  return QString::number(j[key].get<double>(), 'f', prec);
}

struct CompareJob {
  int generation = 0;
  QString folder;
  bool relist = true;
  CompareResult previous;  // runs, conflicts and skipped folders when not relisting
  QString keepBaseline;
  std::string metric;
  bool hasTarget = false;
  double target = 0;
  QSet<QString> hidden;  // arms left out of the comparison (their check box cleared)
};

CompareResult computeComparison(const CompareJob& job) {
  CompareResult r;
  r.generation = job.generation;
  r.folder = job.folder;
  if (job.relist) {
    std::vector<std::string> errors;
    try {
      std::vector<RunInfo> listed = list_runs(ss(job.folder), &errors);
      splitArmsByConfig(listed);
      r.runs = oneRunPerArmAndSeed(listed, &r.conflicts);
      r.armDiffs = armDiffs(r.runs);
    } catch (const std::exception& e) {
      r.error = qs(e.what());
      return r;
    }
    for (const auto& e : errors) r.skipped << qs(e);
  } else {
    r.runs = job.previous.runs;
    r.armDiffs = job.previous.armDiffs;
    r.conflicts = job.previous.conflicts;
    r.skipped = job.previous.skipped;
  }
  std::vector<std::string> armNames;
  try {
    for (const auto& a : group_by_arm(r.runs)) {
      armNames.push_back(a.arm);
      r.arms << qs(a.arm);
    }
  } catch (const std::exception& e) {
    r.error = qs(e.what());
    return r;
  }
  // The baseline a researcher compares against: the one kept from before, else the uniform arm
  // (engine/train/compare.h: "uniform", or a name holding it such as "ladder-uniform"), else the
  // first arm.
  const QString uniform = qs(uniform_arm(armNames));
  r.baseline = r.arms.contains(job.keepBaseline) ? job.keepBaseline
               : !uniform.isEmpty()              ? uniform
               : r.arms.isEmpty()                ? QString()
                                                 : r.arms.first();
  if (r.runs.empty()) return r;
  // Arms the user hid are listed but not compared (the baseline always is).
  std::vector<RunInfo> shown;
  for (const RunInfo& run : r.runs)
    if (!job.hidden.contains(qs(run.name)) || qs(run.name) == r.baseline) shown.push_back(run);
  try {
    r.comparison = compare_runs(shown, ss(r.baseline), job.metric, false);
  } catch (const std::exception& e) {
    r.error = qs(e.what());
    return r;
  }
  if (job.hasTarget) {
    try {
      r.efficiency = token_efficiency(shown, job.metric, job.target, ss(uniform));
    } catch (const std::exception& e) {
      r.error = qs(e.what());
    }
  }
  return r;
}
}  // namespace

void splitArmsByConfig(std::vector<RunInfo>& runs) {
  std::map<std::string, std::set<std::string>> hashes;  // name → effective-config hashes
  // One arm across seeds (its per-seed files included) is one arm, not one per seed.
  for (const auto& r : runs) hashes[r.name].insert(arm_config_hash(r.config));
  for (auto& r : runs)
    if (hashes[r.name].size() > 1) r.name += "#" + arm_config_hash(r.config).substr(0, 6);
}

QMap<QString, QString> armDiffs(const std::vector<RunInfo>& runs) {
  QMap<QString, QString> out;
  std::map<std::string, nlohmann::json> presets;  // preset name → resolved config (null: none)
  for (const auto& r : runs) {
    if (out.contains(qs(r.name)) || !r.config.is_object()) continue;
    const std::string base = r.name.substr(0, r.name.find_first_of("+#"));
    if (!presets.count(base)) {
      try {
        presets[base] = RunConfig::load(resolve_preset_path(base)).to_json();
      } catch (const std::exception&) {
        presets[base] = nullptr;
      }
    }
    const nlohmann::json& preset = presets[base];
    out.insert(qs(r.name), preset.is_object()
                               ? qs(describe_changes(config_changes(r.config, preset)))
                               : QString());
  }
  return out;
}

std::vector<RunInfo> oneRunPerArmAndSeed(const std::vector<RunInfo>& runs,
                                         std::vector<SeedConflict>* conflicts) {
  // (arm, seed) → indices into `runs`, in the order the folders were listed (by name: a run
  // folder's name ends in its start time, so the last one is the newest).
  std::map<std::pair<std::string, int>, std::vector<size_t>> byKey;
  for (size_t i = 0; i < runs.size(); ++i) byKey[{runs[i].name, runs[i].seed}].push_back(i);
  std::vector<bool> keep(runs.size(), false);
  for (const auto& [key, idx] : byKey) {
    size_t kept = idx.back();
    for (size_t i : idx)
      if (runs[i].status == "completed") kept = i;  // the newest completed one, if any
    keep[kept] = true;
    if (idx.size() < 2 || !conflicts) continue;
    SeedConflict c;
    c.arm = qs(key.first);
    c.seed = key.second;
    c.kept = qs(runs[kept].dir);
    for (size_t i : idx)
      if (i != kept) c.others << qs(runs[i].dir);
    conflicts->push_back(c);
  }
  std::vector<RunInfo> out;
  for (size_t i = 0; i < runs.size(); ++i)
    if (keep[i]) out.push_back(runs[i]);
  return out;
}

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_folderEdit = new QLineEdit(qs(runs_dir()), this);
  auto* browse =
      new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Runs folder…"), this);
  auto* reload = new QPushButton(QIcon(QStringLiteral(":/icons/refresh.svg")), tr("Reload"), this);
  m_baseline = new QComboBox(this);
  m_baseline->setMinimumContentsLength(12);
  m_metric = new QComboBox(this);
  m_metric->addItem(tr("held-out BPB"), QStringLiteral("heldout_bpb"));
  m_metric->addItem(tr("val BPB"), QStringLiteral("val_bpb"));
  m_target = new QLineEdit(QStringLiteral("2.0"), this);
  m_target->setMaximumWidth(70);
  m_target->setToolTip(tr("Target BPB for token efficiency (§8.2.2)"));
  // Two rows so the panel fits a 700 px dock: where the runs are, then what to compare.
  bar->addWidget(m_folderEdit, 1);
  bar->addWidget(browse);
  bar->addWidget(reload);
  layout->addLayout(bar);
  auto* choice = new QHBoxLayout;
  choice->addWidget(new QLabel(tr("baseline"), this));
  choice->addWidget(m_baseline, 1);
  choice->addWidget(new QLabel(tr("metric"), this));
  choice->addWidget(m_metric);
  choice->addWidget(new QLabel(tr("target BPB"), this));
  choice->addWidget(m_target);
  layout->addLayout(choice);
  // Run folders of one arm and seed (e.g. `gllm train` run twice): said here, under the inputs.
  m_conflicts = new QLabel(this);
  m_conflicts->setObjectName(QStringLiteral("fieldError"));
  m_conflicts->setWordWrap(true);
  m_conflicts->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_conflicts->setVisible(false);
  layout->addWidget(m_conflicts);
  auto* t1 = new QLabel(
      tr("Paired Δ against the baseline, matched by seed (95 % Student t, n−1 df)"), this);
  t1->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(t1);
  m_delta = new QTableWidget(0, 8, this);
  m_delta->setHorizontalHeaderLabels({tr("arm"), tr("runs"), tr("mean"), tr("Δ mean"), tr("Δ SD"),
                                      tr("95 % CI"), tr("improved"), tr("seeds")});
  m_delta->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_delta->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);  // numbers in full
  m_delta->verticalHeader()->setVisible(false);
  m_delta->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_delta->setAlternatingRowColors(true);
  m_delta->setMinimumHeight(90);  // both tables stay in view in a 400 px dock
  layout->addWidget(m_delta, 2);
  auto* t2 = new QLabel(
      tr("Token efficiency: tokens to reach the target, ratio to the uniform arm"), this);
  t2->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(t2);
  m_eff = new QTableWidget(0, 5, this);
  m_eff->setHorizontalHeaderLabels(
      {tr("arm"), tr("seed"), tr("tokens"), tr("step"), tr("ratio to uniform")});
  m_eff->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_eff->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_eff->verticalHeader()->setVisible(false);
  m_eff->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_eff->setAlternatingRowColors(true);
  m_eff->setMinimumHeight(90);
  layout->addWidget(m_eff, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  m_watcher = new QFutureWatcher<CompareResult>(this);
  connect(m_watcher, &QFutureWatcher<CompareResult>::finished, this, [this] {
    applyResult(m_watcher->result());
    if (m_dirty) startCompute();
  });

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString d =
        QFileDialog::getExistingDirectory(this, tr("Runs folder"), m_folderEdit->text());
    if (!d.isEmpty()) setRunsFolder(d);
  });
  connect(reload, &QPushButton::clicked, this, [this] { setRunsFolder(m_folderEdit->text()); });
  connect(m_folderEdit, &QLineEdit::returnPressed, this,
          [this] { setRunsFolder(m_folderEdit->text().trimmed()); });
  connect(m_baseline, &QComboBox::activated, this, [this] { schedule(false); });
  connect(m_metric, &QComboBox::activated, this, [this] { schedule(false); });
  connect(m_target, &QLineEdit::editingFinished, this, [this] { schedule(false); });
  connect(m_delta, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* it) {
    if (it->column() != 0 || !(it->flags() & Qt::ItemIsUserCheckable)) return;
    setArmShown(it->text(), it->checkState() == Qt::Checked);
  });
}

QString ComparePanel::statusText() const {
  return m_status->text();
}
QString ComparePanel::conflictText() const {
  return m_conflicts->isHidden() ? QString() : m_conflicts->text();
}

void ComparePanel::setRunsFolder(const QString& parent) {
  m_folder = parent;
  m_folderEdit->setText(parent);
  m_status->setText(tr("Reading the runs in %1 …").arg(parent));
  schedule(true);
}

QTableWidgetItem* ComparePanel::armCell(const QString& arm, const QString& baseline) const {
  auto* it = cell(arm);
  // The check box shows or hides the arm in the comparison; the baseline is always compared.
  it->setFlags(arm == baseline ? Qt::ItemIsEnabled : Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
  it->setCheckState(m_hidden.contains(arm) && arm != baseline ? Qt::Unchecked : Qt::Checked);
  const QString diff = m_result.armDiffs.value(arm);
  it->setToolTip(diff.isEmpty() ? tr("%1: the preset's settings (or no preset known)").arg(arm)
                                : tr("%1 differs from its preset in:\n%2").arg(arm, diff));
  return it;
}

void ComparePanel::setArmShown(const QString& arm, bool on) {
  if (on == !m_hidden.contains(arm)) return;
  if (on)
    m_hidden.remove(arm);
  else
    m_hidden.insert(arm);
  schedule(false);
}

void ComparePanel::setBaseline(const QString& arm) {
  const int i = m_baseline->findText(arm);
  if (i >= 0) m_baseline->setCurrentIndex(i);
  schedule(false);
}

void ComparePanel::setMetric(const QString& metric) {
  m_metric->setCurrentIndex(std::max(0, m_metric->findData(metric)));
  schedule(false);
}

void ComparePanel::setTargetBpb(double target) {
  m_target->setText(QString::number(target, 'g', 8));
  schedule(false);
}

bool ComparePanel::busy() const {
  return m_watcher->isRunning() || m_dirty || m_result.generation != m_generation;
}

void ComparePanel::schedule(bool relist) {
  ++m_generation;
  m_relist = m_relist || relist;
  if (m_watcher->isRunning()) {
    m_dirty = true;  // rerun with the newest inputs when the running job ends
    return;
  }
  startCompute();
}

void ComparePanel::startCompute() {
  m_dirty = false;
  CompareJob job;
  job.generation = m_generation;
  job.folder = m_folder;
  // Relist when asked or when the last result is of another folder.
  job.relist = m_relist || m_result.folder != m_folder;
  m_relist = false;
  if (!job.relist) job.previous = m_result;
  job.keepBaseline = m_baseline->currentText();
  job.hidden = m_hidden;
  job.metric = ss(m_metric->currentData().toString());
  bool ok = false;
  job.target = m_target->text().toDouble(&ok);
  job.hasTarget = ok && job.target > 0;
  m_watcher->setFuture(QtConcurrent::run(computeComparison, job));
}

bool ComparePanel::waitForResult(int ms) {
  return runEventsUntil([this] { return !busy(); }, ms);
}

void ComparePanel::applyResult(const CompareResult& r) {
  if (r.generation != m_generation) return;  // a newer request is pending
  m_result = r;
  m_baseline->blockSignals(true);
  m_baseline->clear();
  m_baseline->addItems(r.arms);
  m_baseline->setCurrentIndex(std::max(0, int(r.arms.indexOf(r.baseline))));
  m_baseline->blockSignals(false);
  const QSignalBlocker quiet(m_delta);  // filling the table is not the user checking arms
  m_delta->setRowCount(0);
  m_eff->setRowCount(0);

  QStringList lines;
  QString tip;
  for (const SeedConflict& c : r.conflicts) {
    QStringList others;
    for (const QString& o : c.others) others << QFileInfo(o).fileName();
    lines << tr("Arm '%1' has %2 runs with seed %3: comparing %4, leaving out %5.")
                 .arg(c.arm)
                 .arg(c.others.size() + 1)
                 .arg(c.seed)
                 .arg(QFileInfo(c.kept).fileName(), others.join(QStringLiteral(", ")));
    tip += c.kept + QStringLiteral(" (compared)\n") + c.others.join(QStringLiteral("\n")) + '\n';
  }
  if (!lines.isEmpty())
    lines << tr("Move the folders you do not want compared out of %1, then Reload.").arg(r.folder);
  m_conflicts->setText(lines.join(QStringLiteral("\n")));
  m_conflicts->setToolTip(tip.trimmed());
  m_conflicts->setVisible(!lines.isEmpty());

  QString skipped;
  if (!r.skipped.isEmpty())
    skipped = tr(" · %1 folder(s) skipped: %2").arg(r.skipped.size()).arg(r.skipped.front());
  if (r.runs.empty() && r.error.isEmpty()) {
    m_status->setText(
        tr("No runs in %1. Launch runs (or copy run folders there), then Reload.").arg(r.folder) +
        skipped);
    Q_EMIT resultReady();
    return;
  }
  const nlohmann::json& cmp = r.comparison;
  if (cmp.is_object() && cmp.contains("arms")) {
    for (const auto& a : cmp["arms"]) {
      const int row = m_delta->rowCount();
      m_delta->insertRow(row);
      const QString arm = qs(a.value("arm", ""));
      m_delta->setItem(row, 0, armCell(arm, r.baseline));
      m_delta->setItem(row, 1, cell(QString::number(a.value("runs", 0)), true));
      m_delta->setItem(row, 2, cell(num(a.value("summary", nlohmann::json()), "mean", 5), true));
      const auto vs = a.value("vs_baseline", nlohmann::json());
      if (vs.is_object()) {
        m_delta->setItem(row, 3, cell(QString::asprintf("%+.5f", vs.value("mean", 0.0)), true));
        m_delta->setItem(row, 4, cell(num(vs, "sd", 5), true));
        // One pair (or none) gives no interval: say so instead of drawing a zero-width one.
        const bool hasInterval = vs.value("n", 0) >= 2 && vs.contains("ci_low") &&
                                 vs["ci_low"].is_number() && vs.contains("ci_high") &&
                                 vs["ci_high"].is_number();
        m_delta->setItem(row, 5,
                         hasInterval ? cell(QStringLiteral("[%1, %2]")
                                                .arg(vs["ci_low"].get<double>(), 0, 'f', 5)
                                                .arg(vs["ci_high"].get<double>(), 0, 'f', 5),
                                            true)
                                     : cell(tr("— (n = %1: no interval)").arg(vs.value("n", 0))));
        m_delta->setItem(
            row, 6,
            cell(QStringLiteral("%1/%2").arg(vs.value("n_improved", 0)).arg(vs.value("n", 0)),
                 true));
        m_delta->setItem(row, 7, cell(qs(vs.value("seeds", nlohmann::json::array()).dump())));
        const bool significant =
            hasInterval && (vs["ci_high"].get<double>() < 0 || vs["ci_low"].get<double>() > 0);
        if (significant)
          for (int c = 3; c < 6; ++c) {
            QFont f = m_delta->item(row, c)->font();
            f.setBold(true);
            m_delta->item(row, c)->setFont(f);
          }
      } else {
        m_delta->setItem(
            row, 3,
            cell(qs(a.value("arm", "")) == r.baseline ? tr("baseline") : qs(a.value("note", "—"))));
      }
    }
  }
  for (const QString& arm : r.arms) {  // hidden arms stay listed, unchecked, to show again
    if (!m_hidden.contains(arm) || arm == r.baseline) continue;
    const int row = m_delta->rowCount();
    m_delta->insertRow(row);
    m_delta->setItem(row, 0, armCell(arm, r.baseline));
    m_delta->setItem(row, 3, cell(tr("hidden")));
  }
  const nlohmann::json& eff = r.efficiency;
  if (eff.is_object() && eff.contains("runs")) {
    for (const auto& row : eff["runs"]) {
      const int n = m_eff->rowCount();
      m_eff->insertRow(n);
      m_eff->setItem(n, 0, cell(qs(row.value("arm", ""))));
      m_eff->setItem(n, 1, cell(QString::number(row.value("seed", 0)), true));
      m_eff->setItem(
          n, 2,
          cell(row["tokens"].is_number() ? QString::number(row["tokens"].get<double>(), 'f', 0)
                                         : tr("not reached"),
               true));
      m_eff->setItem(n, 3,
                     cell(row.contains("step") && row["step"].is_number()
                              ? QString::number(row["step"].get<double>(), 'f', 0)
                              : QStringLiteral("—"),
                          true));
      m_eff->setItem(n, 4,
                     cell(row["ratio_to_uniform"].is_number()
                              ? QString::number(row["ratio_to_uniform"].get<double>(), 'f', 3)
                              : QStringLiteral("—"),
                          true));
    }
  }
  if (!r.error.isEmpty()) {
    m_status->setText(r.error + skipped);
  } else {
    // The engine's note speaks to the CLI (--uniform, --target); the panel says it in its own
    // terms.
    QString note;
    if (eff.is_object() && eff.contains("note") && eff["note"].is_string()) {
      const QString n = qs(eff["note"].get<std::string>());
      if (n.startsWith(QLatin1String("no uniform arm")))
        note =
            tr("no arm named 'uniform' among these runs, so the ratio-to-uniform column stays "
               "empty");
      else if (n.startsWith(QLatin1String("the uniform arm never reached")))
        note = tr("the uniform arm never reached the target BPB; raise the target BPB");
      else
        note = n;
      note = QStringLiteral(" · ") + note;
    }
    m_status->setText(tr("%1 runs in %2 arms from %3; baseline %4; metric %5")
                          .arg(r.runs.size())
                          .arg(r.arms.size())
                          .arg(r.folder, r.baseline, m_metric->currentData().toString()) +
                      note + skipped);
  }
  fitFirstColumnToNames(m_delta);
  fitFirstColumnToNames(m_eff);
  Q_EMIT resultReady();
}

}  // namespace gllm::gui
