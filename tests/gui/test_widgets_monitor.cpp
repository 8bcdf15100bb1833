// GUI test of the chart monitor: EMA against an independent loop, coalesced redraws, true log
// axes, several runs overlaid, long-lived decimated series, round axis ticks, and PNG / SVG / CSV
// exports read back.
#include <QChart>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "widgets/monitor_panel.h"
#include "widgets/widget_util.h"

using namespace gllm::gui;

class TestMonitor : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void emaMatchesIndependentLoop() {
    const std::vector<double> x{4, 3, 5, 2, 2.5, 1};
    const double w = 0.7;
    const auto s = MonitorPanel::ema(x, w);
    double m = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      m = w * m + (1 - w) * x[i];
      QVERIFY(std::fabs(s[i] - m / (1 - std::pow(w, double(i + 1)))) < 1e-12);
    }
    QCOMPARE(MonitorPanel::ema(x, 0.0), x);
  }
  void coalescesRedrawsAndOverlaysRuns() {
    MonitorPanel m;
    m.resize(900, 600);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.redrawNow();
    const int before = m.redrawCount();
    QElapsedTimer t;
    t.start();
    for (int i = 1; i <= 2000; ++i) {
      m.addPoint("a", "loss",
                 {double(i), 1000.0 * i, 1e6 * i, 0.01 * i, 5.0 / std::sqrt(double(i))});
      m.addPoint("b", "loss",
                 {double(i), 1000.0 * i, 1e6 * i, 0.01 * i, 6.0 / std::sqrt(double(i))});
      if (i % 50 == 0) QCoreApplication::processEvents();
    }
    QTRY_VERIFY(!m.redrawPending());
    const double elapsedMs = t.elapsed();
    const int redraws = m.redrawCount() - before;
    // A 40 ms single-shot timer: at most one redraw per 40 ms of wall time (plus the final one).
    QVERIFY2(redraws <= elapsedMs / 40.0 + 2,
             qPrintable(QString("%1 redraws in %2 ms").arg(redraws).arg(elapsedMs)));
    QVERIFY(redraws >= 1);
    QCOMPARE(m.runs(), QStringList({"a", "b"}));
    QCOMPARE(m.seriesCount("loss"), 4);  // raw + EMA for each run
    // Log axes are real logarithmic axes.
    m.setLogY(true);
    m.setLogX(true);
    m.redrawNow();
    QChart* c = m.chartFor("loss");
    QVERIFY(qobject_cast<QLogValueAxis*>(c->axes(Qt::Vertical).first()));
    QVERIFY(qobject_cast<QLogValueAxis*>(c->axes(Qt::Horizontal).first()));
    // x axis switches to tokens: the last point's x is the token count.
    m.setXAxis(MonitorPanel::XAxis::Tokens);
    m.setLogX(false);
    m.redrawNow();
    auto* s = qobject_cast<QLineSeries*>(m.chartFor("loss")->series().last());
    QVERIFY(s);
    QCOMPARE(s->points().last().x(), 2000.0 * 1000.0);
  }
  void niceTickIntervals_data() {
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<double>("interval");
    QTest::addColumn<QString>("format");
    // Ranges read off a 400-step tiny-cpu run's charts.
    QTest::newRow("steps") << 1.0 << 400.0 << 100.0 << "%.0f";
    QTest::newRow("loss") << 4.833 << 9.172 << 1.0 << "%.0f";
    QTest::newRow("bpb") << 1.851 << 2.153 << 0.05 << "%.2f";
    QTest::newRow("memory") << 563.8 << 581.1 << 5.0 << "%.0f";
    QTest::newRow("tokens/s") << 4044.0 << 5937.0 << 500.0 << "%.0f";
    QTest::newRow("tokens") << 0.0 << 819200.0 << 200000.0 << "%.0f";
    QTest::newRow("empty chart") << 0.0 << 1.0 << 0.2 << "%.1f";
    QTest::newRow("negative") << -0.37 << 0.12 << 0.1 << "%.1f";
    QTest::newRow("millions") << 0.0 << 4e7 << 1e7 << "%.3g";
    QTest::newRow("tiny") << 1e-5 << 3e-5 << 5e-6 << "%.3g";
    // The EMA of a constant 1000 tokens/s: a range of rounding errors gets fixed ticks, not 5e-14.
    QTest::newRow("rounding") << 1000.0 << 1000.0000000000002 << 0.0 << "%.3g";
  }
  void niceTickIntervals() {
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(double, interval);
    QFETCH(QString, format);
    const double got = niceTickInterval(lo, hi);
    QVERIFY2(std::fabs(got - interval) <= 1e-9 * interval, qPrintable(QString::number(got)));
    QCOMPARE(tickLabelFormat(got, std::max(std::fabs(lo), std::fabs(hi))), format);
  }
  void niceTickIntervalIsTheSmallestThatFits() {
    // Against a brute-force scan of 1, 2, 5 × 10^k over many ranges: at most 6 ticks inside the
    // range, and the next smaller nice interval would put more.
    std::vector<double> nice;
    for (int k = -8; k <= 9; ++k)
      for (double m : {1.0, 2.0, 5.0}) nice.push_back(m * std::pow(10.0, k));
    auto ticks = [](double lo, double hi, double i) {
      if ((hi - lo) / i > 7) return 7;  // a range this long holds at least 7 multiples
      int n = 0;
      for (double t = std::ceil(lo / i - 1e-9) * i; t <= hi * (1 + 1e-12) + 1e-300; t += i) ++n;
      return n;
    };
    QRandomGenerator rng(7);
    for (int trial = 0; trial < 500; ++trial) {
      const double scale = std::pow(10.0, rng.bounded(12.0) - 4);
      const double lo = (rng.generateDouble() - 0.5) * scale,
                   hi = lo + (0.01 + rng.generateDouble()) * scale;
      const double got = niceTickInterval(lo, hi);
      const auto it =
          std::find_if(nice.begin(), nice.end(), [&](double i) { return ticks(lo, hi, i) <= 6; });
      QVERIFY(it != nice.end());
      QVERIFY2(std::fabs(got - *it) <= 1e-9 * *it,
               qPrintable(QString("[%1, %2]: %3, expected %4").arg(lo).arg(hi).arg(got).arg(*it)));
    }
    // A short axis asks for fewer ticks: one per 28 px of a 90 px BPB axis is 3 (1.9, 2.0, 2.1).
    QCOMPARE(ticksThatFit(90, 28), 3);
    QCOMPARE(ticksThatFit(30, 28), 2);
    QCOMPARE(ticksThatFit(1000, 28), 6);
    QCOMPARE(ticksThatFit(0, 28), 6);  // before the first layout
    QVERIFY(std::fabs(niceTickInterval(1.851, 2.153, 3) - 0.1) < 1e-12);
    QCOMPARE(niceTickInterval(5, 5), 0.0);
    QCOMPARE(niceTickInterval(std::nan(""), 1), 0.0);
  }
  void stepAxisTicksAtRoundSteps() {
    MonitorPanel m;
    m.resize(900, 600);
    for (int i = 1; i <= 400; ++i)
      m.addPoint("a", "loss", {double(i), 2048.0 * i, 1e6 * i, 0.01 * i, 9.0 - i / 100.0});
    m.redrawNow();
    auto* x = qobject_cast<QValueAxis*>(m.chartFor("loss")->axes(Qt::Horizontal).first());
    auto* y = qobject_cast<QValueAxis*>(m.chartFor("loss")->axes(Qt::Vertical).first());
    QVERIFY(x && y);
    QCOMPARE(x->min(), 1.0);
    QCOMPARE(x->max(), 400.0);
    QCOMPARE(x->tickType(), QValueAxis::TicksDynamic);
    QCOMPARE(x->tickAnchor(), 0.0);
    QCOMPARE(x->tickInterval(), 100.0);
    QCOMPARE(x->labelFormat(), QStringLiteral("%.0f"));
    QCOMPARE(y->tickType(), QValueAxis::TicksDynamic);
    QCOMPARE(y->tickInterval(), 1.0);
  }
  void constantMetricGetsABand() {
    // tokens/s and peak memory are often constant: their EMA then wobbles by rounding only, and the
    // axis must still span a readable band around the value with round ticks.
    MonitorPanel m;
    m.resize(900, 600);
    for (int i = 1; i <= 20; ++i)
      m.addPoint("a", "tokens_per_s", {double(i), 2048.0 * i, 0.1 * i, 0.01 * i, 1000.0 / 3.0});
    m.redrawNow();
    auto* y = qobject_cast<QValueAxis*>(m.chartFor("tokens_per_s")->axes(Qt::Vertical).first());
    QVERIFY(y);
    QVERIFY2(y->min() < 320 && y->max() > 345,
             qPrintable(QString("%1 … %2").arg(y->min()).arg(y->max())));
    QCOMPARE(y->tickType(), QValueAxis::TicksDynamic);
    QCOMPARE(y->tickInterval(), 10.0);
  }
  void secondMetricIsDistinguishable() {
    // Validation BPB at every evaluation, held-out BPB once at the end: the one held-out point must
    // not look like one more validation point (same run colour, a dash that a point cannot show).
    MonitorPanel m;
    m.resize(900, 600);
    // Without runs the shared legend says how to get one, in the two lines it keeps.
    auto* legend = m.findChild<QLabel*>(QStringLiteral("monitorLegend"));
    QVERIFY(legend && legend->text().contains(QStringLiteral("No runs yet")));
    QVERIFY(legend->minimumHeight() >= 2 * legend->fontMetrics().lineSpacing());
    for (int i = 1; i <= 4; ++i)
      m.addPoint("a", "val_bpb", {100.0 * i, 1e5 * i, 1e7 * i, 0.01 * i, 2.2 - 0.1 * i});
    m.addPoint("a", "heldout_bpb", {400.0, 4e5, 4e7, 0.04, 1.86});
    m.redrawNow();
    QLineSeries *val = nullptr, *held = nullptr;
    for (QAbstractSeries* a : m.chartFor("val_bpb")->series()) {
      auto* s = qobject_cast<QLineSeries*>(a);
      if (s && s->name() == QStringLiteral("a")) val = s;
      if (s && s->name() == QStringLiteral("a · held-out BPB")) held = s;
    }
    QVERIFY2(val && held, "the BPB chart lacks the validation or the held-out series");
    // One legend entry for the run; the title says the dashed curve is the held-out one.
    QCOMPARE(m.chartFor("val_bpb")->title(), QStringLiteral("BPB, dashed: held-out"));
    QTRY_VERIFY(m.legendEntries().contains(val->name()));
    QVERIFY(!m.legendEntries().contains(held->name()));
    // The shared legend lies in the area the PNG and SVG exports draw (beside the charts); a chart
    // exported alone shows its own legend for the render and hides it again.
    QCOMPARE(legend->parentWidget(),
             m.chartFor("val_bpb")->scene()->views().first()->parentWidget());
    QTemporaryDir out;
    QVERIFY(m.exportChartPng("val_bpb", out.filePath("bpb.png"), QSize(400, 300)).isEmpty());
    QVERIFY(!m.chartFor("val_bpb")->legend()->isVisible());
    QVERIFY(val->pointsVisible() && held->pointsVisible());
    QVERIFY(val->pen().color().rgba() !=
            held->pen().color().rgba());  // the colour itself, not its spec
    QVERIFY(held->markerSize() > val->markerSize());
    QCOMPARE(held->pen().style(), Qt::DashLine);
  }

  void decimationKeepsSpikesAndEnds() {
    QList<QPointF> pts;
    for (int i = 0; i < 10000; ++i)
      pts.append(QPointF(i, std::sin(0.01 * i) + (i == 4321 ? 50 : 0) - (i == 777 ? 20 : 0)));
    const QList<QPointF> d = MonitorPanel::decimate(pts, 100, 0, 9999, false);
    QVERIFY2(d.size() <= 2 * 101 + 1, qPrintable(QString::number(d.size())));
    QVERIFY(d.size() >= 100);
    QCOMPARE(d.first(), pts.first());
    QCOMPARE(d.last(), pts.last());
    bool high = false, low = false;
    for (qsizetype i = 0; i < d.size(); ++i) {
      high = high || d[i] == pts[4321];
      low = low || d[i] == pts[777];
      if (i > 0) QVERIFY(d[i].x() > d[i - 1].x());  // original order kept
    }
    QVERIFY(high && low);
    // Every bucket keeps its extremes: the decimated curve spans the same y range as the input.
    double ymin = INFINITY, ymax = -INFINITY;
    for (const QPointF& p : d) ymin = std::min(ymin, p.y()), ymax = std::max(ymax, p.y());
    QCOMPARE(ymax, pts[4321].y());
    QCOMPARE(ymin, pts[777].y());
    // Short curves are drawn as they are; log x buckets in decades.
    QCOMPARE(MonitorPanel::decimate(pts.mid(0, 150), 100, 0, 149, false), pts.mid(0, 150));
    QList<QPointF> logPts;
    for (int i = 1; i <= 10000; ++i) logPts.append(QPointF(i, 1.0 / i));
    const QList<QPointF> dl = MonitorPanel::decimate(logPts, 50, 0, 4, true);
    QVERIFY(dl.size() <= 2 * 51 + 1);
    QCOMPARE(dl[1], logPts[1]);  // the first decade is sparse: its points survive one by one
  }
  void redrawsKeepSeriesAlive() {
    MonitorPanel m;
    m.resize(900, 600);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    for (int i = 1; i <= 5000; ++i)
      m.addPoint("a", "loss",
                 {double(i), 10.0 * i, NAN, 0.1 * i, i == 2500 ? 40.0 : 4.0 - i * 1e-4});
    m.redrawNow();
    QChart* c = m.chartFor("loss");
    const QList<QAbstractSeries*> series = c->series();
    QCOMPARE(series.size(), 2);
    auto* raw = qobject_cast<QLineSeries*>(series[0]);
    auto* main = qobject_cast<QLineSeries*>(series[1]);
    QVERIFY(raw && main);
    QVERIFY2(raw->count() < 2500, qPrintable(QString::number(raw->count())));
    QCOMPARE(m.drawnPointCount("loss"), int(raw->count() + main->count()));
    bool spike = false;
    for (const QPointF& p : raw->points()) spike = spike || p.y() == 40.0;
    QVERIFY(spike);
    QCOMPARE(main->points().last().x(), 5000.0);
    QCOMPARE(main->points().last().y(), m.smoothed("a", "loss").back());
    // The shared legend names the smoothed curve, never its raw twin; the charts' own legends
    // stay hidden (they would elide the names).
    QCOMPARE(m.legendEntries(), QStringList({main->name()}));
    QVERIFY(!c->legend()->isVisible());
    QAbstractAxis* x = c->axes(Qt::Horizontal).first();
    QAbstractAxis* y = c->axes(Qt::Vertical).first();
    // More points: the same series and axes, new data.
    for (int i = 5001; i <= 5100; ++i)
      m.addPoint("a", "loss", {double(i), 10.0 * i, NAN, 0.1 * i, 3.0});
    QTRY_VERIFY(!m.redrawPending());
    QCOMPARE(c->series(), series);
    QCOMPARE(c->axes(Qt::Horizontal).first(), x);
    QCOMPARE(c->axes(Qt::Vertical).first(), y);
    QCOMPARE(main->points().last().x(), 5100.0);
    QCOMPARE(qobject_cast<QValueAxis*>(x)->max(), 5100.0);
    // The incremental EMA equals the batch EMA of the same values, also after the weight changes.
    for (double w : {0.6, 0.9}) {
      m.setSmoothing(w);
      m.redrawNow();
      std::vector<double> v;
      for (const auto& p : m.points("a", "loss")) v.push_back(p.value);
      const auto batch = MonitorPanel::ema(v, w);
      const auto inc = m.smoothed("a", "loss");
      QCOMPARE(inc.size(), batch.size());
      for (size_t i = 0; i < inc.size(); ++i) QVERIFY(std::fabs(inc[i] - batch[i]) < 1e-12);
    }
    // Log y and back: the axes change kind, the series stay and follow.
    m.setLogY(true);
    m.redrawNow();
    auto* logY = qobject_cast<QLogValueAxis*>(c->axes(Qt::Vertical).first());
    QVERIFY(logY);
    QCOMPARE(c->series(), series);
    QVERIFY(main->attachedAxes().contains(logY));
    QVERIFY(raw->attachedAxes().contains(logY));
    m.setLogY(false);
    m.setXAxis(MonitorPanel::XAxis::Wall);
    m.redrawNow();
    QVERIFY(qobject_cast<QValueAxis*>(c->axes(Qt::Vertical).first()));
    QCOMPARE(c->axes(Qt::Vertical).size(), 1);
    QCOMPARE(c->axes(Qt::Horizontal).size(), 1);
    QCOMPARE(main->points().last().x(), 510.0);
    QCOMPARE(c->axes(Qt::Horizontal).first()->titleText(), QStringLiteral("wall time (s)"));
    // No smoothing: only the raw curve is drawn (one series); with smoothing the raw one returns
    // without a legend entry.
    m.setSmoothing(0);
    m.redrawNow();
    QCOMPARE(m.seriesCount("loss"), 1);
    QCOMPARE(main->points().last().y(), 3.0);
    m.setSmoothing(0.5);
    m.redrawNow();
    QCOMPARE(m.seriesCount("loss"), 2);
    QCOMPARE(m.legendEntries(), QStringList({main->name()}));
    // A removed run takes its series with it.
    m.addPoint("b", "loss", {1, 10, NAN, 0.1, 2.0});
    m.redrawNow();
    QCOMPARE(m.seriesCount("loss"), 4);
    m.removeRun("a");
    m.redrawNow();
    QCOMPARE(m.seriesCount("loss"), 2);
    QCOMPARE(qobject_cast<QLineSeries*>(c->series().last())->name(), QStringLiteral("b"));
  }
  void exportsAreReadable() {
    MonitorPanel m;
    m.resize(800, 500);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0.5);
    for (int i = 1; i <= 10; ++i)
      m.addPoint("run,1", "val_bpb", {double(i), 10.0 * i, NAN, double(i), 3.0 - 0.1 * i});
    QTemporaryDir dir;
    QVERIFY(m.exportPng(dir.filePath("m.png")).isEmpty());
    QImage img(dir.filePath("m.png"));
    QVERIFY(!img.isNull());
    QVERIFY(img.width() > 100 && img.height() > 100);
    const QString svgErr = m.exportSvg(dir.filePath("m.svg"));
    QVERIFY2(svgErr.isEmpty(), qPrintable(svgErr));
    QFile svg(dir.filePath("m.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray svgText = svg.readAll();
    QVERIFY(svgText.contains("<svg"));
    QVERIFY(svgText.contains("path") || svgText.contains("polyline"));
    QVERIFY(m.exportCsv(dir.filePath("m.csv")).isEmpty());
    QFile csv(dir.filePath("m.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 11);
    QCOMPARE(lines[0],
             QStringLiteral("run,run_folder,seed,metric,step,tokens,flops,wall_s,value,ema,group,"
                            "seeds,band,band_of,band_low,band_high"));
    QVERIFY(lines[1].startsWith("\"run,1\",,,val_bpb,1,10,,1,2.9,2.9,"));
    const auto ema = m.smoothed("run,1", "val_bpb");
    // A run of no seed group: its group and band columns are empty.
    QVERIFY(lines[10].endsWith(",,,,,,"));
    QCOMPARE(lines[10].section(',', 10, 10), QString::number(ema.back(), 'g', 12));
  }
  void loadsMetricsFile() {
    QTemporaryDir dir;
    QFile f(dir.filePath("metrics.jsonl"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "{\"step\":1,\"tokens\":100,\"loss\":5.0,\"flops\":1000,\"wall_s\":0.5,\"tokens_per_s\":"
        "200,\"peak_mem_mib\":50}\n");
    f.write("{\"step\":2,\"tokens\":200,\"val_bpb\":2.5,\"wall_s\":1.0}\n");
    f.close();
    MonitorPanel m;
    QVERIFY(m.loadMetricsFile("r", f.fileName()).isEmpty());
    QCOMPARE(m.points("r", "loss").size(), size_t(1));
    QCOMPARE(m.points("r", "val_bpb").size(), size_t(1));
    QCOMPARE(m.points("r", "val_bpb")[0].flops, 2000.0);  // placed by FLOPs per token
    QVERIFY(!m.loadMetricsFile("x", dir.filePath("missing.jsonl")).isEmpty());
  }
};

QTEST_MAIN(TestMonitor)
#include "test_widgets_monitor.moc"
