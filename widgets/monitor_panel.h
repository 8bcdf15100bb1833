// MonitorPanel: Qt Charts of training loss, validation/held-out BPB, tokens/s and peak memory for
// several runs at once; seed groups as a mean with a band; log axes; raw + EMA; PNG/SVG/CSV export.
#pragma once
#include <QList>
#include <QMap>
#include <QPointF>
#include <QSet>
#include <QString>
#include <QWidget>
#include <vector>

#include "widgets/metric_store.h"

class QChart;
class QChartView;
class QComboBox;
class QCheckBox;
class QSlider;
class QLabel;
class QTimer;
class QLineSeries;
class QAreaSeries;
class QAbstractSeries;
class QGridLayout;
class QAbstractAxis;
class QMenu;
class QToolButton;

namespace gllm::gui {

class MonitorPanel : public QWidget {
  Q_OBJECT
 public:
  using XAxis = gllm::gui::XAxis;
  // Metric keys the panel plots; each chart shows one group.
  static QStringList metricKeys() { return MetricStore::metricKeys(); }

  explicit MonitorPanel(QWidget* parent = nullptr);

  // Appends a point (cheap; the charts redraw on a 40 ms coalescing timer, at most 25 per second).
  void addPoint(const QString& run, const QString& metric, const MetricPoint& p);
  // Replaces a run's data with the records of a metrics.jsonl file (and the config.json beside
  // it, for seed groups). Reads on the calling thread; returns "" or the error.
  QString loadMetricsFile(const QString& run, const QString& path);
  // Replaces a run's data with what MetricStore::readMetricsFile read on a worker thread.
  void setRun(const QString& run, const LoadedRun& data);
  // The run's resolved config: runs whose configs differ only in train.seed form a seed group.
  void setRunConfig(const QString& run, const nlohmann::json& config);
  bool hasRunConfig(const QString& run) const { return m_store.hasRunConfig(run); }
  void removeRun(const QString& run);
  void clear();
  QStringList runs() const { return m_store.runs(); }
  // The names the shared legend above the charts shows (each drawn curve once).
  QStringList legendEntries() const { return m_legendNames; }
  const std::vector<MetricPoint>& points(const QString& run, const QString& metric) const {
    return m_store.points(run, metric);
  }
  const MetricStore& store() const { return m_store; }

  void setXAxis(XAxis x);
  XAxis xAxis() const { return m_xAxis; }
  void setLogY(bool on);
  void setLogX(bool on);
  // EMA smoothing weight w ∈ [0, 0.999]: s_t = w s_{t−1} + (1 − w) x_t, debiased by 1 − w^t.
  void setSmoothing(double w);
  double smoothing() const { return m_store.smoothing(); }
  // The smoothed sequence the charts draw for a run's metric (same length as points()).
  std::vector<double> smoothed(const QString& run, const QString& metric) const {
    return m_store.smoothed(run, metric);
  }
  static std::vector<double> ema(const std::vector<double>& x, double w) {
    return MetricStore::ema(x, w);
  }
  static QList<QPointF> decimate(const QList<QPointF>& pts, int buckets, double x0, double x1,
                                 bool logX) {
    return MetricStore::decimate(pts, buckets, x0, x1, logX);
  }

  // Seed groups are drawn as one mean curve with a band; the chart of `metric` shows its groups'
  // individual seeds instead while this is on (the "seeds" toggle in the chart's corner).
  void setShowSeeds(const QString& metric, bool on);
  bool showsSeeds(const QString& metric) const;
  QCheckBox* seedToggle(const QString& metric) const;

  // Exports: the four charts as one PNG or SVG (as drawn: bands included), and every point as CSV
  // (run,metric,step,tokens,flops,wall_s,value,ema,group,seeds,band,band_of,band_low,band_high):
  // one row per run and point, then one row per seed group and step with the mean of its seeds'
  // values (value, ema) and the band drawn around it (band "min-max" or "t95", over the drawn
  // values: band_of "ema" or "value"). Return "" or the reason for failure.
  // `size`: the PNG's resolution (the charts redrawn at that scale); empty = as shown.
  QString exportPng(const QString& path, QSize size = {});
  // One chart (the one showing `metric`) as PNG at `size` (empty: as shown).
  QString exportChartPng(const QString& metric, const QString& path, QSize size = {});
  QString exportSvg(const QString& path);
  // The CSV's run_folder and seed columns come from setRunFolder and the run's config.
  QString exportCsv(const QString& path) const;

  // The folder a run was read from or runs in (the CSV's run_folder column).
  void setRunFolder(const QString& run, const QString& folder) { m_folders[run] = folder; }
  QString runFolder(const QString& run) const { return m_folders.value(run); }
  int runSeed(const QString& run) const { return m_seeds.value(run, -1); }

  // A few words on where a run stands beyond its curves ("cluster: running: on node7"): shown
  // after its name in the shared legend and the Runs menu; "" removes it.
  void setRunNote(const QString& run, const QString& note);
  QString runNote(const QString& run) const { return m_notes.value(run); }

  // Per-run show/hide (the Runs menu). A seed group is drawn while any of its runs is shown.
  void setRunVisible(const QString& run, bool on);
  bool runVisible(const QString& run) const { return !m_hiddenRuns.contains(run); }
  QMenu* runsMenu() const { return m_runsMenu; }

  // Zoom (drag a rectangle; Ctrl+wheel) and pan (Shift+drag or middle drag) per chart; a zoomed
  // chart keeps its range while points arrive. Reset zoom (the button) fits every chart again.
  void zoomChart(const QString& metric, double factor);
  void panChart(const QString& metric, double dx, double dy);
  bool isZoomed(const QString& metric) const { return m_zoomed.contains(metric); }
  void resetZoom();

  // The hover readout at x (in the current x-axis unit) over the chart of `metric`: the step and
  // tokens there and the value of each visible curve. Hovering a chart shows it under the bar.
  QString readoutAt(const QString& metric, double x) const;
  QString readoutText() const;

  int redrawCount() const { return m_redraws; }
  bool redrawPending() const;
  // Series shown in the chart of `metric` now (raw + EMA per run, band + mean per group), for
  // tests.
  int seriesCount(const QString& metric) const;
  // Points the chart of `metric` draws now in total (after decimation), for tests.
  int drawnPointCount(const QString& metric) const;
  QChart* chartFor(const QString& metric) const;

 public Q_SLOTS:
  void redrawNow();

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The series of one run's metric (raw, faint, no legend marker; and the drawn curve) or of one
  // seed group's metric (band, no legend marker; and the mean curve).
  struct Curve {
    QLineSeries* raw = nullptr;
    QLineSeries* main = nullptr;
    QAreaSeries* band = nullptr;
    QLineSeries* upper = nullptr;  // the band's edges (owned by the band series)
    QLineSeries* lower = nullptr;
    bool named = true;  // in the shared legend (not a dashed twin of a curve already named)
    // A seed of a group drawn on its own (the chart's seeds toggle): the shared legend names its
    // group instead, in the group's colour, as the other charts draw it.
    QString legendAs;
    QColor legendColor;
  };
  // Series and axes live as long as the chart; a redraw replaces their points and ranges only.
  struct Chart {
    QString title;
    QStringList metrics;
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QCheckBox* seeds = nullptr;
    QString yTitle;
    QAbstractAxis* ax = nullptr;
    QAbstractAxis* ay = nullptr;
    QMap<QString, Curve> curves;  // run + '\n' + metric, or "group\n" + key + '\n' + metric
    // What the last redraw drew; an unchanged chart is skipped.
    quint64 drawnData = ~quint64(0), drawnView = ~quint64(0);  // store and view generations
    size_t drawnPoints = 0;
    int drawnWidth = -1;
  };
  void scheduleRedraw();
  void invalidate();  // something other than appended points changed: every chart redraws
  void updateChart(Chart& c);
  void ensureAxes(Chart& c, bool logX, bool logY);
  void removeCurve(Chart& c, Curve& cv);
  // Shows (for an export of the chart alone) or hides the chart's own legend, its markers those of
  // the shared legend.
  void showChartLegend(Chart& c, bool on);
  QColor runColor(const QString& run) const;
  // The run's name in the legend: its folder name without the start time when that is unique.
  QString legendName(const QString& run) const;
  // The shared legend above the charts: each drawn curve once, its colour and dash, its name.
  void updateSharedLegend();
  QColor groupColor(const SeedGroup& group) const;
  // The colour of seed `run` of `group` drawn on its own: a shade of the group's colour.
  QColor seedShade(const SeedGroup& group, const QString& run) const;
  void updateSeedToggles();
  // The second bar row: Runs menu, Reset zoom, the hover readout; and the charts' mouse handling.
  void buildInteraction(QLayout* layout);
  // The Export button and its menu (PNG as shown or at a chosen size, one chart, SVG, CSV).
  QToolButton* buildExportButton();
  void fillRunsMenu();
  void watchAxis(Chart& c, QAbstractAxis* axis);
  Chart* chartOfView(QObject* viewport);
  // Axis titles shown only on a chart tall enough for them (kAxisTitleMinHeight); on each resize.
  void fitAxisTitles(Chart& c);

  MetricStore m_store;
  quint64 m_viewGeneration = 0;  // view settings (axes, toggles) changed
  std::vector<Chart> m_charts;
  QWidget* m_chartArea = nullptr;
  QLabel* m_legend = nullptr;  // the four charts' one legend
  QStringList m_legendNames;
  QMap<QString, QString> m_notes;  // run → setRunNote's words
  QTimer* m_timer = nullptr;
  QComboBox* m_xCombo = nullptr;
  QCheckBox* m_logY = nullptr;
  QCheckBox* m_logX = nullptr;
  QCheckBox* m_showRaw = nullptr;
  QSlider* m_smoothSlider = nullptr;
  QLabel* m_smoothLabel = nullptr;
  XAxis m_xAxis = XAxis::Step;
  int m_redraws = 0;
  QMap<QString, QString> m_folders;  // run → its folder
  QMap<QString, int> m_seeds;        // run → train.seed of its config
  QSet<QString> m_hiddenRuns;
  QSet<QString> m_zoomed;  // charts (by first metric) the user zoomed or panned
  bool m_settingRange = false;
  QMenu* m_runsMenu = nullptr;
  QLabel* m_readout = nullptr;
  QPoint m_panFrom;
  bool m_panning = false;
  // px of chart that keep the axis titles whole (below it they are dropped rather than elided, the
  // x axis named in the bar above), and the least a chart gets: plot, tick labels and axis titles
  // whole, so a 1280 × 800 window leaves the Runs table under the Monitor three rows in view.
  static constexpr int kAxisTitleMinHeight = 150;
  static constexpr int kChartMinHeight = 160;
};

}  // namespace gllm::gui
