// HeatmapPanel: combo boxes pick quantity, source A, optional source B and head; the view is
// recomputed from the stored grids on every change (cheap: at most layers × heads × planes).
#include "widgets/heatmap_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/checkpoint_timeline.h"

namespace gllm::gui {

namespace {
constexpr int kMaxListedLevels = 8;  // level grades listed one by one up to this many runs
}  // namespace

HeatmapPanel::HeatmapPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_quantity = new QComboBox(this);
  m_quantity->addItem(tr("Grades q (graded attention)"), Grades);
  m_quantity->addItem(tr("Query scale exp(q_τ)"), QueryScale);
  m_a = new QComboBox(this);
  m_b = new QComboBox(this);
  m_head = new QComboBox(this);
  m_a->setMinimumContentsLength(14);
  m_b->setMinimumContentsLength(14);
  auto* open =
      new QPushButton(QIcon(QStringLiteral(":/icons/open.svg")), tr("Open checkpoint…"), this);
  // Two rows so the panel fits a dock of about 600 px: what to show, then which sources.
  bar->addWidget(new QLabel(tr("Show"), this));
  bar->addWidget(m_quantity, 1);
  bar->addWidget(new QLabel(tr("Head"), this));
  bar->addWidget(m_head);
  bar->addWidget(open);
  layout->addLayout(bar);
  auto* sources = new QHBoxLayout;
  sources->addWidget(new QLabel(tr("A"), this));
  sources->addWidget(m_a, 1);
  sources->addWidget(new QLabel(tr("− B"), this));
  sources->addWidget(m_b, 1);
  layout->addLayout(sources);
  // A's run through its checkpoints (the window opens the chosen one as source A).
  m_timeline = new CheckpointTimeline(this);
  layout->addWidget(m_timeline);
  m_heatmap = new HeatmapWidget(this);
  m_heatmap->setEmptyText(
      tr("No grades to show yet.\nStart a run (its grades appear live) or open a "
         "checkpoint (.safetensors) to see q and exp(q_τ) per layer and RoPE plane."));
  layout->addWidget(m_heatmap, 1);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("hint"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);
  for (QComboBox* c : {m_quantity, m_a, m_b, m_head})
    connect(c, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
      if (!m_updating) refresh();
    });
  connect(open, &QPushButton::clicked, this, &HeatmapPanel::openCheckpointRequested);
  refillCombos();
  refresh();
}

void HeatmapPanel::setSource(const QString& name, const GradeGrid& grades,
                             const GradeGrid& queryScale, const std::vector<double>& levelGrades) {
  const bool isNew = !m_sources.contains(name);
  m_sources[name] = Source{grades, queryScale, levelGrades};
  if (isNew) {
    refillCombos();
    if (m_a->currentIndex() < 0 || m_a->currentText().isEmpty()) setSourceA(name);
  }
  refresh();
}

void HeatmapPanel::removeSource(const QString& name) {
  m_sources.remove(name);
  refillCombos();
  refresh();
}

void HeatmapPanel::renameSource(const QString& from, const QString& to) {
  if (from == to || !m_sources.contains(from)) return;
  const bool wasA = m_a->currentText() == from, wasB = m_b->currentData().toString() == from;
  m_sources[to] = m_sources.take(from);
  refillCombos();
  m_updating = true;
  if (wasA) setSourceA(to);
  if (wasB) setSourceB(to);
  m_updating = false;
  refresh();
}

void HeatmapPanel::refillCombos() {
  m_updating = true;
  const QString a = m_a->currentText(), b = m_b->currentData().toString();
  m_a->clear();
  m_b->clear();
  m_b->addItem(tr("(none)"), QString());
  for (const QString& n : m_sources.keys()) {
    m_a->addItem(n);
    m_b->addItem(n, n);
  }
  int ia = m_a->findText(a);
  m_a->setCurrentIndex(ia >= 0 ? ia : (m_a->count() ? 0 : -1));
  int ib = m_b->findData(b);
  m_b->setCurrentIndex(ib >= 0 ? ib : 0);
  m_updating = false;
}

const GradeGrid* HeatmapPanel::grid(const QString& source) const {
  auto it = m_sources.find(source);
  if (it == m_sources.end()) return nullptr;
  const GradeGrid& g =
      m_quantity->currentData().toInt() == QueryScale ? it->queryScale : it->grades;
  return g.empty() ? nullptr : &g;
}

void HeatmapPanel::setQuantity(Quantity q) {
  m_quantity->setCurrentIndex(m_quantity->findData(int(q)));
}
void HeatmapPanel::setSourceA(const QString& name) {
  m_a->setCurrentIndex(m_a->findText(name));
}
void HeatmapPanel::setSourceB(const QString& name) {
  int i = m_b->findData(name);
  m_b->setCurrentIndex(i < 0 ? 0 : i);
}
void HeatmapPanel::setHead(int head) {
  int i = m_head->findData(head);
  if (i >= 0) m_head->setCurrentIndex(i);
}

QString HeatmapPanel::sourceA() const {
  return m_a->currentText();
}

QString HeatmapPanel::statusText() const {
  return m_status->text();
}

HeatmapPanel::Quantity HeatmapPanel::quantity() const {
  return m_quantity->currentData().toInt() == QueryScale ? QueryScale : Grades;
}

void HeatmapPanel::refresh() {
  // A source without the chosen quantity shows the one it holds, and says so: a run with query
  // scale and no graded attention opens on exp(q_τ), not on an empty map.
  QString switched;
  if (const auto it = m_sources.find(m_a->currentText()); it != m_sources.end()) {
    const bool wantScale = quantity() == QueryScale;
    const GradeGrid& wanted = wantScale ? it->queryScale : it->grades;
    const GradeGrid& held = wantScale ? it->grades : it->queryScale;
    if (wanted.empty() && !held.empty()) {
      m_updating = true;
      setQuantity(wantScale ? Grades : QueryScale);
      m_updating = false;
      switched = wantScale ? tr("A has no exp(q_τ) (model.query_scale off): showing q. ")
                           : tr("A has no q (grading.attention off): showing exp(q_τ). ");
    }
  }
  const bool scale = quantity() == QueryScale;
  const QString title = scale ? QStringLiteral("exp(q_τ)") : QStringLiteral("q");
  const GradeGrid* a = grid(m_a->currentText());
  const QString bName = m_b->currentData().toString();
  const GradeGrid* b = bName.isEmpty() ? nullptr : grid(bName);

  // Head choices follow the shape of A.
  m_updating = true;
  const int head = m_head->currentData().isValid() ? m_head->currentData().toInt() : -1;
  const int heads = a ? a->heads : 0;
  if (m_head->count() != heads + 1) {
    m_head->clear();
    m_head->addItem(tr("mean over heads"), -1);
    for (int h = 0; h < heads; ++h) m_head->addItem(tr("head %1").arg(h), h);
    int i = m_head->findData(head);
    m_head->setCurrentIndex(i < 0 ? 0 : i);
  }
  m_updating = false;
  const int h = m_head->currentData().toInt();

  if (!a) {
    m_heatmap->setData({});
    m_status->setText(m_sources.isEmpty()
                          ? tr("No sources.")
                          : tr("%1 has no %2 (the run has %3 off).")
                                .arg(m_a->currentText(), title,
                                     scale ? tr("model.query_scale") : tr("grading.attention")));
    return;
  }
  if (b && !a->sameShape(*b)) {
    m_heatmap->setData({});
    m_status->setText(tr("A is %1×%2×%3 but B is %4×%5×%6 (layers × heads × planes); pick "
                         "checkpoints of the same shape.")
                          .arg(a->layers)
                          .arg(a->heads)
                          .arg(a->planes)
                          .arg(b->layers)
                          .arg(b->heads)
                          .arg(b->planes));
    return;
  }
  const QString headText = h < 0 ? tr("mean over %1 heads").arg(a->heads) : tr("head %1").arg(h);
  if (b) {
    HeatmapData d = layerPlaneView(difference(*a, *b), h, title + QStringLiteral(" A−B"));
    d.title = tr("%1: %2 − %3, %4").arg(title, m_a->currentText(), bName, headText);
    m_heatmap->setData(d, HeatmapWidget::Scale::Diverging);
  } else {
    HeatmapData d = layerPlaneView(*a, h, title);
    d.title = tr("%1: %2, %3").arg(title, m_a->currentText(), headText);
    m_heatmap->setData(d, HeatmapWidget::Scale::Sequential);
  }
  QString levels;
  const auto src = m_sources.find(m_a->currentText());
  if (src != m_sources.end() && !src->levelGrades.empty()) {
    // Level-constant grades: each run of equal values is one level ("3 ×32").
    QStringList runs;
    const auto& v = src->levelGrades;
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j < v.size() && v[j] == v[i]) ++j;
      runs << QStringLiteral("%1 ×%2").arg(v[i], 0, 'g', 4).arg(j - i);
      i = j;
    }
    // Per-coordinate grades (a ladder arm: up to d distinct values) would run off the panel as a
    // list: past a few levels the line gives their count and range (the heatmap holds the rest).
    if (runs.size() <= kMaxListedLevels) {
      levels = tr(" MLGE level grades of A: %1.").arg(runs.join(QStringLiteral(", ")));
    } else {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      levels = tr(" MLGE grades of A: %1 coordinates in %2 runs of equal grade, %3 … %4.")
                   .arg(v.size())
                   .arg(runs.size())
                   .arg(*lo, 0, 'g', 4)
                   .arg(*hi, 0, 'g', 4);
    }
  }
  m_status->setText(
      switched +
      tr("%1 layers × %2 heads × %3 planes; range %4 … %5. Hover a cell for its value.")
          .arg(a->layers)
          .arg(a->heads)
          .arg(a->planes)
          .arg(m_heatmap->rangeLow(), 0, 'g', 4)
          .arg(m_heatmap->rangeHigh(), 0, 'g', 4) +
      levels);
}

}  // namespace gllm::gui
