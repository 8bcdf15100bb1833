// MonitorPanel: Qt Charts of training loss, validation/held-out BPB, tokens/s and peak memory for
// several runs at once; x = step, tokens, FLOPs or wall time; log axes; raw + EMA; PNG/SVG/CSV export.
#pragma once
#include <QList>
#include <QMap>
#include <QPointF>
#include <QString>
#include <QWidget>
#include <vector>

class QChart;
class QChartView;
class QComboBox;
class QCheckBox;
class QSlider;
class QLabel;
class QTimer;
class QLineSeries;
class QGridLayout;
class QAbstractAxis;

namespace gllm::gui {

// One point of one metric of one run, with every x coordinate the monitor can plot against.
struct MetricPoint {
  double step = 0, tokens = 0, flops = NAN, wall = NAN;
  double value = 0;
};

class MonitorPanel : public QWidget {
  Q_OBJECT
 public:
  enum class XAxis { Step = 0, Tokens = 1, Flops = 2, Wall = 3 };
  // Metric keys the panel plots; each chart shows one group.
  static QStringList metricKeys() {
    return {QStringLiteral("loss"), QStringLiteral("val_bpb"), QStringLiteral("heldout_bpb"),
            QStringLiteral("tokens_per_s"), QStringLiteral("peak_mem_mib")};
  }

  explicit MonitorPanel(QWidget* parent = nullptr);

  // Appends a point (cheap; the charts redraw on a 40 ms coalescing timer, at most 25 per second).
  void addPoint(const QString& run, const QString& metric, const MetricPoint& p);
  // Replaces a run's data with the records of a metrics.jsonl file. Returns "" or the error.
  QString loadMetricsFile(const QString& run, const QString& path);
  void removeRun(const QString& run);
  void clear();
  QStringList runs() const;
  const std::vector<MetricPoint>& points(const QString& run, const QString& metric) const;

  void setXAxis(XAxis x);
  XAxis xAxis() const { return m_xAxis; }
  void setLogY(bool on);
  void setLogX(bool on);
  // EMA smoothing weight w ∈ [0, 0.999]: s_t = w s_{t−1} + (1 − w) x_t, debiased by 1 − w^t.
  void setSmoothing(double w);
  double smoothing() const { return m_smoothing; }
  // The smoothed sequence the charts draw for a run's metric (same length as points()); kept
  // per run and metric and extended incrementally as points arrive.
  std::vector<double> smoothed(const QString& run, const QString& metric) const;
  static std::vector<double> ema(const std::vector<double>& x, double w);
  // Reduces a curve to at most two points per horizontal bucket (its minimum and maximum, in
  // their original order) plus the curve's last point, so spikes survive; `buckets` spans
  // [x0, x1] (pass log10 coordinates for a log axis). Curves of ≤ 2·buckets points are kept as is.
  static QList<QPointF> decimate(const QList<QPointF>& pts, int buckets, double x0, double x1, bool logX);

  // Exports: the four charts as one PNG or SVG, and every point as CSV
  // (run,metric,step,tokens,flops,wall_s,value,ema). Return "" or the reason for failure.
  QString exportPng(const QString& path);
  QString exportSvg(const QString& path);
  QString exportCsv(const QString& path) const;

  int redrawCount() const { return m_redraws; }
  bool redrawPending() const;
  // Series shown in the chart of `metric` now (raw + EMA per run), for tests.
  int seriesCount(const QString& metric) const;
  // Points the chart of `metric` draws now in total (after decimation), for tests.
  int drawnPointCount(const QString& metric) const;
  QChart* chartFor(const QString& metric) const;

 public slots:
  void redrawNow();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  // The two series of one run's metric: raw (faint, legend marker hidden) and the drawn curve.
  struct Curve {
    QLineSeries* raw = nullptr;
    QLineSeries* main = nullptr;
  };
  // Series and axes live as long as the chart; a redraw replaces their points and ranges only.
  struct Chart {
    QString title;
    QStringList metrics;
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QString yTitle;
    QAbstractAxis* ax = nullptr;
    QAbstractAxis* ay = nullptr;
    QMap<QString, Curve> curves;  // run + '\n' + metric → series
    // What the last redraw drew; an unchanged chart is skipped.
    quint64 drawnGeneration = ~quint64(0);
    size_t drawnPoints = 0;
    int drawnWidth = -1;
  };
  // The EMA of one run's metric so far, with the state to extend it by new points.
  struct EmaCache {
    double w = -1, s = 0, wt = 1;
    std::vector<double> out;
  };
  void scheduleRedraw();
  void invalidate();  // something other than appended points changed: every chart redraws
  void updateChart(Chart& c);
  void ensureAxes(Chart& c, bool logX, bool logY);
  const std::vector<double>& emaOf(const QString& run, const QString& metric) const;
  double xOf(const MetricPoint& p) const;
  QColor runColor(const QString& run) const;

  QMap<QString, QMap<QString, std::vector<MetricPoint>>> m_data;  // run → metric → points
  mutable QMap<QString, QMap<QString, EmaCache>> m_ema;            // run → metric → EMA
  quint64 m_generation = 0;
  QStringList m_runOrder;
  QMap<QString, double> m_flopsPerToken;
  std::vector<Chart> m_charts;
  QWidget* m_chartArea = nullptr;
  QTimer* m_timer = nullptr;
  QComboBox* m_xCombo = nullptr;
  QCheckBox* m_logY = nullptr;
  QCheckBox* m_logX = nullptr;
  QCheckBox* m_showRaw = nullptr;
  QSlider* m_smoothSlider = nullptr;
  QLabel* m_smoothLabel = nullptr;
  XAxis m_xAxis = XAxis::Step;
  double m_smoothing = 0.6;
  int m_redraws = 0;
};

}  // namespace gllm::gui
