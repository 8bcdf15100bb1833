// The Ladder panel (ladder_panel.h): certificate against measured ΔBPB per arm with its t-interval,
// the table of arms, Spearman's ρ; ladder_report runs on a worker thread with a generation counter.
#include "widgets/ladder_panel.h"

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent>
#include <algorithm>
#include <cmath>

#include "engine/grading/cone.h"
#include "engine/io/error.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {

QTableWidgetItem* cell(const QString& text, bool number = true) {
  auto* it = new QTableWidgetItem(text);
  it->setFlags(it->flags() & ~Qt::ItemIsEditable);
  if (number) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return it;
}

}  // namespace

LadderPanel::LadderPanel(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Ladder runs:")));
  m_folder = new QLineEdit;
  m_folder->setPlaceholderText(
      tr("folder of `gllm train --sweep presets/sweeps/ladder-tiny.json`"));
  row->addWidget(m_folder, 1);
  auto* browse = new QPushButton(tr("Browse…"));
  row->addWidget(browse);
  row->addWidget(new QLabel(tr("target val BPB:")));
  m_target = new QLineEdit;
  m_target->setPlaceholderText(tr("auto"));
  m_target->setMaximumWidth(80);
  row->addWidget(m_target);
  auto* go = new QPushButton(tr("Report"));
  row->addWidget(go);
  lay->addLayout(row);

  auto* split = new QSplitter(Qt::Vertical);
  m_chart = new QChart;
  m_chart->setTitle(
      tr("Pre-registered ⟨q, α̂−τ̂⟩ against measured ΔBPB (held-out, paired with uniform, 95 % t; "
         "lower is better)"));
  m_chart->legend()->setAlignment(Qt::AlignRight);
  auto* view = new QChartView(m_chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(220);
  split->addWidget(view);
  m_table = new QTableWidget(0, 11);
  m_table->setHorizontalHeaderLabels({tr("pred."), tr("arm"), tr("⟨q, α̂−τ̂⟩ fit"), tr("Λ fit"),
                                      tr("⟨q, α̂−τ̂⟩ held-out"), tr("Λ held-out"), tr("ΔBPB"),
                                      tr("95 % t-interval"), tr("seeds"), tr("tokens ×"),
                                      tr("meas.")});
  m_table->horizontalHeaderItem(2)->setToolTip(
      tr("On the profiles the grades were fitted on (in-sample for the educated arm)"));
  m_table->horizontalHeaderItem(4)->setToolTip(
      tr("The same grades scored on profiles from held-out sentences (the honest prediction)"));
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
  lay->addWidget(m_status);

  m_watcher = new QFutureWatcher<LadderResult>(this);
  connect(m_watcher, &QFutureWatcher<LadderResult>::finished, this, [this] {
    const LadderResult r = m_watcher->result();
    if (r.generation == m_generation) apply(r);
  });
  auto request = [this] {
    bool ok = false;
    const double t = m_target->text().trimmed().toDouble(&ok);
    setRunsFolder(m_folder->text().trimmed(), ok && t > 0 ? t : 0);
  };
  connect(go, &QPushButton::clicked, this, request);
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

QString LadderPanel::runsFolder() const {
  return m_folder->text();
}
bool LadderPanel::busy() const {
  return m_watcher->isRunning();
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
      r.report = ladder_report(dir, targetBpb);
    } catch (const std::exception& e) {
      r.error = qs(e.what());
    }
    return r;
  }));
}

bool LadderPanel::waitForResult(int ms) {
  return runEventsUntil([this] { return m_result.generation == m_generation; }, ms);
}

void LadderPanel::apply(const LadderResult& r) {
  m_result = r;
  m_table->setRowCount(0);
  m_chart->removeAllSeries();
  for (auto* a : m_chart->axes()) {
    m_chart->removeAxis(a);
    delete a;
  }
  if (!r.error.isEmpty()) {
    m_status->setText(r.error);
    Q_EMIT resultReady();
    return;
  }
  const LadderReport& rep = r.report;
  m_table->setRowCount(static_cast<int>(rep.arms.size()));
  int row = 0;
  for (const auto& x : rep.arms) {
    const bool d = x.has_delta;
    const auto& s = x.delta_heldout.delta;
    m_table->setItem(row, 0, cell(QString::number(x.predicted_rank)));
    auto* arm = cell(qs(x.ladder_arm), false);
    arm->setToolTip(qs(x.program));
    m_table->setItem(row, 1, arm);
    const bool h = x.has_heldout;
    m_table->setItem(row, 2, cell(formatNumber(x.certificate, 4)));
    auto* fitLambda = cell(formatNumber(x.lambda_q, 4));
    fitLambda->setToolTip(qs(grading::cone_verdict_text(x.lambda_q, x.certificate)));
    m_table->setItem(row, 3, fitLambda);
    m_table->setItem(row, 4, cell(h ? formatNumber(x.certificate_heldout, 4) : tr("—")));
    auto* heldLambda = cell(h ? formatNumber(x.lambda_q_heldout, 4) : tr("—"));
    if (h)
      heldLambda->setToolTip(
          qs(grading::cone_verdict_text(x.lambda_q_heldout, x.certificate_heldout)));
    m_table->setItem(row, 5, heldLambda);
    m_table->setItem(row, 6, cell(d ? QString::asprintf("%+.4f", s.mean) : tr("—")));
    m_table->setItem(row, 7,
                     cell(d ? QString::asprintf("[%+.4f, %+.4f]", s.ci_low, s.ci_high) : tr("—")));
    m_table->setItem(row, 8, cell(QString::number(x.seeds.size())));
    m_table->setItem(row, 9,
                     cell(x.token_ratio > 0 ? formatNumber(x.token_ratio, 3) : tr("not reached")));
    m_table->setItem(row, 10,
                     cell(x.measured_rank > 0 ? QString::number(x.measured_rank) : tr("—")));
    ++row;
  }
  drawChart(rep);
  QString text = tr("Spearman ρ(certificate, −ΔBPB) = %1, 95 % bootstrap interval [%2, %3] over "
                    "seeds; tokens to val "
                    "BPB %4; ladder %5.")
                     .arg(formatNumber(rep.spearman, 3), formatNumber(rep.spearman_low, 3),
                          formatNumber(rep.spearman_high, 3), formatNumber(rep.target_bpb, 4),
                          qs(rep.ladder_file));
  if (!std::isfinite(rep.spearman))
    text = tr("No Spearman ρ: fewer than two arms besides uniform have paired runs; ladder %1.")
               .arg(qs(rep.ladder_file));
  if (!rep.warnings.empty())
    text += tr(" %n warning(s): ", "", static_cast<int>(rep.warnings.size())) +
            qs(rep.warnings.front());
  m_status->setText(text);
  Q_EMIT resultReady();
}

void LadderPanel::drawChart(const LadderReport& rep) {
  double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
  int i = 0;
  for (const auto& x : rep.arms) {
    const QColor colour = seriesColor(i++);
    if (!x.has_delta) continue;
    const auto& s = x.delta_heldout.delta;
    auto* point = new QScatterSeries;
    point->setName(qs(x.ladder_arm));
    point->setColor(colour);
    point->setMarkerSize(11);
    point->append(x.certificate, s.mean);
    auto* whisker = new QLineSeries;
    whisker->setColor(colour);
    whisker->append(x.certificate, s.ci_low);
    whisker->append(x.certificate, s.ci_high);
    m_chart->addSeries(whisker);
    m_chart->addSeries(point);
    for (auto* m : m_chart->legend()->markers(whisker)) m->setVisible(false);
    xlo = std::min(xlo, x.certificate);
    xhi = std::max(xhi, x.certificate);
    ylo = std::min({ylo, s.ci_low, s.mean});
    yhi = std::max({yhi, s.ci_high, s.mean});
  }
  const double xpad = 0.08 * std::max(xhi - xlo, 1e-3), ypad = 0.1 * std::max(yhi - ylo, 1e-4);
  auto* zero = new QLineSeries;  // ΔBPB = 0: the uniform arm's level
  zero->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  zero->append(xlo - xpad, 0.0);
  zero->append(xhi + xpad, 0.0);
  m_chart->addSeries(zero);
  for (auto* m : m_chart->legend()->markers(zero)) m->setVisible(false);
  auto* ax = new QValueAxis;
  ax->setTitleText(tr("⟨q, α̂−τ̂⟩ (pre-registered)"));
  auto* ay = new QValueAxis;
  ay->setTitleText(tr("ΔBPB"));  // the chart title says against what, and that lower is better
  m_chart->addAxis(ax, Qt::AlignBottom);
  m_chart->addAxis(ay, Qt::AlignLeft);
  for (auto* s : m_chart->series()) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  applyNiceTicks(ax, xlo - xpad, xhi + xpad);
  applyNiceTicks(ay, ylo - ypad, yhi + ypad);
}

}  // namespace gllm::gui
