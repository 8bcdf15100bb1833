// AttentionCostPanel implementation: reads the result JSON's lengths, widths and overhead grid
// (fractions, shown in percent) and the compiled model's ratio; newest result first.
#include "widgets/attention_cost_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "widgets/heatmap_widget.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

AttentionCostPanel::AttentionCostPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_files = new QComboBox(this);
  bar->addWidget(new QLabel(tr("Result"), this));
  bar->addWidget(m_files, 1);
  layout->addLayout(bar);
  m_empty = new QLabel(this);
  m_empty->setObjectName(QStringLiteral("emptyState"));
  m_empty->setAlignment(Qt::AlignCenter);
  m_empty->setWordWrap(true);
  m_empty->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_empty, 1);
  m_heatmap = new HeatmapWidget(this);
  layout->addWidget(m_heatmap, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);
  connect(m_files, &QComboBox::activated, this,
          [this] { loadResult(m_files->currentData().toString()); });
}

QString AttentionCostPanel::statusText() const {
  return m_status->text();
}
bool AttentionCostPanel::isEmptyState() const {
  return !m_empty->isHidden();
}

int AttentionCostPanel::setResultsDir(const QString& dir) {
  m_files->clear();
  // `gllm bench attention` names its results attention-YYYYMMDD-HHMMSS.json: newest first by that
  // stamp (every file has the same modification time in a fresh clone).
  for (const QString& path : filesNewestFirst(dir, {QStringLiteral("attention*.json")}))
    m_files->addItem(QFileInfo(path).fileName(), path);
  if (m_files->count() == 0) {
    m_empty->setText(
        tr("<b>No attention benchmark results yet.</b><br><br>Run<br><code>gllm bench "
           "attention</code><br>"
           "to measure graded vs standard attention over sequence lengths and widths;<br>"
           "results are written to <code>%1</code> and appear here.")
            .arg(QDir(dir).absolutePath().toHtmlEscaped()));
    m_empty->setVisible(true);
    m_heatmap->setVisible(false);
    m_status->clear();
    return 0;
  }
  m_files->setCurrentIndex(0);
  loadResult(m_files->currentData().toString());
  return m_files->count();
}

QString AttentionCostPanel::currentFile() const {
  return m_files->currentData().toString();
}

QString AttentionCostPanel::loadResult(const QString& path) {
  try {
    const auto j = read_json_file(ss(path), "", large_json_limits());
    const auto lengths = j.at("lengths").get<std::vector<int>>();
    const auto widths = j.at("widths").get<std::vector<int>>();
    const auto& over = j.at("overhead");
    HeatmapData d;
    d.rows = int(widths.size());
    d.cols = int(lengths.size());
    for (int w : widths) d.rowLabels << QString::number(w);
    for (int n : lengths) d.colLabels << QString::number(n);
    d.values.resize(size_t(d.rows) * d.cols, NAN);
    for (int r = 0; r < d.rows; ++r)
      for (int c = 0; c < d.cols; ++c) {
        const auto& v = over.at(size_t(r)).at(size_t(c));
        d.values[size_t(r) * d.cols + c] = v.is_number() ? 100.0 * v.get<double>() : NAN;
      }
    d.rowTitle = tr("width d");
    d.colTitle = tr("sequence length n");
    d.valueTitle = tr("overhead %");
    d.title = tr("Graded vs standard attention (forward + backward): overhead in %");
    m_heatmap->setData(d, HeatmapWidget::Scale::Diverging);
    m_heatmap->setVisible(true);
    m_empty->setVisible(false);
    QString s = tr("%1 · overhead = graded/standard − 1 · head dim %2, batch %3, %4 repeats")
                    .arg(QFileInfo(path).fileName())
                    .arg(j.value("head_dim", 0))
                    .arg(j.value("batch", 0))
                    .arg(j.value("repeats", 0));
    if (j.contains("meets_target"))
      s += j["meets_target"].get<bool>() ? tr(" · meets ≤ 3 % at n = 2048")
                                         : tr(" · misses ≤ 3 % at n = 2048");
    if (j.contains("compiled") && j["compiled"].is_object())
      s += tr(" · compiled/standard = %1").arg(j["compiled"].value("ratio", 0.0), 0, 'f', 3);
    m_status->setText(s);
    return {};
  } catch (const std::exception& e) {
    m_status->setText(tr("%1: %2").arg(path, e.what()));
    return qs(e.what());
  }
}

}  // namespace gllm::gui
