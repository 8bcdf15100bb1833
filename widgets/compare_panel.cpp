// ComparePanel implementation: the engine's compare_runs / token_efficiency compute the paired
// statistics; this file renders them as the Table-3 style Δ table and the efficiency table.
#include "widgets/compare_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

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
}  // namespace

ComparePanel::ComparePanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_folderEdit = new QLineEdit(qs(runs_dir()), this);
  auto* browse = new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Runs folder…"), this);
  auto* reload = new QPushButton(QIcon(QStringLiteral(":/icons/refresh.svg")), tr("Reload"), this);
  m_baseline = new QComboBox(this);
  m_baseline->setMinimumContentsLength(12);
  m_metric = new QComboBox(this);
  m_metric->addItem(tr("held-out BPB"), QStringLiteral("heldout_bpb"));
  m_metric->addItem(tr("val BPB"), QStringLiteral("val_bpb"));
  m_target = new QLineEdit(QStringLiteral("2.0"), this);
  m_target->setMaximumWidth(70);
  m_target->setToolTip(tr("Target BPB for token efficiency (§8.2.2)"));
  bar->addWidget(m_folderEdit, 2);
  bar->addWidget(browse);
  bar->addWidget(reload);
  bar->addWidget(new QLabel(tr("baseline"), this));
  bar->addWidget(m_baseline, 1);
  bar->addWidget(new QLabel(tr("metric"), this));
  bar->addWidget(m_metric);
  bar->addWidget(new QLabel(tr("target"), this));
  bar->addWidget(m_target);
  layout->addLayout(bar);
  auto* t1 = new QLabel(tr("Paired Δ against the baseline, matched by seed (95 % Student t, n−1 df)"), this);
  t1->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(t1);
  m_delta = new QTableWidget(0, 8, this);
  m_delta->setHorizontalHeaderLabels({tr("arm"), tr("runs"), tr("mean"), tr("Δ mean"), tr("Δ SD"), tr("95 % CI"),
                                      tr("improved"), tr("seeds")});
  m_delta->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_delta->verticalHeader()->setVisible(false);
  m_delta->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_delta->setAlternatingRowColors(true);
  layout->addWidget(m_delta, 2);
  auto* t2 = new QLabel(tr("Token efficiency: tokens to reach the target, ratio to the uniform arm"), this);
  t2->setObjectName(QStringLiteral("panelTitle"));
  layout->addWidget(t2);
  m_eff = new QTableWidget(0, 5, this);
  m_eff->setHorizontalHeaderLabels({tr("arm"), tr("seed"), tr("tokens"), tr("step"), tr("ratio to uniform")});
  m_eff->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_eff->verticalHeader()->setVisible(false);
  m_eff->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_eff->setAlternatingRowColors(true);
  layout->addWidget(m_eff, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Runs folder"), m_folderEdit->text());
    if (!d.isEmpty()) setRunsFolder(d);
  });
  connect(reload, &QPushButton::clicked, this, [this] { setRunsFolder(m_folderEdit->text()); });
  connect(m_baseline, &QComboBox::activated, this, [this] { recompute(); });
  connect(m_metric, &QComboBox::activated, this, [this] { recompute(); });
  connect(m_target, &QLineEdit::editingFinished, this, [this] { recompute(); });
}

QString ComparePanel::statusText() const { return m_status->text(); }

QStringList ComparePanel::arms() const {
  QStringList out;
  for (const auto& a : group_by_arm(m_runs)) out << qs(a.arm);
  return out;
}

QString ComparePanel::setRunsFolder(const QString& parent) {
  m_folder = parent;
  m_folderEdit->setText(parent);
  std::vector<std::string> errors;
  try {
    m_runs = list_runs(ss(parent), &errors);
  } catch (const std::exception& e) {
    m_runs.clear();
    m_status->setText(qs(e.what()));
    recompute();
    return qs(e.what());
  }
  const QString keep = m_baseline->currentText();
  m_baseline->clear();
  const QStringList a = arms();
  m_baseline->addItems(a);
  int i = m_baseline->findText(keep);
  if (i < 0) i = m_baseline->findText(QStringLiteral("uniform"));
  m_baseline->setCurrentIndex(i < 0 ? 0 : i);
  recompute();
  if (!errors.empty()) m_status->setText(m_status->text() + tr(" · %1 folder(s) skipped: %2").arg(errors.size()).arg(qs(errors.front())));
  return {};
}

void ComparePanel::setBaseline(const QString& arm) {
  m_baseline->setCurrentIndex(m_baseline->findText(arm));
  recompute();
}

void ComparePanel::setMetric(const QString& metric) {
  m_metric->setCurrentIndex(std::max(0, m_metric->findData(metric)));
  recompute();
}

void ComparePanel::setTargetBpb(double target) {
  m_target->setText(QString::number(target, 'g', 8));
  recompute();
}

void ComparePanel::recompute() {
  m_delta->setRowCount(0);
  m_eff->setRowCount(0);
  m_comparison = nullptr;
  if (m_runs.empty()) {
    m_status->setText(tr("No runs in %1. Launch runs (or copy run folders there), then Reload.").arg(m_folder));
    return;
  }
  const std::string metric = ss(m_metric->currentData().toString());
  try {
    m_comparison = compare_runs(m_runs, ss(m_baseline->currentText()), metric, false);
  } catch (const std::exception& e) {
    m_status->setText(qs(e.what()));
    return;
  }
  for (const auto& a : m_comparison["arms"]) {
    const int r = m_delta->rowCount();
    m_delta->insertRow(r);
    m_delta->setItem(r, 0, cell(qs(a.value("arm", ""))));
    m_delta->setItem(r, 1, cell(QString::number(a.value("runs", 0)), true));
    m_delta->setItem(r, 2, cell(num(a.value("summary", nlohmann::json()), "mean"), true));
    const auto vs = a.value("vs_baseline", nlohmann::json());
    if (vs.is_object()) {
      m_delta->setItem(r, 3, cell(QString::asprintf("%+.6f", vs.value("mean", 0.0)), true));
      m_delta->setItem(r, 4, cell(num(vs, "sd"), true));
      m_delta->setItem(r, 5, cell(QStringLiteral("[%1, %2]").arg(vs.value("ci_low", 0.0), 0, 'f', 6).arg(vs.value("ci_high", 0.0), 0, 'f', 6), true));
      m_delta->setItem(r, 6, cell(QStringLiteral("%1/%2").arg(vs.value("n_improved", 0)).arg(vs.value("n", 0)), true));
      m_delta->setItem(r, 7, cell(qs(vs.value("seeds", nlohmann::json::array()).dump())));
      const bool significant = vs.value("ci_high", 0.0) < 0 || vs.value("ci_low", 0.0) > 0;
      if (significant)
        for (int c = 3; c < 6; ++c) {
          QFont f = m_delta->item(r, c)->font();
          f.setBold(true);
          m_delta->item(r, c)->setFont(f);
        }
    } else {
      m_delta->setItem(r, 3, cell(a.value("arm", "") == ss(m_baseline->currentText()) ? tr("baseline") : qs(a.value("note", "—"))));
    }
  }
  bool ok = false;
  const double target = m_target->text().toDouble(&ok);
  if (ok && target > 0) {
    try {
      m_efficiency = token_efficiency(m_runs, metric, target, "uniform");
      for (const auto& row : m_efficiency["runs"]) {
        const int r = m_eff->rowCount();
        m_eff->insertRow(r);
        m_eff->setItem(r, 0, cell(qs(row.value("arm", ""))));
        m_eff->setItem(r, 1, cell(QString::number(row.value("seed", 0)), true));
        m_eff->setItem(r, 2, cell(row["tokens"].is_number() ? QString::number(row["tokens"].get<double>(), 'f', 0) : tr("not reached"), true));
        m_eff->setItem(r, 3, cell(row.contains("step") && row["step"].is_number() ? QString::number(row["step"].get<double>(), 'f', 0) : QStringLiteral("—"), true));
        m_eff->setItem(r, 4, cell(row["ratio_to_uniform"].is_number() ? QString::number(row["ratio_to_uniform"].get<double>(), 'f', 3) : QStringLiteral("—"), true));
      }
    } catch (const std::exception& e) {
      m_status->setText(qs(e.what()));
      return;
    }
  }
  m_status->setText(tr("%1 runs in %2 arms from %3; baseline %4; metric %5")
                        .arg(m_runs.size()).arg(arms().size()).arg(m_folder, m_baseline->currentText(), qs(metric)) +
                    (m_efficiency.contains("note") ? QStringLiteral(" · ") + qs(m_efficiency["note"].get<std::string>()) : QString()));
}

}  // namespace gllm::gui
