// MonitorPanel implementation: the MetricStore holds the data; a single-shot 40 ms timer refreshes
// long-lived series with decimated points (QXYSeries::replace), one redraw per burst.
#include "widgets/monitor_panel.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QSet>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/io/error.h"
#include "engine/train/run_store.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
QString metricLabel(const QString& m) {
  if (m == QLatin1String("loss")) return QObject::tr("train loss");
  if (m == QLatin1String("val_bpb")) return QObject::tr("val BPB");
  if (m == QLatin1String("heldout_bpb")) return QObject::tr("held-out BPB");
  if (m == QLatin1String("tokens_per_s")) return QObject::tr("tokens/s");
  if (m == QLatin1String("peak_mem_mib")) return QObject::tr("peak MiB");
  if (m == QLatin1String("estimate_mem_mib")) return QObject::tr("estimate");
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
  m_smoothSlider->setValue(int(m_store.smoothing() * 100));
  m_smoothSlider->setMaximumWidth(120);
  m_smoothLabel = new QLabel(this);
  m_smoothLabel->setMinimumWidth(32);
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
  bar->addWidget(buildExportButton());
  layout->addLayout(bar);
  buildInteraction(layout);

  m_chartArea = new QWidget(this);
  auto* grid = new QGridLayout(m_chartArea);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  layout->addWidget(m_chartArea, 1);
  // One legend for the four charts, above them in the chart area (so the area's exports carry it),
  // wrapping over its width: a legend per chart elides every name to "lad…" once a few runs share a
  // 330 px chart.
  m_legend = new QLabel(m_chartArea);
  m_legend->setObjectName(QStringLiteral("monitorLegend"));
  m_legend->setWordWrap(true);
  m_legend->setTextFormat(Qt::RichText);
  // Two lines reserved from the start, so the height the Monitor asks of its dock (and the floor
  // other panels leave it) already counts a legend of several runs.
  m_legend->setMinimumHeight(2 * m_legend->fontMetrics().lineSpacing());
  m_legend->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  grid->addWidget(m_legend, 0, 0, 1, 2);
  struct Def {
    QString title;
    QStringList metrics;
    QString y;
  };
  const Def defs[] = {
      {tr("Training loss"), {QStringLiteral("loss")}, tr("nats")},
      {tr("Bits per byte"), {QStringLiteral("val_bpb"), QStringLiteral("heldout_bpb")}, tr("BPB")},
      {tr("Throughput"), {QStringLiteral("tokens_per_s")}, tr("tokens/s")},
      // Measured peak, and dashed the estimate (resident at start + training tensors).
      {tr("Peak memory"),
       {QStringLiteral("peak_mem_mib"), QStringLiteral("estimate_mem_mib")},
       tr("MiB")}};
  int i = 0;
  for (const Def& d : defs) {
    Chart c;
    c.title = d.title;
    c.metrics = d.metrics;
    c.yTitle = d.y;
    c.chart = new QChart;
    c.chart->setTitle(d.title);
    // A strip above the title for the seeds toggle (changing margins later makes Qt Charts elide
    // the axis titles and labels).
    c.chart->setMargins(QMargins(4, 14, 4, 4));
    c.chart->setBackgroundRoundness(4);
    // The chart's own legend is shown only while the chart alone is exported (showChartLegend);
    // on screen the panel's shared legend names the curves.
    c.chart->legend()->setAlignment(Qt::AlignBottom);
    c.chart->legend()->setFont(QFont(font().family(), 8));
    c.chart->legend()->setVisible(false);
    QFont tf = c.chart->titleFont();
    tf.setBold(true);
    tf.setPointSizeF(9.5);
    c.chart->setTitleFont(tf);
    c.view = new QChartView(c.chart, m_chartArea);
    c.view->setRenderHint(QPainter::Antialiasing);
    c.view->setMinimumSize(240, kChartMinHeight);
    c.view->setRubberBand(QChartView::RectangleRubberBand);  // drag a rectangle to zoom
    c.view->viewport()->setMouseTracking(true);              // the hover readout
    c.view->viewport()->installEventFilter(this);
    grid->addWidget(c.view, 1 + i / 2, i % 2);
    // The per-chart seeds toggle sits in the chart's top-right corner (same grid cell, on top).
    c.seeds = new QCheckBox(tr("seeds"), m_chartArea);
    c.seeds->setObjectName(QStringLiteral("seedToggle_") + d.metrics.first());
    c.seeds->setToolTip(
        tr("Show each seed of a seed group instead of the group's mean and band "
           "(runs whose configs differ only in train.seed)"));
    c.seeds->setVisible(false);
    grid->addWidget(c.seeds, 1 + i / 2, i % 2, Qt::AlignTop | Qt::AlignRight);
    m_charts.push_back(c);
    ++i;
  }
  updateSharedLegend();  // no runs yet: says how to get one

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
  for (const Chart& c : m_charts) {
    const QString metric = c.metrics.first();
    connect(c.seeds, &QCheckBox::toggled, this,
            [this, metric](bool on) { setShowSeeds(metric, on); });
  }
  setSmoothing(m_store.smoothing());
  redrawNow();
}

void MonitorPanel::addPoint(const QString& run, const QString& metric, const MetricPoint& p) {
  const bool known = m_store.runs().contains(run);
  m_store.addPoint(run, metric, p);
  if (!known) updateSeedToggles();
  scheduleRedraw();
}

QString MonitorPanel::loadMetricsFile(const QString& run, const QString& path) {
  const LoadedRun data = MetricStore::readMetricsFile(path);
  if (!data.error.isEmpty()) return data.error;
  setRun(run, data);
  return data.warning;
}

namespace {
int seedOf(const nlohmann::json& config) {
  if (config.is_object() && config.contains("train") && config["train"].is_object() &&
      config["train"].contains("seed") && config["train"]["seed"].is_number_integer())
    return config["train"]["seed"].get<int>();
  return -1;
}
}  // namespace

void MonitorPanel::setRun(const QString& run, const LoadedRun& data) {
  if (seedOf(data.config) >= 0) m_seeds[run] = seedOf(data.config);
  m_store.setRun(run, data);
  updateSeedToggles();
  invalidate();
}

void MonitorPanel::setRunConfig(const QString& run, const nlohmann::json& config) {
  if (seedOf(config) >= 0) m_seeds[run] = seedOf(config);
  m_store.setRunConfig(run, config);
  updateSeedToggles();
  invalidate();
}

void MonitorPanel::removeRun(const QString& run) {
  m_store.removeRun(run);
  updateSeedToggles();
  invalidate();
}

void MonitorPanel::clear() {
  m_store.clear();
  updateSeedToggles();
  invalidate();
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
  m_store.setSmoothing(w);
  m_smoothLabel->setText(QString::number(m_store.smoothing(), 'f', 2));
  const int s = int(std::lround(m_store.smoothing() * 100));
  if (m_smoothSlider->value() != s && s <= 99) m_smoothSlider->setValue(s);
  invalidate();
}

void MonitorPanel::setShowSeeds(const QString& metric, bool on) {
  for (Chart& c : m_charts) {
    if (!c.metrics.contains(metric)) continue;
    if (c.seeds->isChecked() != on) c.seeds->setChecked(on);  // re-enters once through toggled
  }
  invalidate();
}

bool MonitorPanel::showsSeeds(const QString& metric) const {
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) return c.seeds->isChecked();
  return false;
}

QCheckBox* MonitorPanel::seedToggle(const QString& metric) const {
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) return c.seeds;
  return nullptr;
}

void MonitorPanel::updateSeedToggles() {
  const bool any = m_store.hasSeedGroups();
  for (Chart& c : m_charts)
    if (c.seeds->isHidden() == any) c.seeds->setHidden(!any);
}

void MonitorPanel::scheduleRedraw() {
  if (!m_timer->isActive()) m_timer->start();
}

void MonitorPanel::invalidate() {
  ++m_viewGeneration;
  scheduleRedraw();
}

void MonitorPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  scheduleRedraw();  // charts whose width changed decimate again
}

bool MonitorPanel::redrawPending() const {
  return m_timer->isActive();
}

void MonitorPanel::redrawNow() {
  m_timer->stop();
  for (Chart& c : m_charts) updateChart(c);
  updateSharedLegend();
  ++m_redraws;
}

void MonitorPanel::updateChart(Chart& c) {
  const bool logX = m_logX->isChecked(), logY = m_logY->isChecked(), raw = m_showRaw->isChecked();
  const double smoothing = m_store.smoothing();
  const bool rawShown = raw && smoothing > 0;
  const bool showSeeds = c.seeds->isChecked();
  const int width = c.view->width();
  const size_t total = m_store.pointCount(c.metrics);
  if (c.drawnData == m_store.generation() && c.drawnView == m_viewGeneration &&
      c.drawnPoints == total && c.drawnWidth == width && c.ax)
    return;
  c.drawnData = m_store.generation();
  c.drawnView = m_viewGeneration;
  c.drawnPoints = total;
  c.drawnWidth = width;
  // Axes and series change ranges below (attaching, replacing points): none of that is a zoom.
  m_settingRange = true;

  ensureAxes(c, logX, logY);

  // What this chart draws: per metric, a run on its own, or a seed group of two runs or more as
  // one mean with a band (unless the chart's seeds toggle is on), placed where its first run is.
  struct Unit {
    QString key;
    QString run;                       // a single run
    const SeedGroup* group = nullptr;  // or a seed group
    int metricIndex = 0;
  };
  std::vector<Unit> units;
  QSet<QString> wanted;
  for (int mi = 0; mi < c.metrics.size(); ++mi) {
    const QString& metric = c.metrics[mi];
    QSet<QString> groupsDone;
    for (const QString& run : m_store.runs()) {
      if (m_store.points(run, metric).empty()) continue;
      const SeedGroup* g = m_store.groupOf(run);
      const bool grouped = g && g->runs.size() >= 2 && !showSeeds;
      if (!grouped && !runVisible(run)) continue;
      if (grouped && std::all_of(g->runs.begin(), g->runs.end(),
                                 [this](const QString& r) { return !runVisible(r); }))
        continue;
      Unit u;
      u.metricIndex = mi;
      if (g && g->runs.size() >= 2 && !showSeeds) {
        if (groupsDone.contains(g->key)) continue;
        groupsDone.insert(g->key);
        u.key = QStringLiteral("group\n") + g->key + '\n' + metric;
        u.group = g;
      } else {
        u.key = run + '\n' + metric;
        u.run = run;
      }
      wanted.insert(u.key);
      units.push_back(u);
    }
  }
  // The title says which band the groups carry (the legend names each group once).
  bool minMax = false, tBand = false;
  for (const Unit& u : units)
    if (u.group) (u.group->runs.size() >= 3 ? tBand : minMax) = true;
  QString title = c.title;
  // A chart's second metric (held-out BPB) is the dashed twin of the first: one legend entry per
  // run or group, and the title says what the dashes are (short enough for a 330 px chart).
  QSet<QString> firstMetricUnits;
  bool second = false;
  for (const Unit& u : units) {
    const QString who = u.group ? QStringLiteral("group\n") + u.group->key : u.run;
    if (u.metricIndex == 0)
      firstMetricUnits.insert(who);
    else
      second = true;
  }
  if (second && c.metrics[1] == QLatin1String("estimate_mem_mib"))
    title = tr("Peak memory, dashed: estimate");  // resident at start + training tensors
  else if (second)
    title = tr("%1, dashed: %2")
                .arg(c.yTitle, c.metrics[1] == QLatin1String("heldout_bpb")
                                   ? tr("held-out")
                                   : metricLabel(c.metrics[1]));
  if (tBand && minMax)
    title += tr(" · mean, 95 % t (≥ 3 seeds) or min–max");
  else if (tBand)
    title += tr(" · mean ± 95 % t");
  else if (minMax)
    title += tr(" · mean, min–max");
  if (c.chart->title() != title) c.chart->setTitle(title);
  // Series of runs, groups or metrics no longer drawn here.
  for (auto it = c.curves.begin(); it != c.curves.end();) {
    if (wanted.contains(it.key())) {
      ++it;
      continue;
    }
    removeCurve(c, it.value());
    it = c.curves.erase(it);
  }

  struct Pending {
    Curve* curve;
    QList<QPointF> rawPts, mainPts, upperPts, lowerPts;
    bool rawTwin;  // a smoothed run curve also shows its raw values (faint)
  };
  std::vector<Pending> pending;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto widenY = [&](double y) {
    ymin = std::min(ymin, y);
    ymax = std::max(ymax, y);
  };
  auto usableX = [&](double x) { return std::isfinite(x) && !(logX && x <= 0); };
  auto usableY = [&](double y) { return std::isfinite(y) && !(logY && y <= 0); };
  for (const Unit& u : units) {
    const QString& metric = c.metrics[u.metricIndex];
    const bool evaluation = MetricStore::isEvaluation(metric);
    const int mi = u.metricIndex;
    // Colours follow the groups (a run of no seed group keeps the colour of its place); a seed
    // drawn on its own (the chart's seeds toggle) takes a shade of its group's colour, so the
    // legend the four charts share stays as it was. A chart's second metric (held-out beside
    // validation BPB) is dashed and darker.
    const SeedGroup* g = u.group ? u.group : m_store.groupOf(u.run);
    const bool seedOfGroup = !u.group && g && g->runs.size() >= 2;
    const QColor base = !g ? runColor(u.run) : seedOfGroup ? seedShade(*g, u.run) : groupColor(*g);
    const QColor col = mi == 0 ? base : base.darker(170);
    const Qt::PenStyle style = mi == 0 ? Qt::SolidLine : Qt::DashLine;
    // A group's name counts its seeds, which may grow while it is drawn.
    QString name = u.group ? tr("%1 · %2 seeds").arg(u.group->label).arg(u.group->runs.size())
                           : legendName(u.run);
    if (mi > 0) name += QStringLiteral(" · ") + metricLabel(metric);
    auto it = c.curves.find(u.key);
    if (it == c.curves.end()) {
      // A new run, group or metric: its series are made once and kept.
      Curve cv;
      if (u.group) {
        cv.band = new QAreaSeries;
        cv.upper = new QLineSeries(cv.band);
        cv.lower = new QLineSeries(cv.band);
        cv.band->setUpperSeries(cv.upper);
        cv.band->setLowerSeries(cv.lower);
        cv.band->setName(name + tr(" (band)"));
        cv.band->setPen(Qt::NoPen);
      } else {
        cv.raw = new QLineSeries;
        cv.raw->setName(name + tr(" (raw)"));
      }
      cv.main = new QLineSeries;
      cv.main->setName(name);
      // Evaluations are sparse (a held-out BPB is often one point at the end): mark every point.
      if (evaluation) cv.main->setPointsVisible(true);
      for (QAbstractSeries* s : {cv.band ? static_cast<QAbstractSeries*>(cv.band) : cv.raw,
                                 static_cast<QAbstractSeries*>(cv.main)}) {
        c.chart->addSeries(s);
        s->attachAxis(c.ax);
        s->attachAxis(c.ay);
      }
      // Larger marks for the second metric: it is often a single point, where a dash does not show
      // (set after the chart's theme is applied).
      if (mi > 0) cv.main->setMarkerSize(cv.main->markerSize() * 1.6);
      it = c.curves.insert(u.key, cv);
    }
    if (mi > 0) {
      const QString who = u.group ? QStringLiteral("group\n") + u.group->key : u.run;
      // The legend names the drawn curve only, not the dashed second metric of a run or group
      // that has the first.
      it->named = !firstMetricUnits.contains(who);
    }
    Curve& cv = it.value();
    if (seedOfGroup) {
      cv.legendAs = tr("%1 · %2 seeds").arg(g->label).arg(g->runs.size());
      if (mi > 0) cv.legendAs += QStringLiteral(" · ") + metricLabel(metric);
      cv.legendColor = mi == 0 ? groupColor(*g) : groupColor(*g).darker(170);
    } else {
      cv.legendAs.clear();
    }
    if (cv.main->name() != name) {
      cv.main->setName(name);
      if (cv.band) cv.band->setName(name + tr(" (band)"));
    }
    if (cv.main->pen().color().rgba() != col.rgba() || cv.main->pen().style() != style) {
      cv.main->setPen(QPen(col, 2.0, style));
      QColor faint = col;
      faint.setAlpha(cv.band ? 60 : 70);
      if (cv.band) cv.band->setBrush(faint);
      if (cv.raw) cv.raw->setPen(QPen(faint, 1.0, style));
    }
    Pending p{&it.value(), {}, {}, {}, {}, false};
    if (u.group) {
      // Mean and band over the seeds' drawn values (their EMA for a smoothed training metric).
      const std::vector<BandPoint> curve =
          m_store.groupCurve(*u.group, metric, m_xAxis, MetricStore::Values::Drawn);
      p.mainPts.reserve(qsizetype(curve.size()));
      for (const BandPoint& b : curve) {
        if (!usableX(b.x)) continue;
        if (usableY(b.mean)) p.mainPts.append(QPointF(b.x, b.mean)), widenY(b.mean);
        if (usableY(b.low) && usableY(b.high)) {
          p.lowerPts.append(QPointF(b.x, b.low));
          p.upperPts.append(QPointF(b.x, b.high));
          widenY(b.low);
          widenY(b.high);
        }
        xmin = std::min(xmin, b.x);
        xmax = std::max(xmax, b.x);
      }
    } else {
      const auto& pts = m_store.points(u.run, metric);
      const std::vector<double>& sm = m_store.smoothed(u.run, metric);
      // Evaluations (val/held-out BPB) are sparse, exact measurements: drawn raw, marked,
      // unsmoothed.
      const bool smooth = smoothing > 0 && !evaluation;
      p.rawTwin = rawShown && smooth;  // an unsmoothed curve is its own raw curve
      p.rawPts.reserve(qsizetype(pts.size()));
      p.mainPts.reserve(qsizetype(pts.size()));
      for (size_t i = 0; i < pts.size(); ++i) {
        const double x = xOf(pts[i], m_xAxis);
        if (!usableX(x)) continue;
        const double y = pts[i].value, ys = sm[i];
        if (usableY(y)) {
          if (smooth)
            p.rawPts.append(QPointF(x, y));
          else
            p.mainPts.append(QPointF(x, y));
          if (raw || evaluation || !smooth) widenY(y);
        }
        if (smooth && usableY(ys)) {
          p.mainPts.append(QPointF(x, ys));
          widenY(ys);
        }
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
      }
    }
    pending.push_back(std::move(p));
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
    if (cv.raw) {
      if (cv.raw->isVisible() != p.rawTwin) cv.raw->setVisible(p.rawTwin);
      cv.raw->replace(p.rawTwin ? decimate(p.rawPts, buckets, x0, x1, logX) : QList<QPointF>());
    }
    if (cv.band) {
      cv.upper->replace(decimate(p.upperPts, buckets, x0, x1, logX));
      cv.lower->replace(decimate(p.lowerPts, buckets, x0, x1, logX));
    }
    cv.main->replace(decimate(p.mainPts, buckets, x0, x1, logX));
  }

  // A chart the user zoomed or panned keeps its range; Reset zoom fits it again.
  const bool zoomed = m_zoomed.contains(c.metrics.first());
  if (zoomed) {
  } else if (auto* a = qobject_cast<QLogValueAxis*>(c.ax)) {
    a->setRange(xmin, xmax);
  } else if (auto* v = qobject_cast<QValueAxis*>(c.ax)) {
    // Steps 1…400 tick at 100, 200, 300, 400; labels such as 800000 need about 80 px each.
    applyNiceTicks(v, xmin, xmax, ticksThatFit(c.chart->plotArea().width(), 80));
  }
  if (zoomed) {
  } else if (auto* a = qobject_cast<QLogValueAxis*>(c.ay)) {
    a->setRange(ymin, ymax);
  } else if (auto* v = qobject_cast<QValueAxis*>(c.ay)) {
    const double pad = (ymax - ymin) * 0.04;
    applyNiceTicks(v, ymin - pad, ymax + pad, ticksThatFit(c.chart->plotArea().height(), 20));
  }
  m_settingRange = false;
  if (c.ax->titleText() != m_xCombo->currentText()) c.ax->setTitleText(m_xCombo->currentText());
  fitAxisTitles(c);
}

void MonitorPanel::fitAxisTitles(Chart& c) {
  // A short chart (a 1280 × 800 window with a panel raised under the monitor) keeps its plot and
  // drops the axis titles, which Qt would elide to "…": the x axis is named in the bar above.
  const bool titles = c.view->height() >= kAxisTitleMinHeight;
  if (c.ax->isTitleVisible() != titles) c.ax->setTitleVisible(titles);
  if (c.ay->isTitleVisible() != titles) c.ay->setTitleVisible(titles);
}

}  // namespace gllm::gui
