// InspectorPanel implementation: the engine's audit_checkpoint does the numerics; this file lays
// them out (matrix table, horizontal bar chart of one column, band table) and writes the CSV.
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
#include <QSplitter>
#include <QTableWidget>
#include <QTextStream>
#include <QValueAxis>
#include <QVBoxLayout>

#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/run_store.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

InspectorPanel::InspectorPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  auto* openRun = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open run…"), this);
  auto* openFile = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open checkpoint…"), this);
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

  auto* split = new QSplitter(Qt::Horizontal, this);
  m_matrices = new QTableWidget(0, 5, split);
  m_matrices->setHorizontalHeaderLabels({tr("matrix"), tr("shape"), tr("stable rank"), tr("mean-row share"), tr("‖W‖_F²")});
  m_matrices->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_matrices->verticalHeader()->setVisible(false);
  m_matrices->verticalHeader()->setDefaultSectionSize(20);
  m_matrices->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_matrices->setAlternatingRowColors(true);
  m_matrices->setSortingEnabled(true);
  m_chart = new QChart;
  m_chart->legend()->hide();
  m_chart->setMargins(QMargins(2, 2, 2, 2));
  auto* view = new QChartView(m_chart, split);
  view->setRenderHint(QPainter::Antialiasing);
  split->addWidget(m_matrices);
  split->addWidget(view);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  auto* bandTitle = new QLabel(tr("exp(q_τ) and grade band profile (seed 001 Table 5a)"), this);
  bandTitle->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(bandTitle);
  m_bands = new QTableWidget(0, 8, this);
  m_bands->setHorizontalHeaderLabels({tr("tensor"), tr("overall mean"), tr("high-freq planes"), tr("mid-freq planes"),
                                      tr("low-freq planes"), tr("layer 0"), tr("middle layers"), tr("final layer")});
  m_bands->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_bands->verticalHeader()->setVisible(false);
  m_bands->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_bands->setMaximumHeight(84);
  layout->addWidget(m_bands);
  m_status = new QLabel(tr("Open a run folder or a .safetensors checkpoint to audit it."), this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  connect(openRun, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Open run folder"), qs(runs_dir()));
    if (!d.isEmpty()) open(d);
  });
  connect(openFile, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), qs(runs_dir()), tr("safetensors (*.safetensors)"));
    if (!f.isEmpty()) open(f);
  });
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export audit CSV"), QStringLiteral("audit.csv"), tr("CSV (*.csv)"));
    if (!f.isEmpty()) m_status->setText(exportCsv(f).isEmpty() ? tr("Wrote %1").arg(f) : exportCsv(f));
  });
  connect(m_chartMetric, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { refreshChart(); });
}

QString InspectorPanel::statusText() const { return m_status->text(); }

QString InspectorPanel::open(const QString& path) {
  try {
    const std::string weights = resolve_weights_path(ss(path));
    m_audit = audit::audit_checkpoint(weights);
    m_has = true;
    showAudit();
    m_status->setText(tr("%1 — %2 matrices, width %3").arg(qs(weights)).arg(m_audit.matrices.size()).arg(m_audit.width));
    emit opened(qs(weights));
    return {};
  } catch (const std::exception& e) {
    m_status->setText(qs(e.what()));
    return qs(e.what());
  }
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
    m_matrices->setItem(i, 0, new QTableWidgetItem(qs(m.name)));
    m_matrices->setItem(i, 1, new QTableWidgetItem(QStringLiteral("%1 × %2").arg(m.rows).arg(m.cols)));
    m_matrices->setItem(i, 2, num(m.stable_rank));
    m_matrices->setItem(i, 3, num(m.mean_row_share));
    m_matrices->setItem(i, 4, num(m.frobenius_sq));
  }
  m_matrices->setSortingEnabled(true);
  m_bands->setRowCount(0);
  auto addBand = [this](const QString& name, const audit::BandProfile& b) {
    const int r = m_bands->rowCount();
    m_bands->insertRow(r);
    const double vals[] = {b.mean, b.band_mean[0], b.band_mean[1], b.band_mean[2], b.layer0_mean, b.middle_mean, b.final_mean};
    m_bands->setItem(r, 0, new QTableWidgetItem(name));
    for (int c = 0; c < 7; ++c) m_bands->setItem(r, c + 1, new QTableWidgetItem(QString::number(vals[c], 'f', 4)));
  };
  if (m_audit.has_query_scale) addBand(QStringLiteral("exp(q_τ)"), m_audit.query_scale);
  if (m_audit.has_attn_grades) addBand(tr("grades q"), m_audit.attn_grades);
  if (m_bands->rowCount() == 0) {
    m_bands->insertRow(0);
    m_bands->setItem(0, 0, new QTableWidgetItem(tr("no q_tau or attn_grades in this checkpoint")));
  }
  refreshChart();
}

void InspectorPanel::refreshChart() {
  m_chart->removeAllSeries();
  for (QAbstractAxis* a : m_chart->axes()) {
    m_chart->removeAxis(a);
    delete a;
  }
  if (!m_has) return;
  const bool rank = m_chartMetric->currentData().toInt() == 0;
  m_chart->setTitle(rank ? tr("Stable rank ‖W‖_F²/‖W‖₂² per matrix") : tr("Mean-row energy share per matrix"));
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
  f.setPointSizeF(7);
  ay->setLabelsFont(f);
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
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return tr("could not open %1 for writing").arg(path);
  QTextStream out(&file);
  out << "name,rows,cols,frobenius_sq,spectral_sq,stable_rank,mean_row_share\n";
  for (const auto& m : m_audit.matrices)
    out << qs(m.name) << ',' << m.rows << ',' << m.cols << ',' << QString::number(m.frobenius_sq, 'g', 12) << ','
        << QString::number(m.spectral_sq, 'g', 12) << ',' << QString::number(m.stable_rank, 'g', 12) << ','
        << QString::number(m.mean_row_share, 'g', 12) << '\n';
  auto band = [&](const char* name, const audit::BandProfile& b) {
    out << "# band," << name << ",mean=" << b.mean << ",high=" << b.band_mean[0] << ",mid=" << b.band_mean[1]
        << ",low=" << b.band_mean[2] << ",layer0=" << b.layer0_mean << ",middle=" << b.middle_mean
        << ",final=" << b.final_mean << '\n';
  };
  if (m_audit.has_query_scale) band("exp_q_tau", m_audit.query_scale);
  if (m_audit.has_attn_grades) band("attn_grades", m_audit.attn_grades);
  out.flush();
  return file.commit() ? QString() : tr("could not write %1").arg(path);
}

}  // namespace gllm::gui
