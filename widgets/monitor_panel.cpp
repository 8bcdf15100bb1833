// MonitorPanel implementation: data are appended to per-run vectors; a single-shot 40 ms timer
// refreshes long-lived series with decimated points (QXYSeries::replace), one redraw per burst.
#include "widgets/monitor_panel.h"

#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QPainter>
#include <QSaveFile>
#include <QSlider>
#include <QTextStream>
#include <QTimer>
#include <QToolButton>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#ifdef GLLM_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

#include "engine/io/error.h"
#include "engine/train/run_store.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
const std::vector<MetricPoint> kNoPoints;

QString metricLabel(const QString& m) {
  if (m == QLatin1String("loss")) return QObject::tr("train loss");
  if (m == QLatin1String("val_bpb")) return QObject::tr("val BPB");
  if (m == QLatin1String("heldout_bpb")) return QObject::tr("held-out BPB");
  if (m == QLatin1String("tokens_per_s")) return QObject::tr("tokens/s");
  if (m == QLatin1String("peak_mem_mib")) return QObject::tr("peak MiB");
  return m;
}
}  // namespace

MonitorPanel::MonitorPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  m_xCombo = new QComboBox(this);
  m_xCombo->addItem(tr("step"), int(XAxis::Step));
  m_xCombo->addItem(tr("tokens"), int(XAxis::Tokens));
  m_xCombo->addItem(tr("FLOPs"), int(XAxis::Flops));
  m_xCombo->addItem(tr("wall time (s)"), int(XAxis::Wall));
  m_logX = new QCheckBox(tr("log x"), this);
  m_logY = new QCheckBox(tr("log y"), this);
  m_showRaw = new QCheckBox(tr("raw"), this);
  m_showRaw->setChecked(true);
  m_smoothSlider = new QSlider(Qt::Horizontal, this);
  m_smoothSlider->setRange(0, 99);
  m_smoothSlider->setValue(int(m_smoothing * 100));
  m_smoothSlider->setMaximumWidth(120);
  m_smoothLabel = new QLabel(this);
  m_smoothLabel->setMinimumWidth(32);
  // One Export button with a menu keeps the bar narrow enough for a ~560 px dock.
  auto* exportButton = new QToolButton(this);
  exportButton->setObjectName(QStringLiteral("exportCharts"));
  exportButton->setIcon(QIcon(QStringLiteral(":/icons/export.svg")));
  exportButton->setText(tr("Export"));
  exportButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  exportButton->setPopupMode(QToolButton::InstantPopup);
  auto* exportMenu = new QMenu(exportButton);
  QAction* png = exportMenu->addAction(tr("Charts as PNG…"));
  QAction* svg = exportMenu->addAction(tr("Charts as SVG…"));
  QAction* csv = exportMenu->addAction(tr("Data as CSV…"));
  exportButton->setMenu(exportMenu);
  bar->addWidget(new QLabel(tr("x axis"), this));
  bar->addWidget(m_xCombo);
  bar->addWidget(m_logX);
  bar->addWidget(m_logY);
  bar->addSpacing(12);
  bar->addWidget(m_showRaw);
  bar->addWidget(new QLabel(tr("EMA"), this));
  bar->addWidget(m_smoothSlider);
  bar->addWidget(m_smoothLabel);
  bar->addStretch(1);
  bar->addWidget(exportButton);
  layout->addLayout(bar);

  m_chartArea = new QWidget(this);
  auto* grid = new QGridLayout(m_chartArea);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  layout->addWidget(m_chartArea, 1);
  struct Def {
    QString title;
    QStringList metrics;
    QString y;
  };
  const Def defs[] = {{tr("Training loss"), {QStringLiteral("loss")}, tr("nats/token")},
                      {tr("Bits per byte"), {QStringLiteral("val_bpb"), QStringLiteral("heldout_bpb")}, tr("BPB")},
                      {tr("Throughput"), {QStringLiteral("tokens_per_s")}, tr("tokens/s")},
                      {tr("Peak memory"), {QStringLiteral("peak_mem_mib")}, tr("MiB")}};
  int i = 0;
  for (const Def& d : defs) {
    Chart c;
    c.title = d.title;
    c.metrics = d.metrics;
    c.yTitle = d.y;
    c.chart = new QChart;
    c.chart->setTitle(d.title);
    c.chart->setMargins(QMargins(4, 4, 4, 4));
    c.chart->setBackgroundRoundness(4);
    c.chart->legend()->setAlignment(Qt::AlignBottom);  // always shown: showing it again would show hidden markers
    c.chart->legend()->setFont(QFont(font().family(), 8));
    QFont tf = c.chart->titleFont();
    tf.setBold(true);
    tf.setPointSizeF(9.5);
    c.chart->setTitleFont(tf);
    c.view = new QChartView(c.chart, m_chartArea);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumSize(240, 180);
    grid->addWidget(c.view, i / 2, i % 2);
    m_charts.push_back(c);
    ++i;
  }

  m_timer = new QTimer(this);
  m_timer->setSingleShot(true);
  m_timer->setInterval(40);  // at most 25 redraws per second
  connect(m_timer, &QTimer::timeout, this, &MonitorPanel::redrawNow);
  connect(m_xCombo, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this] { setXAxis(XAxis(m_xCombo->currentData().toInt())); });
  connect(m_logY, &QCheckBox::toggled, this, &MonitorPanel::setLogY);
  connect(m_logX, &QCheckBox::toggled, this, &MonitorPanel::setLogX);
  connect(m_showRaw, &QCheckBox::toggled, this, [this] { invalidate(); });
  connect(m_smoothSlider, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  connect(png, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export charts as PNG"), QStringLiteral("monitor.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) exportPng(f);
  });
  connect(svg, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export charts as SVG"), QStringLiteral("monitor.svg"), tr("SVG (*.svg)"));
    if (!f.isEmpty()) exportSvg(f);
  });
  connect(csv, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export data as CSV"), QStringLiteral("monitor.csv"), tr("CSV (*.csv)"));
    if (!f.isEmpty()) exportCsv(f);
  });
  setSmoothing(m_smoothing);
  redrawNow();
}

void MonitorPanel::addPoint(const QString& run, const QString& metric, const MetricPoint& p) {
  if (!m_runOrder.contains(run)) m_runOrder << run;
  MetricPoint q = p;
  // Evaluation records carry no FLOPs: place them with the run's FLOPs per token so far.
  if (std::isfinite(q.flops) && q.tokens > 0) m_flopsPerToken[run] = q.flops / q.tokens;
  else if (!std::isfinite(q.flops) && m_flopsPerToken.contains(run)) q.flops = m_flopsPerToken[run] * q.tokens;
  m_data[run][metric].push_back(q);
  scheduleRedraw();
}

QString MonitorPanel::loadMetricsFile(const QString& run, const QString& path) {
  MetricsFile mf;
  if (!QFile::exists(path)) return tr("%1 does not exist; open a run folder that has a metrics.jsonl").arg(path);
  try {
    mf = read_metrics(ss(path));
  } catch (const Error& e) {
    return qs(e.what());
  }
  m_data.remove(run);
  m_ema.remove(run);
  if (!m_runOrder.contains(run)) m_runOrder << run;
  auto num = [](const nlohmann::json& r, const char* k) {
    auto it = r.find(k);
    return it != r.end() && it->is_number() ? it->get<double>() : NAN;
  };
  double flopsPerToken = NAN;
  for (const auto& r : mf.records) {
    const double f = num(r, "flops"), t = num(r, "tokens");
    if (std::isfinite(f) && t > 0) flopsPerToken = f / t;
  }
  if (std::isfinite(flopsPerToken)) m_flopsPerToken[run] = flopsPerToken;
  for (const auto& r : mf.records) {
    MetricPoint base;
    base.step = num(r, "step");
    base.tokens = num(r, "tokens");
    base.flops = num(r, "flops");
    if (std::isnan(base.flops) && std::isfinite(flopsPerToken)) base.flops = flopsPerToken * base.tokens;
    base.wall = num(r, "wall_s");
    for (const QString& key : metricKeys()) {
      const double v = num(r, key.toUtf8().constData());
      if (std::isnan(v)) continue;
      MetricPoint p = base;
      p.value = v;
      m_data[run][key].push_back(p);
    }
  }
  invalidate();
  return mf.torn_tail ? qs(mf.warning) : QString();
}

void MonitorPanel::removeRun(const QString& run) {
  m_data.remove(run);
  m_ema.remove(run);
  m_runOrder.removeAll(run);
  invalidate();
}

void MonitorPanel::clear() {
  m_data.clear();
  m_ema.clear();
  m_runOrder.clear();
  invalidate();
}

QStringList MonitorPanel::runs() const { return m_runOrder; }

const std::vector<MetricPoint>& MonitorPanel::points(const QString& run, const QString& metric) const {
  auto r = m_data.find(run);
  if (r == m_data.end()) return kNoPoints;
  auto m = r->find(metric);
  return m == r->end() ? kNoPoints : *m;
}

void MonitorPanel::setXAxis(XAxis x) {
  m_xAxis = x;
  const int i = m_xCombo->findData(int(x));
  if (m_xCombo->currentIndex() != i) m_xCombo->setCurrentIndex(i);
  invalidate();
}

void MonitorPanel::setLogY(bool on) {
  if (m_logY->isChecked() != on) m_logY->setChecked(on);
  invalidate();
}

void MonitorPanel::setLogX(bool on) {
  if (m_logX->isChecked() != on) m_logX->setChecked(on);
  invalidate();
}

void MonitorPanel::setSmoothing(double w) {
  m_smoothing = std::clamp(w, 0.0, 0.999);
  m_smoothLabel->setText(QString::number(m_smoothing, 'f', 2));
  const int s = int(std::lround(m_smoothing * 100));
  if (m_smoothSlider->value() != s && s <= 99) m_smoothSlider->setValue(s);
  invalidate();
}

std::vector<double> MonitorPanel::ema(const std::vector<double>& x, double w) {
  std::vector<double> out(x.size());
  double s = 0, wt = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    s = w * s + (1 - w) * x[i];
    wt *= w;
    out[i] = w > 0 ? s / (1 - wt) : x[i];
  }
  return out;
}

const std::vector<double>& MonitorPanel::emaOf(const QString& run, const QString& metric) const {
  const auto& pts = points(run, metric);
  EmaCache& c = m_ema[run][metric];
  if (c.w != m_smoothing || c.out.size() > pts.size()) c = EmaCache{m_smoothing, 0, 1, {}};
  // The same recurrence as ema(), continued from the cached state over the new points only.
  const double w = c.w;
  c.out.reserve(pts.size());
  for (size_t i = c.out.size(); i < pts.size(); ++i) {
    c.s = w * c.s + (1 - w) * pts[i].value;
    c.wt *= w;
    c.out.push_back(w > 0 ? c.s / (1 - c.wt) : pts[i].value);
  }
  return c.out;
}

std::vector<double> MonitorPanel::smoothed(const QString& run, const QString& metric) const { return emaOf(run, metric); }

QList<QPointF> MonitorPanel::decimate(const QList<QPointF>& pts, int buckets, double x0, double x1, bool logX) {
  if (buckets < 1 || pts.size() <= 2 * qsizetype(buckets) || !(x1 > x0)) return pts;
  QList<QPointF> out;
  out.reserve(2 * buckets + 3);
  const double scale = buckets / (x1 - x0);
  qsizetype lo = -1, hi = -1;  // indices of the current bucket's minimum and maximum
  long long bucket = std::numeric_limits<long long>::min();
  auto flush = [&] {
    if (lo < 0) return;
    if (lo == hi) out.append(pts[lo]);
    else if (lo < hi) out << pts[lo] << pts[hi];
    else out << pts[hi] << pts[lo];
  };
  for (qsizetype i = 0; i < pts.size(); ++i) {
    const double x = logX ? std::log10(pts[i].x()) : pts[i].x();
    const long long b = (long long)std::floor(std::clamp((x - x0) * scale, -1.0, double(buckets)));
    if (b != bucket) {
      flush();
      bucket = b;
      lo = hi = i;
      continue;
    }
    if (pts[i].y() < pts[lo].y()) lo = i;
    if (pts[i].y() > pts[hi].y()) hi = i;
  }
  flush();
  if (out.last() != pts.last()) out.append(pts.last());  // the newest value is always drawn exactly
  return out;
}

void MonitorPanel::scheduleRedraw() {
  if (!m_timer->isActive()) m_timer->start();
}

void MonitorPanel::invalidate() {
  ++m_generation;
  scheduleRedraw();
}

void MonitorPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  scheduleRedraw();  // charts whose width changed decimate again
}

bool MonitorPanel::redrawPending() const { return m_timer->isActive(); }

double MonitorPanel::xOf(const MetricPoint& p) const {
  switch (m_xAxis) {
    case XAxis::Tokens: return p.tokens;
    case XAxis::Flops: return p.flops;
    case XAxis::Wall: return p.wall;
    default: return p.step;
  }
}

QColor MonitorPanel::runColor(const QString& run) const { return seriesColor(std::max(0, int(m_runOrder.indexOf(run)))); }

void MonitorPanel::redrawNow() {
  m_timer->stop();
  for (Chart& c : m_charts) updateChart(c);
  ++m_redraws;
}

void MonitorPanel::ensureAxes(Chart& c, bool logX, bool logY) {
  QFont f = font();
  f.setPointSizeF(8);
  f.setBold(false);
  auto make = [&](bool log, bool horizontal) -> QAbstractAxis* {
    QAbstractAxis* a;
    if (log) {
      auto* l = new QLogValueAxis;
      l->setBase(10);
      l->setLabelFormat(QStringLiteral("%.3g"));
      if (!horizontal) l->setMinorTickCount(8);
      a = l;
    } else {
      auto* v = new QValueAxis;
      v->setTickCount(5);  // ticks and labels are set with each range (applyNiceTicks)
      a = v;
    }
    a->setTitleFont(f);
    a->setLabelsFont(f);
    if (!horizontal) a->setTitleText(c.yTitle);
    return a;
  };
  auto swap = [&](QAbstractAxis*& slot, bool log, bool horizontal) {
    const bool isLog = slot && slot->type() == QAbstractAxis::AxisTypeLogValue;
    if (slot && isLog == log) return;
    QAbstractAxis* a = make(log, horizontal);
    c.chart->addAxis(a, horizontal ? Qt::AlignBottom : Qt::AlignLeft);
    for (const Curve& cv : c.curves) {
      for (QLineSeries* s : {cv.raw, cv.main}) {
        if (slot) s->detachAxis(slot);
        s->attachAxis(a);
      }
    }
    if (slot) {
      c.chart->removeAxis(slot);
      delete slot;
    }
    slot = a;
  };
  swap(c.ax, logX, true);
  swap(c.ay, logY, false);
}

void MonitorPanel::updateChart(Chart& c) {
  const bool logX = m_logX->isChecked(), logY = m_logY->isChecked(), raw = m_showRaw->isChecked();
  const bool rawShown = raw && m_smoothing > 0;
  const int width = c.view->width();
  size_t total = 0;
  for (const QString& metric : c.metrics)
    for (const QString& run : m_runOrder) total += points(run, metric).size();
  if (c.drawnGeneration == m_generation && c.drawnPoints == total && c.drawnWidth == width && c.ax) return;
  c.drawnGeneration = m_generation;
  c.drawnPoints = total;
  c.drawnWidth = width;

  ensureAxes(c, logX, logY);
  // Series of runs or metrics that are gone.
  for (auto it = c.curves.begin(); it != c.curves.end();) {
    const QString run = it.key().section('\n', 0, 0), metric = it.key().section('\n', 1);
    if (!points(run, metric).empty()) {
      ++it;
      continue;
    }
    for (QLineSeries* s : {it->raw, it->main}) {
      c.chart->removeSeries(s);
      delete s;
    }
    it = c.curves.erase(it);
  }

  struct Pending {
    Curve* curve;
    QList<QPointF> rawPts, emaPts;
    bool smooth;  // false for evaluations: a few exact points, drawn as they are (no EMA lag)
  };
  std::vector<Pending> pending;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (int mi = 0; mi < c.metrics.size(); ++mi) {
    const QString& metric = c.metrics[mi];
    for (const QString& run : m_runOrder) {
      const auto& pts = points(run, metric);
      if (pts.empty()) continue;
      const QString key = run + '\n' + metric;
      auto it = c.curves.find(key);
      if (it == c.curves.end()) {
        // A new run or metric: its two series are made once and kept.
        // A chart's second metric (held-out beside validation BPB) is dashed and darker, with larger
        // marks: it is often a single point, where a dash alone does not show.
        const QColor col = mi == 0 ? runColor(run) : runColor(run).darker(170);
        const Qt::PenStyle style = mi == 0 ? Qt::SolidLine : Qt::DashLine;
        const QString name = c.metrics.size() > 1 ? run + QStringLiteral(" · ") + metricLabel(metric) : run;
        Curve cv;
        cv.raw = new QLineSeries;
        cv.raw->setName(name + tr(" (raw)"));
        QColor light = col;
        light.setAlpha(70);
        cv.raw->setPen(QPen(light, 1.0, style));
        cv.main = new QLineSeries;
        cv.main->setName(name);
        cv.main->setPen(QPen(col, 2.0, style));
        // Evaluations are sparse (a held-out BPB is often one point at the end): mark every point.
        if (metric.endsWith(QStringLiteral("_bpb"))) cv.main->setPointsVisible(true);
        for (QLineSeries* s : {cv.raw, cv.main}) {
          c.chart->addSeries(s);
          s->attachAxis(c.ax);
          s->attachAxis(c.ay);
        }
        if (mi > 0) cv.main->setMarkerSize(cv.main->markerSize() * 1.6);  // after the chart's theme is applied
        const auto markers = c.chart->legend()->markers(cv.raw);  // the legend names the smoothed curve only
        for (QLegendMarker* m : markers) m->setVisible(false);
        it = c.curves.insert(key, cv);
      }
      const std::vector<double>& sm = emaOf(run, metric);
      // Evaluations (val/held-out BPB) are sparse, exact measurements: drawn raw, marked, unsmoothed.
      const bool evaluation = metric.endsWith(QStringLiteral("_bpb"));
      Pending p{&it.value(), {}, {}, m_smoothing > 0 && !evaluation};
      p.rawPts.reserve(qsizetype(pts.size()));
      p.emaPts.reserve(qsizetype(pts.size()));
      for (size_t i = 0; i < pts.size(); ++i) {
        const double x = xOf(pts[i]);
        if (!std::isfinite(x) || (logX && x <= 0)) continue;
        const double y = pts[i].value, ys = sm[i];
        if (std::isfinite(y) && !(logY && y <= 0)) {
          p.rawPts.append(QPointF(x, y));
          if (raw || evaluation) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
        }
        if (!evaluation && std::isfinite(ys) && !(logY && ys <= 0)) {
          p.emaPts.append(QPointF(x, ys));
          ymin = std::min(ymin, ys);
          ymax = std::max(ymax, ys);
        }
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
      }
      pending.push_back(std::move(p));
    }
  }
  if (!std::isfinite(xmin)) xmin = logX ? 1 : 0, xmax = logX ? 10 : 1;
  if (!std::isfinite(ymin)) ymin = logY ? 1 : 0, ymax = logY ? 10 : 1;
  if (xmax <= xmin) xmax = xmin + (logX ? xmin : 1);
  // A constant metric (its EMA differs from the values only by rounding) gets the same ±5 % band.
  if (spansOnlyRounding(ymin, ymax)) {
    const double pad = std::fabs(ymin) > 0 ? std::fabs(ymin) * 0.05 : 1;
    ymin = logY ? ymin / 1.1 : ymin - pad;
    ymax = logY ? ymax * 1.1 : ymax + pad;
  }

  // About one bucket per pixel of the plot (the view's width before the first layout).
  const int plotWidth = int(c.chart->plotArea().width());
  const int buckets = std::max(64, plotWidth > 32 ? plotWidth : width - 60);
  const double x0 = logX ? std::log10(xmin) : xmin, x1 = logX ? std::log10(xmax) : xmax;
  for (Pending& p : pending) {
    Curve& cv = *p.curve;
    const bool rawTwin = rawShown && p.smooth;  // an unsmoothed curve is its own raw curve
    if (cv.raw->isVisible() != rawTwin) {
      cv.raw->setVisible(rawTwin);
      const auto markers = c.chart->legend()->markers(cv.raw);  // showing a series shows its marker
      for (QLegendMarker* m : markers) m->setVisible(false);
    }
    cv.raw->replace(rawTwin ? decimate(p.rawPts, buckets, x0, x1, logX) : QList<QPointF>());
    cv.main->replace(decimate(p.smooth ? p.emaPts : p.rawPts, buckets, x0, x1, logX));
  }

  if (auto* a = qobject_cast<QLogValueAxis*>(c.ax)) {
    a->setRange(xmin, xmax);
  } else if (auto* v = qobject_cast<QValueAxis*>(c.ax)) {
    // Steps 1…400 tick at 100, 200, 300, 400; labels such as 800000 need about 80 px each.
    applyNiceTicks(v, xmin, xmax, ticksThatFit(c.chart->plotArea().width(), 80));
  }
  if (auto* a = qobject_cast<QLogValueAxis*>(c.ay)) {
    a->setRange(ymin, ymax);
  } else if (auto* v = qobject_cast<QValueAxis*>(c.ay)) {
    const double pad = (ymax - ymin) * 0.04;
    applyNiceTicks(v, ymin - pad, ymax + pad, ticksThatFit(c.chart->plotArea().height(), 28));
  }
  if (c.ax->titleText() != m_xCombo->currentText()) c.ax->setTitleText(m_xCombo->currentText());
}

int MonitorPanel::seriesCount(const QString& metric) const {
  for (const Chart& c : m_charts) {
    if (!c.metrics.contains(metric)) continue;
    int n = 0;
    for (QAbstractSeries* s : c.chart->series()) n += s->isVisible() ? 1 : 0;
    return n;
  }
  return 0;
}

int MonitorPanel::drawnPointCount(const QString& metric) const {
  int n = 0;
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric))
      for (QAbstractSeries* s : c.chart->series())
        if (auto* l = qobject_cast<QLineSeries*>(s); l && l->isVisible()) n += int(l->count());
  return n;
}

QChart* MonitorPanel::chartFor(const QString& metric) const {
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) return c.chart;
  return nullptr;
}

QString MonitorPanel::exportPng(const QString& path) {
  if (m_timer->isActive()) redrawNow();
  QPixmap pix = m_chartArea->grab();
  if (pix.isNull() || !pix.save(path, "PNG")) return tr("could not write %1; check the folder is writable").arg(path);
  return {};
}

QString MonitorPanel::exportSvg(const QString& path) {
#ifdef GLLM_HAVE_QT_SVG
  if (m_timer->isActive()) redrawNow();
  QSvgGenerator gen;
  gen.setFileName(path);
  gen.setSize(m_chartArea->size());
  gen.setViewBox(QRect(QPoint(0, 0), m_chartArea->size()));
  gen.setTitle(tr("GLLM Workbench monitor"));
  gen.setDescription(tr("Training curves: %1").arg(m_runOrder.join(QStringLiteral(", "))));
  QPainter painter;
  if (!painter.begin(&gen)) return tr("could not write %1; check the folder is writable").arg(path);
  m_chartArea->render(&painter);
  painter.end();
  return QFile::exists(path) ? QString() : tr("could not write %1").arg(path);
#else
  Q_UNUSED(path);
  return tr("this build has no Qt Svg; export PNG instead");
#endif
}

QString MonitorPanel::exportCsv(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return tr("could not open %1 for writing").arg(path);
  QTextStream out(&file);
  out << "run,metric,step,tokens,flops,wall_s,value,ema\n";
  auto num = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 12) : QString(); };
  for (const QString& run : m_runOrder) {
    for (const QString& metric : metricKeys()) {
      const auto& pts = points(run, metric);
      const std::vector<double> sm = smoothed(run, metric);
      QString quoted = run;
      if (quoted.contains(',') || quoted.contains('"')) quoted = '"' + quoted.replace('"', QStringLiteral("\"\"")) + '"';
      for (size_t i = 0; i < pts.size(); ++i)
        out << quoted << ',' << metric << ',' << num(pts[i].step) << ',' << num(pts[i].tokens) << ','
            << num(pts[i].flops) << ',' << num(pts[i].wall) << ',' << num(pts[i].value) << ',' << num(sm[i]) << '\n';
    }
  }
  out.flush();
  if (!file.commit()) return tr("could not write %1").arg(path);
  return {};
}

}  // namespace gllm::gui
