// InspectorPanel implementation: the engine's audit_checkpoint does the numerics on a worker thread
// (a generation counter drops stale results); this file lays them out and writes the CSV.
#include "widgets/inspector_panel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/run_store.h"
#include "widgets/checkpoint_timeline.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

InspectorPanel::InspectorPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  auto* openRun = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open run…"), this);
  auto* openFile =
      new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open checkpoint…"), this);
  auto* csv = new QPushButton(QIcon(QStringLiteral(":/icons/export.svg")), tr("Export CSV"), this);
  m_chartMetric = new QComboBox(this);
  m_chartMetric->addItem(tr("stable rank"), 0);
  m_chartMetric->addItem(tr("mean-row energy share"), 1);
  bar->addWidget(openRun);
  bar->addWidget(openFile);
  bar->addStretch(1);
  bar->addWidget(new QLabel(tr("Chart"), this));
  bar->addWidget(m_chartMetric);
  bar->addWidget(csv);
  layout->addLayout(bar);
  // The run's checkpoints on a slider: the audit follows training step by step.
  m_timeline = new CheckpointTimeline(this);
  layout->addWidget(m_timeline);
  connect(m_timeline, &CheckpointTimeline::checkpointChosen, this,
          [this](const QString& weights) { openAudit(weights); });

  auto* split = new QSplitter(Qt::Horizontal, this);
  m_matrices = new QTableWidget(0, 4, split);
  // Two-line headers keep the number columns narrow enough for the names in a 700 px dock.
  m_matrices->setHorizontalHeaderLabels(
      {tr("matrix"), tr("shape"), tr("stable\nrank"), tr("mean-row\nshare")});
  // Numbers and their headers at full width; the matrix name takes the rest (its tool tip has the
  // full name and ‖W‖_F², which the CSV export also writes).
  m_matrices->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  m_matrices->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_matrices->setTextElideMode(Qt::ElideMiddle);
  fitNumberColumns();
  m_matrices->verticalHeader()->setVisible(false);
  m_matrices->verticalHeader()->setDefaultSectionSize(20);
  m_matrices->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_matrices->setAlternatingRowColors(true);
  m_matrices->setSortingEnabled(true);
  m_chart = new QChart;
  m_chart->legend()->hide();
  m_chart->setMargins(QMargins(2, 2, 2, 2));
  // The bar chart scrolls when its matrices need more height than the panel has: every name stays
  // readable (Qt elides a category label that has less than a line of height).
  m_chartView = new QChartView(m_chart);
  m_chartView->setRenderHint(QPainter::Antialiasing);
  m_chartView->setObjectName(QStringLiteral("auditChart"));
  m_chartScroll = new QScrollArea(split);
  m_chartScroll->setWidgetResizable(true);
  m_chartScroll->setFrameShape(QFrame::NoFrame);
  m_chartScroll->setWidget(m_chartView);
  m_chartScroll->setMinimumWidth(300);  // the table's wide size hint must not squeeze the chart
  split->setChildrenCollapsible(false);
  split->addWidget(m_matrices);
  split->addWidget(m_chartScroll);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  auto* bandTitle = new QLabel(tr("exp(q_τ) and grade band profile (seed 001 Table 5a)"), this);
  bandTitle->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(bandTitle);
  m_bands = new QTableWidget(0, 8, this);
  // Short headers that fit a 700 px dock; the tool tips say which planes and layers.
  m_bands->setHorizontalHeaderLabels({tr("tensor"), tr("mean"), tr("high freq"), tr("mid freq"),
                                      tr("low freq"), tr("layer 0"), tr("middle"), tr("final")});
  const char* bandTips[] = {"",
                            "mean over every layer, head and plane",
                            "RoPE planes [0, P/4): local",
                            "RoPE planes [P/4, 3P/4)",
                            "RoPE planes [3P/4, P): long range",
                            "first layer",
                            "layers 2 … L−2",
                            "last layer"};
  for (int c = 1; c < 8; ++c) m_bands->horizontalHeaderItem(c)->setToolTip(tr(bandTips[c]));
  m_bands->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_bands->horizontalHeader()->setMinimumSectionSize(56);
  m_bands->verticalHeader()->setVisible(false);
  m_bands->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_bands->setMaximumHeight(84);
  layout->addWidget(m_bands);
  m_status = new QLabel(tr("Open a run folder or a .safetensors checkpoint to audit it."), this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  connect(openRun, &QPushButton::clicked, this, [this] {
    const QString d =
        QFileDialog::getExistingDirectory(this, tr("Open run folder"), qs(runs_dir()));
    if (!d.isEmpty()) open(d);
  });
  connect(openFile, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), qs(runs_dir()),
                                                   tr("safetensors (*.safetensors)"));
    if (!f.isEmpty()) open(f);
  });
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export audit CSV"),
                                                   QStringLiteral("audit.csv"), tr("CSV (*.csv)"));
    if (!f.isEmpty())
      m_status->setText(exportCsv(f).isEmpty() ? tr("Wrote %1").arg(f) : exportCsv(f));
  });
  connect(m_chartMetric, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this] { refreshChart(); });
  m_watcher = new QFutureWatcher<InspectorResult>(this);
  connect(m_watcher, &QFutureWatcher<InspectorResult>::finished, this, [this] {
    applyResult(m_watcher->result());
    if (m_dirty) startAudit();
  });
}

QString InspectorPanel::statusText() const {
  return m_status->text();
}

void InspectorPanel::open(const QString& path) {
  m_timeline->setRun(path, CheckpointTimeline::stepOf(path));
  openAudit(path);
}

void InspectorPanel::openAudit(const QString& path) {
  m_path = path;
  ++m_generation;
  m_status->setText(tr("Reading and auditing %1 …").arg(path));
  if (m_watcher->isRunning()) {
    m_dirty = true;  // audit the newest path when the running job ends
    return;
  }
  startAudit();
}

void InspectorPanel::startAudit() {
  m_dirty = false;
  const int generation = m_generation;
  const std::string path = ss(m_path);
  m_watcher->setFuture(QtConcurrent::run([generation, path] {
    InspectorResult r;
    r.generation = generation;
    try {
      const std::string weights = resolve_weights_path(path);
      r.weightsPath = qs(weights);
      r.audit = audit::audit_checkpoint(weights);
    } catch (const std::exception& e) {
      r.error = qs(e.what());
    }
    return r;
  }));
}

bool InspectorPanel::busy() const {
  return m_watcher->isRunning() || m_dirty || m_last.generation != m_generation ||
         m_timeline->busy();
}

bool InspectorPanel::waitForResult(int ms) {
  return runEventsUntil([this] { return !busy(); }, ms);
}

void InspectorPanel::applyResult(const InspectorResult& r) {
  if (r.generation != m_generation) return;  // a newer open() is pending
  m_last = r;
  m_last.audit = {};  // the panel keeps one copy, in m_audit
  if (!r.error.isEmpty()) {
    m_status->setText(r.error);
    Q_EMIT failed(r.error);
    return;
  }
  m_audit = r.audit;
  m_has = true;
  showAudit();
  m_status->setText(tr("%1 — %2 matrices, width %3")
                        .arg(r.weightsPath)
                        .arg(m_audit.matrices.size())
                        .arg(m_audit.width));
  Q_EMIT opened(r.weightsPath);
}

void InspectorPanel::showAudit() {
  m_matrices->setSortingEnabled(false);
  m_matrices->setRowCount(int(m_audit.matrices.size()));
  for (int i = 0; i < int(m_audit.matrices.size()); ++i) {
    const auto& m = m_audit.matrices[size_t(i)];
    auto num = [](double v) {
      auto* it = new QTableWidgetItem;
      it->setData(Qt::DisplayRole, v);
      it->setText(formatNumber(v, 5));
      it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      return it;
    };
    QString shortName = qs(m.name);
    shortName.replace(QStringLiteral("transformer."), QString());
    shortName.replace(QStringLiteral(".weight"), QString());
    auto* name = new QTableWidgetItem(shortName);
    m_matrices->setItem(i, 0, name);
    m_matrices->setItem(i, 1,
                        new QTableWidgetItem(QStringLiteral("%1 × %2").arg(m.rows).arg(m.cols)));
    m_matrices->setItem(i, 2, num(m.stable_rank));
    m_matrices->setItem(i, 3, num(m.mean_row_share));
    name->setToolTip(
        tr("%1\n‖W‖_F² = %2, ‖W‖₂² = %3")
            .arg(qs(m.name), formatNumber(m.frobenius_sq, 5), formatNumber(m.spectral_sq, 5)));
  }
  m_matrices->setSortingEnabled(true);
  fitNumberColumns();
  m_bands->clearSpans();
  m_bands->setRowCount(0);
  auto addBand = [this](const QString& name, const audit::BandProfile& b) {
    const int r = m_bands->rowCount();
    m_bands->insertRow(r);
    const double vals[] = {b.mean,        b.band_mean[0], b.band_mean[1], b.band_mean[2],
                           b.layer0_mean, b.middle_mean,  b.final_mean};
    m_bands->setItem(r, 0, new QTableWidgetItem(name));
    for (int c = 0; c < 7; ++c)
      m_bands->setItem(r, c + 1, new QTableWidgetItem(QString::number(vals[c], 'f', 4)));
  };
  if (m_audit.has_query_scale) addBand(QStringLiteral("exp(q_τ)"), m_audit.query_scale);
  if (m_audit.has_attn_grades) addBand(tr("grades q"), m_audit.attn_grades);
  if (m_bands->rowCount() == 0) {
    m_bands->insertRow(0);
    m_bands->setItem(0, 0, new QTableWidgetItem(tr("no q_tau or attn_grades in this checkpoint")));
    m_bands->setSpan(0, 0, 1, m_bands->columnCount());
  }
  refreshChart();
}

void InspectorPanel::fitNumberColumns() {
  // The widest number or header line of each column, without the room Qt's ResizeToContents keeps
  // for a sort arrow in every header: the matrix names get the rest.
  const QFontMetrics cells(m_matrices->font());
  QFont bold = m_matrices->horizontalHeader()->font();
  bold.setBold(true);
  const QFontMetrics header(bold);
  for (int c = 1; c < m_matrices->columnCount(); ++c) {
    int w = 0;
    for (const QString& line : m_matrices->horizontalHeaderItem(c)->text().split('\n'))
      w = std::max(w, header.horizontalAdvance(line));
    for (int r = 0; r < m_matrices->rowCount(); ++r)
      if (const QTableWidgetItem* it = m_matrices->item(r, c))
        w = std::max(w, cells.horizontalAdvance(it->text()));
    m_matrices->setColumnWidth(c, w + 18);
  }
}

void InspectorPanel::refreshChart() {
  m_chart->removeAllSeries();
  for (QAbstractAxis* a : m_chart->axes()) {
    m_chart->removeAxis(a);
    delete a;
  }
  if (!m_has) return;
  const bool rank = m_chartMetric->currentData().toInt() == 0;
  m_chart->setTitle(rank ? tr("Stable rank ‖W‖_F²/‖W‖₂² per matrix")
                         : tr("Mean-row energy share per matrix"));
  auto* set = new QBarSet(rank ? tr("stable rank") : tr("mean-row share"));
  set->setColor(rank ? QColor(0x2f, 0x6f, 0xb2) : QColor(0xf2, 0x8e, 0x2b));
  QStringList cats;
  double top = 0;
  for (const auto& m : m_audit.matrices) {
    const double v = rank ? m.stable_rank : m.mean_row_share;
    *set << v;
    top = std::max(top, v);
    QString n = qs(m.name);
    n.replace(QStringLiteral("transformer."), QString());
    n.replace(QStringLiteral(".weight"), QString());
    cats << n;
  }
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  m_chart->addSeries(series);
  auto* ay = new QBarCategoryAxis;
  ay->append(cats);
  QFont f = ay->labelsFont();
  f.setPointSizeF(7.5);
  ay->setLabelsFont(f);
  // Axes added to a chart already on screen get their labels elided to "…" by Qt Charts however
  // wide the axis is; the chart's height gives each name its line instead.
  ay->setTruncateLabels(false);
  // One label line (and a little air) per matrix, plus the title and the value axis.
  const int line = QFontMetrics(f).height();
  m_chartView->setMinimumHeight(std::max(220, int(cats.size()) * (line + 6) + 90));
  auto* ax = new QValueAxis;
  applyNiceTicks(ax, 0, top > 0 ? top * 1.05 : 1);
  m_chart->addAxis(ay, Qt::AlignLeft);
  m_chart->addAxis(ax, Qt::AlignBottom);
  series->attachAxis(ay);
  series->attachAxis(ax);
}

QString InspectorPanel::exportCsv(const QString& path) const {
  if (!m_has) return tr("nothing to export; open a checkpoint first");
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
    return tr("could not open %1 for writing").arg(path);
  QTextStream out(&file);
  out << "name,rows,cols,frobenius_sq,spectral_sq,stable_rank,mean_row_share\n";
  for (const auto& m : m_audit.matrices)
    out << qs(m.name) << ',' << m.rows << ',' << m.cols << ','
        << QString::number(m.frobenius_sq, 'g', 12) << ','
        << QString::number(m.spectral_sq, 'g', 12) << ',' << QString::number(m.stable_rank, 'g', 12)
        << ',' << QString::number(m.mean_row_share, 'g', 12) << '\n';
  auto band = [&](const char* name, const audit::BandProfile& b) {
    out << "# band," << name << ",mean=" << b.mean << ",high=" << b.band_mean[0]
        << ",mid=" << b.band_mean[1] << ",low=" << b.band_mean[2] << ",layer0=" << b.layer0_mean
        << ",middle=" << b.middle_mean << ",final=" << b.final_mean << '\n';
  };
  if (m_audit.has_query_scale) band("exp_q_tau", m_audit.query_scale);
  if (m_audit.has_attn_grades) band("attn_grades", m_audit.attn_grades);
  out.flush();
  return file.commit() ? QString() : tr("could not write %1").arg(path);
}

}  // namespace gllm::gui
