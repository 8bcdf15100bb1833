// The Ladder panel (ladder_panel.h): the report, its plan and the arms' curves read on a worker
// thread with a generation counter; the table of arms; probing checkpoints on demand.
#include "widgets/ladder_panel.h"

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFont>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/grading/cone.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/fork.h"
#include "engine/train/probe.h"
#include "engine/train/run_store.h"
#include "engine/train/token_efficiency.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {

enum Column {
  kPredRank,
  kArm,
  kCertificate,
  kPredictedRatio,
  kPredictedDelta,
  kSeedsNeeded,
  kPower,
  kRatio,
  kRatioInterval,
  kTaskRatio,
  kDelta,
  kSeeds,
  kMeasuredRank,
  kColumns
};

QTableWidgetItem* cell(const QString& text, bool number = true) {
  auto* it = new QTableWidgetItem(text);
  it->setFlags(it->flags() & ~Qt::ItemIsEditable);
  if (number) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return it;
}

QString ratioText(const TokenRatio& r) {
  return r.n == 0 ? QObject::tr("not reached") : QString::asprintf("×%.3f", r.ratio);
}

QString intervalText(const TokenRatio& r) {
  if (r.n < 2) return QObject::tr("—");
  return QString::asprintf("[%.3f, %.3f]", r.low, r.high);
}

// Each arm's mean validation curve at the evaluations all its seeds share.
std::vector<ArmCurve> arm_curves(const std::string& dir, const LadderReport& rep) {
  std::map<std::string, std::map<double, std::pair<double, int>>> acc;
  std::map<std::string, int> runs;
  for (const auto& r : list_runs(dir)) {
    if (r.status != "completed") continue;
    const auto curve = since_start(
        metric_curve(read_metrics(join_path(r.dir, "metrics.jsonl")).records, "val_bpb"),
        run_start_tokens(r.dir));  // a fork's tokens count from its fork, as the report's do
    auto& a = acc[r.name];
    ++runs[r.name];
    for (const auto& p : curve) {
      a[p.tokens].first += p.value;
      a[p.tokens].second += 1;
    }
  }
  std::vector<ArmCurve> out;
  for (const auto& x : rep.arms) {
    ArmCurve c;
    c.arm = x.ladder_arm;
    for (const auto& [t, sum] : acc[x.arm])
      if (sum.second == runs[x.arm]) {
        c.tokens.push_back(t);
        c.value.push_back(sum.first / sum.second);
      }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

LadderPanel::LadderPanel(QWidget* parent)
    : QWidget(parent), m_cancelProbe(std::make_shared<std::atomic<bool>>(false)) {
  auto* lay = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Ladder runs:")));
  m_folder = new QLineEdit;
  m_folder->setObjectName(QStringLiteral("ladderFolder"));
  m_folder->setPlaceholderText(
      tr("folder of `gllm train --sweep presets/sweeps/ladder-tiny.json`"));
  row->addWidget(m_folder, 1);
  auto* browse = new QPushButton(tr("Browse…"));
  row->addWidget(browse);
  lay->addLayout(row);
  // The path gets a row of its own: beside the target and the buttons it kept ≈ 40 px at 1280 ×
  // 800.
  row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("target val BPB:")));
  m_target = new QLineEdit;
  m_target->setPlaceholderText(tr("auto"));
  m_target->setToolTip(tr("auto: the uniform arm's validation BPB at half its budget"));
  m_target->setMaximumWidth(80);
  row->addWidget(m_target);
  auto* go = new QPushButton(tr("Report"));
  row->addWidget(go);
  m_probe = new QPushButton(tr("Probe checkpoints"));
  m_probe->setToolTip(
      tr("The task endpoint: a linear probe of the held-out POS tags on every checkpoint's "
         "hidden states (gllm probe), then the report again"));
  row->addWidget(m_probe);
  row->addStretch(1);
  lay->addLayout(row);

  auto* split = new QSplitter(Qt::Vertical);
  auto* charts = new QSplitter(Qt::Horizontal);
  m_chart = new QChart;
  // Short titles that fit a 330 px chart at 1280 × 800; the full reading is the view's tooltip.
  m_chart->setTitle(tr("Token ratio ● meas. □ 1/Λ"));
  m_chart->legend()->hide();  // the arms' colours are the curves chart's legend
  auto* view = new QChartView(m_chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(160);
  view->setToolTip(
      tr("Token ratio tokens(uniform)/tokens(arm) per arm: ● measured with its 95 % "
         "t-interval over seeds, □ predicted 1/Λ(q)"));
  charts->addWidget(view);
  m_curves = new QChart;
  m_curves->setTitle(tr("Val BPB by arm, target"));
  m_curves->legend()->setAlignment(Qt::AlignRight);
  m_curves->legend()->setFont(QFont(font().family(), std::max(7, font().pointSize() - 2)));
  auto* cview = new QChartView(m_curves);
  cview->setRenderHint(QPainter::Antialiasing);
  cview->setMinimumHeight(160);
  cview->setToolTip(
      tr("Validation BPB per arm (mean over seeds), the target BPB and where each "
         "arm crosses it"));
  charts->addWidget(cview);
  // Side by side at equal widths from the start (stretch factors act only on later resizes, so a
  // panel first shown as a tab squeezed the curves chart to a sliver); neither collapses.
  view->setMinimumWidth(220);
  cview->setMinimumWidth(220);
  charts->setChildrenCollapsible(false);
  charts->setStretchFactor(0, 1);
  charts->setStretchFactor(1, 1);
  charts->setSizes({1000, 1000});
  split->addWidget(charts);
  m_table = new QTableWidget(0, kColumns);
  m_table->setHorizontalHeaderLabels({tr("pred."), tr("arm"), tr("⟨q, αˆ−τˆ⟩"), tr("pred. ×"),
                                      tr("pred. ΔBPB"), tr("seeds 80 %"), tr("power"),
                                      tr("tokens ×"), tr("95 %"), tr("task ×"), tr("ΔBPB [95 %]"),
                                      tr("n"), tr("meas.")});
  const QStringList tips{
      tr("Predicted rank: 1 = largest certificate"),
      tr("The ladder's arm; hover for the program that made its grades"),
      tr("The pre-registered certificate on held-out profiles (the honest prediction; the fit "
         "value is in the cell's tooltip)"),
      tr("Predicted token ratio tokens(uniform)/tokens(arm) = 1/Λ(q)"),
      tr("Predicted held-out ΔBPB at the budget: the pilot's BPB-per-e-fold slope × ln Λ"),
      tr("Seeds the paired comparison against uniform needs for 80 % power at α = 0.05"),
      tr("Power the runs here achieve with their seeds"),
      tr("Measured token ratio tokens(uniform)/tokens(arm) to the target val BPB (geometric mean "
         "over seeds)"),
      tr("95 % t-interval of the token ratio over seeds (log scale)"),
      tr("Measured token ratio to the target task error (gllm probe)"),
      tr("Held-out ΔBPB at the budget, paired by seed against uniform, with its 95 % t-interval"),
      tr("Seeds"),
      tr("Measured rank by token ratio: 1 = fewest tokens")};
  for (int c = 0; c < kColumns; ++c) m_table->horizontalHeaderItem(c)->setToolTip(tips[c]);
  m_table->verticalHeader()->setVisible(false);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  split->addWidget(m_table);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  lay->addWidget(split, 1);
  m_status =
      new QLabel(tr("Open the folder of a ladder sweep to test the ladder's predicted order."));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addWidget(m_status);

  m_watcher = new QFutureWatcher<LadderResult>(this);
  connect(m_watcher, &QFutureWatcher<LadderResult>::finished, this, [this] {
    const LadderResult r = m_watcher->result();
    if (r.generation == m_generation) apply(r);
  });
  m_probeWatcher = new QFutureWatcher<QString>(this);
  connect(m_probeWatcher, &QFutureWatcher<QString>::finished, this, [this] {
    const QString message = m_probeWatcher->result();
    m_probing = false;
    m_probe->setEnabled(true);
    Q_EMIT probeFinished(message);
    bool ok = false;
    const double t = m_target->text().trimmed().toDouble(&ok);
    setRunsFolder(m_folder->text().trimmed(), ok && t > 0 ? t : 0);
    m_status->setText(message + " " + m_status->text());
  });
  auto request = [this] {
    bool ok = false;
    const double t = m_target->text().trimmed().toDouble(&ok);
    setRunsFolder(m_folder->text().trimmed(), ok && t > 0 ? t : 0);
  };
  connect(go, &QPushButton::clicked, this, request);
  connect(m_probe, &QPushButton::clicked, this, &LadderPanel::probeCheckpoints);
  connect(m_folder, &QLineEdit::returnPressed, this, request);
  connect(m_target, &QLineEdit::returnPressed, this, request);
  connect(browse, &QPushButton::clicked, this, [this, request] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Folder of ladder runs"), m_folder->text());
    if (dir.isEmpty()) return;
    m_folder->setText(dir);
    request();
  });
}

LadderPanel::~LadderPanel() {
  m_cancelProbe->store(true);  // the probe stops after its current checkpoint
}

QString LadderPanel::runsFolder() const {
  return m_folder->text();
}
bool LadderPanel::busy() const {
  return m_watcher->isRunning();
}
bool LadderPanel::probing() const {
  // Our own flag, not the watcher's isRunning(): a probe of runs without checkpoints can end
  // before the caller looks, while its finished() is still queued.
  return m_probing;
}
QString LadderPanel::statusText() const {
  return m_status->text();
}

void LadderPanel::setRunsFolder(const QString& folder, double targetBpb) {
  m_folder->setText(folder);
  const int gen = ++m_generation;
  m_status->setText(tr("reading the ladder runs under %1 …").arg(folder));
  const std::string dir = ss(folder);
  m_watcher->setFuture(QtConcurrent::run([gen, dir, targetBpb] {
    LadderResult r;
    r.generation = gen;
    try {
      LadderReportOptions o;
      o.target_bpb = targetBpb;
      r.report = ladder_report(dir, o);
      r.curves = arm_curves(dir, r.report);
    } catch (const std::exception& e) {
      r.error = qs(e.what());
      return r;
    }
    try {  // the plan with these runs as the pilot: the power the sweep had
      size_t seeds = 0;
      for (const auto& x : r.report.arms) seeds = std::max(seeds, x.seeds.size());
      PlanOptions po;
      po.seeds = static_cast<int>(std::max<size_t>(seeds, 2));
      r.plan = ladder_plan(r.report.ladder_file, dir, po);
      r.hasPlan = true;
    } catch (const std::exception& e) {
      r.planError = qs(e.what());
    }
    return r;
  }));
}

void LadderPanel::probeCheckpoints() {
  if (probing()) return;
  const QString folder = m_folder->text().trimmed();
  if (folder.isEmpty()) {
    m_status->setText(tr("Give the folder of a ladder sweep first, then probe its checkpoints."));
    return;
  }
  m_probing = true;
  m_probe->setEnabled(false);
  m_status->setText(tr("probing the checkpoints of the runs under %1 …").arg(folder));
  const std::string dir = ss(folder);
  auto cancel = m_cancelProbe;
  QPointer<QLabel> status = m_status;
  m_probeWatcher->setFuture(QtConcurrent::run([dir, cancel, status] {
    int runs = 0, scores = 0;
    QStringList problems;
    std::vector<RunInfo> list;
    try {
      list = list_runs(dir);
    } catch (const std::exception& e) {
      return QObject::tr("Probe: %1").arg(qs(e.what()));
    }
    for (const auto& r : list) {
      if (cancel->load()) break;
      if (r.status != "completed") continue;
      try {
        const auto s = probe_run(r.dir, ProbeOptions{}, {}, cancel.get());
        scores += static_cast<int>(s.size());
        ++runs;
      } catch (const std::exception& e) {
        problems << qs(r.dir) + ": " + qs(e.what());
      }
      QMetaObject::invokeMethod(
          qApp,
          [status, runs, n = list.size()] {
            if (status) status->setText(QObject::tr("probed %1 of %2 runs …").arg(runs).arg(n));
          },
          Qt::QueuedConnection);
    }
    QString msg = QObject::tr("Probed %n run(s) (%1 checkpoint scores).", "", runs).arg(scores);
    if (!problems.isEmpty()) msg += " " + problems.join("; ");
    return msg;
  }));
}

bool LadderPanel::waitForResult(int ms) {
  return runEventsUntil([this] { return m_result.generation == m_generation; }, ms);
}

void LadderPanel::apply(const LadderResult& r) {
  m_result = r;
  m_table->setRowCount(0);
  for (QChart* c : {m_chart, m_curves}) {
    c->removeAllSeries();
    for (auto* a : c->axes()) {
      c->removeAxis(a);
      delete a;
    }
  }
  if (!r.error.isEmpty()) {
    m_status->setText(r.error);
    Q_EMIT resultReady();
    return;
  }
  const LadderReport& rep = r.report;
  fillTable(r);
  drawRatioChart(rep);
  drawCurves(r);
  auto rho = [](const RankCorrelation& c) {
    if (!std::isfinite(c.rho)) return tr("none");
    QString s = formatNumber(c.rho, 3);
    if (c.seeds >= 2)
      s += QString(" [%1, %2]").arg(formatNumber(c.low, 3), formatNumber(c.high, 3));
    return s;
  };
  QString text = tr("Spearman ρ of the %1 certificate against the token ratio = %2")
                     .arg(qs(rep.prediction), rho(rep.rho_tokens));
  if (rep.has_task) text += tr(", task token ratio = %1").arg(rho(rep.rho_task));
  text += tr(", −ΔBPB = %1 (95 % bootstrap over seeds). Target val BPB %2 (%3)")
              .arg(rho(rep.rho_delta), formatNumber(rep.target_bpb, 4), qs(rep.target_rule));
  if (rep.has_task)
    text += tr("; target %1 error %2").arg(qs(rep.task), formatNumber(rep.target_task_error, 4));
  text += ".";
  if (r.hasPlan)
    text += tr(" Plan (this folder as pilot: slope %1 BPB/e-fold, paired SD %2): %3.")
                .arg(formatNumber(r.plan.slope, 3), formatNumber(r.plan.paired_sd, 3),
                     qs(r.plan.recommendation));
  else if (!r.planError.isEmpty())
    text += tr(" No plan: %1").arg(r.planError);
  if (!rep.warnings.empty())
    text += tr(" %n warning(s): ", "", static_cast<int>(rep.warnings.size())) +
            qs(rep.warnings.front());
  m_status->setText(text);
  Q_EMIT resultReady();
}

void LadderPanel::fillTable(const LadderResult& r) {
  const LadderReport& rep = r.report;
  m_table->setRowCount(static_cast<int>(rep.arms.size()));
  int row = 0;
  for (const auto& x : rep.arms) {
    const ArmPlan* plan = nullptr;
    if (r.hasPlan)
      for (const auto& p : r.plan.arms)
        if (p.arm == x.ladder_arm) plan = &p;
    const bool uniform = x.ladder_arm == "uniform";
    m_table->setItem(row, kPredRank, cell(QString::number(x.predicted_rank)));
    auto* arm = cell(qs(x.ladder_arm), false);
    arm->setToolTip(qs(x.program));
    m_table->setItem(row, kArm, arm);
    auto* cert = cell(formatNumber(x.predicted_certificate(), 4));
    cert->setToolTip(tr("fit: ⟨q, αˆ−τˆ⟩ = %1, Λ = %2 (%3)")
                         .arg(formatNumber(x.certificate, 4), formatNumber(x.lambda_q, 4),
                              qs(grading::cone_verdict_text(x.lambda_q, x.certificate))));
    m_table->setItem(row, kCertificate, cert);
    m_table->setItem(row, kPredictedRatio, cell(QString::asprintf("×%.3f", x.predicted_gain())));
    m_table->setItem(row, kPredictedDelta,
                     cell(plan ? QString::asprintf("%+.4f", plan->predicted_delta_bpb) : tr("—")));
    QString need = tr("—");
    if (plan && !uniform)
      need = plan->in_reach ? QString::number(plan->seeds_needed)
                            : tr("> %1").arg(r.plan.options.max_seeds);
    m_table->setItem(row, kSeedsNeeded, cell(need));
    m_table->setItem(row, kPower,
                     cell(plan && !uniform ? formatNumber(plan->power_at_seeds, 2) : tr("—")));
    m_table->setItem(row, kRatio, cell(ratioText(x.token_ratio)));
    m_table->setItem(row, kRatioInterval, cell(intervalText(x.token_ratio)));
    m_table->setItem(row, kTaskRatio,
                     cell(rep.has_task ? ratioText(x.task_token_ratio) : tr("no probe")));
    const auto& s = x.delta_heldout.delta;
    m_table->setItem(
        row, kDelta,
        cell(x.has_delta ? QString::asprintf("%+.4f [%+.4f, %+.4f]", s.mean, s.ci_low, s.ci_high)
                         : tr("—")));
    m_table->setItem(row, kSeeds, cell(QString::number(x.seeds.size())));
    m_table->setItem(row, kMeasuredRank,
                     cell(x.measured_rank > 0 ? QString::number(x.measured_rank) : tr("—")));
    ++row;
  }
}

}  // namespace gllm::gui
