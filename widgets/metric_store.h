// MetricStore: the monitor's data without a window — points per run and metric, the incremental
// EMA, min/max decimation, and seed groups (runs whose configs differ only in train.seed).
#pragma once
#include <QList>
#include <QMap>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace gllm::gui {

// One point of one metric of one run, with every x coordinate the monitor can plot against.
struct MetricPoint {
  double step = 0, tokens = 0, flops = NAN, wall = NAN;
  double value = 0;
};

enum class XAxis { Step = 0, Tokens = 1, Flops = 2, Wall = 3 };
double xOf(const MetricPoint& p, XAxis x);

// Runs whose configs are equal once train.seed is removed. A run without a config is a group of
// its own (key "run:" + its name).
struct SeedGroup {
  QString key;
  QString label;     // the config's name ("run" when it has none), numbered when names repeat
  QStringList runs;  // in the order they arrived
};

// The band drawn around a group's mean at one step, by the number n of seeds that reached it.
enum class BandKind { None, MinMax, TInterval95 };
BandKind bandKind(int n);      // n ≤ 1: None; n = 2: MinMax; n ≥ 3: TInterval95
QString bandName(BandKind k);  // "", "min-max", "t95"

// One step of a group's curve: the mean of the member seeds' values and the band around it —
// [min, max] for two seeds, mean ± t_{0.975, n−1} · s / √n (sample SD s) for three or more.
struct BandPoint {
  double step = 0;
  double x = 0;  // the mean of the members' x at this step (tokens and FLOPs agree; wall does not)
  int n = 0;     // seeds with a value at this step
  double mean = 0, low = 0, high = 0;
};
// The mean and band of one step's values (low = high = mean for a single value).
BandPoint bandOf(const std::vector<double>& values);

// One run folder's metrics read off the GUI thread, then handed to MetricStore::setRun.
struct LoadedRun {
  QMap<QString, std::vector<MetricPoint>> metrics;
  double flopsPerToken = NAN;
  nlohmann::json config;  // config.json beside metrics.jsonl (null when absent or unreadable)
  QString warning;        // a torn last line that was dropped
  QString error;          // non-empty: nothing was read
};

class MetricStore {
 public:
  static QStringList metricKeys() {
    return {QStringLiteral("loss"),         QStringLiteral("val_bpb"),
            QStringLiteral("heldout_bpb"),  QStringLiteral("tokens_per_s"),
            QStringLiteral("peak_mem_mib"), QStringLiteral("estimate_mem_mib")};
  }
  // Evaluations (val / held-out BPB) are sparse exact measurements: never smoothed.
  static bool isEvaluation(const QString& metric) {
    return metric.endsWith(QStringLiteral("_bpb"));
  }

  // Appends a point; an evaluation without FLOPs is placed with the run's FLOPs per token so far.
  void addPoint(const QString& run, const QString& metric, const MetricPoint& p);
  // Reads metrics.jsonl (and config.json in the same folder) without touching a store: safe on a
  // worker thread.
  static LoadedRun readMetricsFile(const QString& path);
  // Replaces a run's data (and its config when the load found one).
  void setRun(const QString& run, const LoadedRun& data);
  void removeRun(const QString& run);
  void clear();
  QStringList runs() const { return m_runOrder; }
  const std::vector<MetricPoint>& points(const QString& run, const QString& metric) const;
  size_t pointCount(const QStringList& metrics) const;

  // The run's resolved config (RunConfig JSON); decides its seed group.
  void setRunConfig(const QString& run, const nlohmann::json& config);
  bool hasRunConfig(const QString& run) const { return m_groupKey.contains(run); }
  // The config with train.seed removed, as canonical JSON text: equal keys = one seed group.
  static QString groupKey(const nlohmann::json& config);
  // Groups in the order of their first run; the label of a repeated name gets " (2)", " (3)".
  const std::vector<SeedGroup>& groups() const;
  const SeedGroup* groupOf(const QString& run) const;
  bool hasSeedGroups() const;  // some group has two runs or more

  // EMA weight w ∈ [0, 0.999]: s_t = w s_{t−1} + (1 − w) x_t, debiased by 1 − w^t.
  void setSmoothing(double w);
  double smoothing() const { return m_smoothing; }
  // The smoothed sequence of a run's metric (same length as points()), extended incrementally.
  const std::vector<double>& smoothed(const QString& run, const QString& metric) const;
  static std::vector<double> ema(const std::vector<double>& x, double w);
  // The values a chart draws for a run's metric: the EMA of a training metric when smoothing is
  // on, the raw values otherwise (and always for evaluations).
  std::vector<double> drawnValues(const QString& run, const QString& metric) const;

  // Which values of a run's metric a group curve is made of: the raw values, their EMA, or what
  // the chart draws (the EMA of a training metric when smoothing is on, else the raw values).
  enum class Values { Raw, Smoothed, Drawn };
  // A group's curve of `metric`: one point per step that any member reached. Sorted by step.
  std::vector<BandPoint> groupCurve(const SeedGroup& g, const QString& metric, XAxis x,
                                    Values values) const;

  // Reduces a curve to at most two points per horizontal bucket (its minimum and maximum, in
  // their original order) plus the curve's last point, so spikes survive; `buckets` spans
  // [x0, x1] (pass log10 coordinates for a log axis). Curves of ≤ 2·buckets points are kept as is.
  static QList<QPointF> decimate(const QList<QPointF>& pts, int buckets, double x0, double x1,
                                 bool logX);

  // Bumped by everything other than appended points (a chart then redraws all its series).
  quint64 generation() const { return m_generation; }

 private:
  struct EmaCache {
    double w = -1, s = 0, wt = 1;
    std::vector<double> out;
  };
  QMap<QString, QMap<QString, std::vector<MetricPoint>>> m_data;  // run → metric → points
  mutable QMap<QString, QMap<QString, EmaCache>> m_ema;           // run → metric → EMA
  QMap<QString, QString> m_groupKey;                              // run → group key
  QMap<QString, QString> m_configName;                            // run → config name
  mutable std::vector<SeedGroup> m_groups;
  mutable bool m_groupsDirty = true;
  QStringList m_runOrder;
  QMap<QString, double> m_flopsPerToken;
  double m_smoothing = 0.6;
  quint64 m_generation = 0;
};

}  // namespace gllm::gui
