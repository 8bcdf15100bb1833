// MonitorPanel implementation: data are appended to per-run vectors; a single-shot 40 ms timer
// rebuilds the series (QLineSeries::replace) so bursts of records cost one redraw.
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
#include <QPainter>
#include <QPushButton>
#include <QSaveFile>
#include <QSlider>
#include <QTextStream>
#include <QTimer>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
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
  m_smoothSlider->setMaximumWidth(140);
  m_smoothLabel = new QLabel(this);
  m_smoothLabel->setMinimumWidth(32);
  auto* png = new QPushButton(QIcon(QStringLiteral(":/icons/export.svg")), tr("PNG"), this);
  auto* svg = new QPushButton(QIcon(QStringLiteral(":/icons/export.svg")), tr("SVG"), this);
  auto* csv = new QPushButton(QIcon(QStringLiteral(":/icons/export.svg")), tr("CSV"), this);
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
  bar->addWidget(png);
  bar->addWidget(svg);
  bar->addWidget(csv);
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
    c.chart->legend()->setAlignment(Qt::AlignBottom);
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
  connect(m_showRaw, &QCheckBox::toggled, this, [this] { scheduleRedraw(); });
  connect(m_smoothSlider, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 100.0); });
  connect(png, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export charts as PNG"), QStringLiteral("monitor.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) exportPng(f);
  });
  connect(svg, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export charts as SVG"), QStringLiteral("monitor.svg"), tr("SVG (*.svg)"));
    if (!f.isEmpty()) exportSvg(f);
  });
  connect(csv, &QPushButton::clicked, this, [this] {
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
  scheduleRedraw();
  return mf.torn_tail ? qs(mf.warning) : QString();
}

void MonitorPanel::removeRun(const QString& run) {
  m_data.remove(run);
  m_runOrder.removeAll(run);
  scheduleRedraw();
}

void MonitorPanel::clear() {
  m_data.clear();
  m_runOrder.clear();
  scheduleRedraw();
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
  scheduleRedraw();
}

void MonitorPanel::setLogY(bool on) {
  if (m_logY->isChecked() != on) m_logY->setChecked(on);
  scheduleRedraw();
}

void MonitorPanel::setLogX(bool on) {
  if (m_logX->isChecked() != on) m_logX->setChecked(on);
  scheduleRedraw();
}

void MonitorPanel::setSmoothing(double w) {
  m_smoothing = std::clamp(w, 0.0, 0.999);
  m_smoothLabel->setText(QString::number(m_smoothing, 'f', 2));
  const int s = int(std::lround(m_smoothing * 100));
  if (m_smoothSlider->value() != s && s <= 99) m_smoothSlider->setValue(s);
  scheduleRedraw();
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

std::vector<double> MonitorPanel::smoothed(const QString& run, const QString& metric) const {
  const auto& pts = points(run, metric);
  std::vector<double> x(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) x[i] = pts[i].value;
  return ema(x, m_smoothing);
}

void MonitorPanel::scheduleRedraw() {
  if (!m_timer->isActive()) m_timer->start();
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
  for (Chart& c : m_charts) rebuildChart(c);
  ++m_redraws;
}

void MonitorPanel::rebuildChart(Chart& c) {
  QChart* chart = c.chart;
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) {
    chart->removeAxis(a);
    delete a;
  }
  const bool logX = m_logX->isChecked(), logY = m_logY->isChecked(), raw = m_showRaw->isChecked();
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  std::vector<QLineSeries*> made;
  for (int mi = 0; mi < c.metrics.size(); ++mi) {
    const QString& metric = c.metrics[mi];
    for (const QString& run : m_runOrder) {
      const auto& pts = points(run, metric);
      if (pts.empty()) continue;
      const std::vector<double> sm = smoothed(run, metric);
      QList<QPointF> rawPts, emaPts;
      rawPts.reserve(int(pts.size()));
      emaPts.reserve(int(pts.size()));
      for (size_t i = 0; i < pts.size(); ++i) {
        const double x = xOf(pts[i]);
        if (!std::isfinite(x) || (logX && x <= 0)) continue;
        const double y = pts[i].value, ys = sm[i];
        if (std::isfinite(y) && !(logY && y <= 0)) {
          rawPts.append(QPointF(x, y));
          if (raw) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
        }
        if (std::isfinite(ys) && !(logY && ys <= 0)) {
          emaPts.append(QPointF(x, ys));
          ymin = std::min(ymin, ys);
          ymax = std::max(ymax, ys);
        }
        xmin = std::min(xmin, x);
        xmax = std::max(xmax, x);
      }
      QColor col = runColor(run);
      const Qt::PenStyle style = mi == 0 ? Qt::SolidLine : Qt::DashLine;
      const QString name = c.metrics.size() > 1 ? run + QStringLiteral(" · ") + metricLabel(metric) : run;
      if (raw && m_smoothing > 0) {
        auto* s = new QLineSeries;
        s->setName(name + tr(" (raw)"));
        QColor light = col;
        light.setAlpha(70);
        s->setPen(QPen(light, 1.0, style));
        s->replace(rawPts);
        chart->addSeries(s);
        made.push_back(s);
        if (!chart->legend()->markers(s).isEmpty()) chart->legend()->markers(s).first()->setVisible(false);
      }
      auto* s = new QLineSeries;
      s->setName(name);
      s->setPen(QPen(col, 2.0, style));
      s->replace(m_smoothing > 0 ? emaPts : rawPts);
      chart->addSeries(s);
      made.push_back(s);
    }
  }
  QAbstractAxis* ax;
  QAbstractAxis* ay;
  if (!std::isfinite(xmin)) xmin = logX ? 1 : 0, xmax = logX ? 10 : 1;
  if (!std::isfinite(ymin)) ymin = logY ? 1 : 0, ymax = logY ? 10 : 1;
  if (xmax <= xmin) xmax = xmin + (logX ? xmin : 1);
  if (ymax <= ymin) {
    const double pad = std::fabs(ymin) > 0 ? std::fabs(ymin) * 0.05 : 1;
    ymin = logY ? ymin / 1.1 : ymin - pad;
    ymax = logY ? ymax * 1.1 : ymax + pad;
  }
  if (logX) {
    auto* a = new QLogValueAxis;
    a->setBase(10);
    a->setLabelFormat(QStringLiteral("%.3g"));
    a->setRange(xmin, xmax);
    ax = a;
  } else {
    auto* a = new QValueAxis;
    a->setRange(xmin, xmax);
    a->setLabelFormat(m_xAxis == XAxis::Step ? QStringLiteral("%.0f") : QStringLiteral("%.3g"));
    a->setTickCount(5);
    ax = a;
  }
  if (logY) {
    auto* a = new QLogValueAxis;
    a->setBase(10);
    a->setLabelFormat(QStringLiteral("%.3g"));
    a->setMinorTickCount(8);
    a->setRange(ymin, ymax);
    ay = a;
  } else {
    auto* a = new QValueAxis;
    const double pad = (ymax - ymin) * 0.04;
    a->setRange(ymin - pad, ymax + pad);
    a->setLabelFormat(QStringLiteral("%.4g"));
    a->setTickCount(5);
    ay = a;
  }
  ax->setTitleText(m_xCombo->currentText());
  ay->setTitleText(c.yTitle);
  QFont f = ax->titleFont();
  f.setPointSizeF(8);
  f.setBold(false);
  ax->setTitleFont(f);
  ay->setTitleFont(f);
  ax->setLabelsFont(f);
  ay->setLabelsFont(f);
  chart->addAxis(ax, Qt::AlignBottom);
  chart->addAxis(ay, Qt::AlignLeft);
  for (QLineSeries* s : made) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  chart->legend()->setVisible(!made.empty());
}

int MonitorPanel::seriesCount(const QString& metric) const {
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) return int(c.chart->series().size());
  return 0;
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
