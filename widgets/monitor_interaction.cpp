// MonitorPanel interaction: the hover readout (step, tokens and each visible curve's value), zoom
// and pan with reset, and per-run show/hide from the Runs menu.
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLogValueAxis>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QToolButton>
#include <QValueAxis>
#include <QWheelEvent>
#include <cmath>

#include "widgets/monitor_panel.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

void MonitorPanel::buildInteraction(QLayout* layout) {
  auto* row = new QHBoxLayout;
  auto* runs = new QToolButton(this);
  runs->setObjectName(QStringLiteral("monitorRuns"));
  runs->setText(tr("Runs"));
  runs->setToolTip(tr("Show or hide each run's curves"));
  runs->setPopupMode(QToolButton::InstantPopup);
  m_runsMenu = new QMenu(runs);
  runs->setMenu(m_runsMenu);
  connect(m_runsMenu, &QMenu::aboutToShow, this, &MonitorPanel::fillRunsMenu);
  auto* reset = new QPushButton(tr("Reset zoom"), this);
  reset->setObjectName(QStringLiteral("resetZoom"));
  reset->setToolTip(
      tr("Drag a rectangle to zoom, Ctrl+wheel to zoom, Shift+drag to pan; this "
         "fits every chart to its data again"));
  connect(reset, &QPushButton::clicked, this, &MonitorPanel::resetZoom);
  m_readout = new QLabel(this);
  m_readout->setObjectName(QStringLiteral("hint"));
  // A long readout is cut at the panel's edge rather than widening the dock.
  m_readout->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_readout->setMinimumHeight(m_readout->fontMetrics().height());
  row->addWidget(runs);
  row->addWidget(reset);
  row->addSpacing(8);
  row->addWidget(m_readout, 1);
  if (auto* box = qobject_cast<QBoxLayout*>(layout)) box->addLayout(row);
}

void MonitorPanel::fillRunsMenu() {
  m_runsMenu->clear();
  for (const QString& run : m_store.runs()) {
    const QString note = m_notes.value(run);
    QAction* a = m_runsMenu->addAction(note.isEmpty() ? run : run + QStringLiteral("  — ") + note);
    a->setCheckable(true);
    a->setChecked(runVisible(run));
    const QString folder = m_folders.value(run);
    if (!folder.isEmpty()) a->setToolTip(folder);
    connect(a, &QAction::toggled, this, [this, run](bool on) { setRunVisible(run, on); });
  }
  if (m_store.runs().isEmpty()) m_runsMenu->addAction(tr("(no runs yet)"))->setEnabled(false);
}

void MonitorPanel::setRunVisible(const QString& run, bool on) {
  if (on == runVisible(run)) return;
  if (on)
    m_hiddenRuns.remove(run);
  else
    m_hiddenRuns.insert(run);
  invalidate();
}

MonitorPanel::Chart* MonitorPanel::chartOfView(QObject* viewport) {
  for (Chart& c : m_charts)
    if (c.view && c.view->viewport() == viewport) return &c;
  return nullptr;
}

void MonitorPanel::watchAxis(Chart& c, QAbstractAxis* axis) {
  const QString key = c.metrics.first();
  auto changed = [this, key] {
    if (!m_settingRange) m_zoomed.insert(key);  // the user zoomed (rubber band) or panned
  };
  if (auto* v = qobject_cast<QValueAxis*>(axis))
    connect(v, &QValueAxis::rangeChanged, this, changed);
  else if (auto* l = qobject_cast<QLogValueAxis*>(axis))
    connect(l, &QLogValueAxis::rangeChanged, this, changed);
}

void MonitorPanel::zoomChart(const QString& metric, double factor) {
  for (Chart& c : m_charts)
    if (c.metrics.contains(metric)) {
      c.chart->zoom(factor);
      m_zoomed.insert(c.metrics.first());
    }
}

void MonitorPanel::panChart(const QString& metric, double dx, double dy) {
  for (Chart& c : m_charts)
    if (c.metrics.contains(metric)) {
      c.chart->scroll(dx, dy);
      m_zoomed.insert(c.metrics.first());
    }
}

void MonitorPanel::resetZoom() {
  m_zoomed.clear();
  for (Chart& c : m_charts) {
    m_settingRange = true;
    c.chart->zoomReset();
    m_settingRange = false;
  }
  invalidate();
  redrawNow();
}

bool MonitorPanel::eventFilter(QObject* watched, QEvent* event) {
  Chart* c = chartOfView(watched);
  if (!c) return QWidget::eventFilter(watched, event);
  switch (event->type()) {
    case QEvent::MouseMove: {
      auto* e = static_cast<QMouseEvent*>(event);
      if (m_panning) {
        const QPoint d = e->position().toPoint() - m_panFrom;
        m_panFrom = e->position().toPoint();
        panChart(c->metrics.first(), -d.x(), d.y());
        return true;
      }
      const QPointF scene = c->view->mapToScene(e->position().toPoint());
      const QPointF value = c->chart->mapToValue(c->chart->mapFromScene(scene));
      if (c->chart->plotArea().contains(c->chart->mapFromScene(scene))) {
        const QString full = readoutAt(c->metrics.first(), value.x());
        m_readout->setText(fitReadout(full, m_readout->fontMetrics(), m_readout->width()));
        m_readout->setToolTip(full);
      }
      break;
    }
    case QEvent::MouseButtonPress: {
      auto* e = static_cast<QMouseEvent*>(event);
      if (e->button() == Qt::MiddleButton ||
          (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier))) {
        m_panning = true;
        m_panFrom = e->position().toPoint();
        return true;
      }
      break;
    }
    case QEvent::MouseButtonRelease:
      if (m_panning) {
        m_panning = false;
        return true;
      }
      break;
    case QEvent::Wheel: {
      auto* e = static_cast<QWheelEvent*>(event);
      if (e->modifiers() & Qt::ControlModifier) {
        zoomChart(c->metrics.first(), e->angleDelta().y() > 0 ? 1.25 : 0.8);
        return true;
      }
      break;
    }
    case QEvent::Leave:
      m_readout->clear();
      break;
    case QEvent::Resize:
      fitAxisTitles(*c);
      break;
    default:
      break;
  }
  return QWidget::eventFilter(watched, event);
}

QString MonitorPanel::readoutAt(const QString& metric, double x) const {
  const Chart* chart = nullptr;
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) chart = &c;
  if (!chart) return {};
  QStringList values;
  double step = NAN, tokens = NAN, best = INFINITY;
  for (const QString& m : chart->metrics) {
    for (const QString& run : m_store.runs()) {
      if (!runVisible(run)) continue;
      const auto& pts = m_store.points(run, m);
      if (pts.empty()) continue;
      size_t nearest = 0;
      for (size_t i = 1; i < pts.size(); ++i)
        if (std::fabs(xOf(pts[i], m_xAxis) - x) < std::fabs(xOf(pts[nearest], m_xAxis) - x))
          nearest = i;
      const double dist = std::fabs(xOf(pts[nearest], m_xAxis) - x);
      if (dist < best) {
        best = dist;
        step = pts[nearest].step;
        tokens = pts[nearest].tokens;
      }
      const std::vector<double> drawn = m_store.drawnValues(run, m);
      const double v = nearest < drawn.size() ? drawn[nearest] : pts[nearest].value;
      // The value first: a long run name is what gets elided, never the number.
      values << QStringLiteral("%1 %2%3").arg(
          formatNumber(v, 5), run,
          chart->metrics.size() > 1 && m != chart->metrics.first() ? QStringLiteral(" (%1)").arg(m)
                                                                   : QString());
    }
  }
  if (values.isEmpty()) return {};
  return tr("step %1 · tokens %2 — %3")
      .arg(QString::number(step, 'f', 0), QString::number(qlonglong(tokens)),
           values.join(QStringLiteral(" · ")));
}

QString MonitorPanel::readoutText() const {
  return m_readout->text();
}

}  // namespace gllm::gui
