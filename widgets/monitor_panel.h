// MonitorPanel: Qt Charts of training loss, validation/held-out BPB, tokens/s and peak memory for
// several runs at once; x = step, tokens, FLOPs or wall time; log axes; raw + EMA; PNG/SVG/CSV export.
#pragma once
#include <QMap>
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
  // The smoothed sequence the charts draw for a run's metric (same length as points()).
  std::vector<double> smoothed(const QString& run, const QString& metric) const;
  static std::vector<double> ema(const std::vector<double>& x, double w);

  // Exports: the four charts as one PNG or SVG, and every point as CSV
  // (run,metric,step,tokens,flops,wall_s,value,ema). Return "" or the reason for failure.
  QString exportPng(const QString& path);
  QString exportSvg(const QString& path);
  QString exportCsv(const QString& path) const;

  int redrawCount() const { return m_redraws; }
  bool redrawPending() const;
  // Series shown in the chart of `metric` now (raw + EMA per run), for tests.
  int seriesCount(const QString& metric) const;
  QChart* chartFor(const QString& metric) const;

 public slots:
  void redrawNow();

 private:
  struct Chart {
    QString title;
    QStringList metrics;
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QString yTitle;
  };
  void scheduleRedraw();
  void rebuildChart(Chart& c);
  double xOf(const MetricPoint& p) const;
  QColor runColor(const QString& run) const;

  QMap<QString, QMap<QString, std::vector<MetricPoint>>> m_data;  // run → metric → points
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
