// GUI test of the chart monitor: EMA against an independent loop, coalesced redraws, true log
// axes, several runs overlaid, and PNG / SVG / CSV exports read back and checked.
#include <QtTest>
#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <cmath>

#include "widgets/monitor_panel.h"

using namespace gllm::gui;

class TestMonitor : public QObject {
  Q_OBJECT
 private slots:
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
      m.addPoint("a", "loss", {double(i), 1000.0 * i, 1e6 * i, 0.01 * i, 5.0 / std::sqrt(double(i))});
      m.addPoint("b", "loss", {double(i), 1000.0 * i, 1e6 * i, 0.01 * i, 6.0 / std::sqrt(double(i))});
      if (i % 50 == 0) QCoreApplication::processEvents();
    }
    QTRY_VERIFY(!m.redrawPending());
    const double elapsedMs = t.elapsed();
    const int redraws = m.redrawCount() - before;
    // A 40 ms single-shot timer: at most one redraw per 40 ms of wall time (plus the final one).
    QVERIFY2(redraws <= elapsedMs / 40.0 + 2, qPrintable(QString("%1 redraws in %2 ms").arg(redraws).arg(elapsedMs)));
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
  void exportsAreReadable() {
    MonitorPanel m;
    m.resize(800, 500);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0.5);
    for (int i = 1; i <= 10; ++i) m.addPoint("run,1", "val_bpb", {double(i), 10.0 * i, NAN, double(i), 3.0 - 0.1 * i});
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
    QCOMPARE(lines[0], QStringLiteral("run,metric,step,tokens,flops,wall_s,value,ema"));
    QVERIFY(lines[1].startsWith("\"run,1\",val_bpb,1,10,,1,2.9,2.9"));
    const auto ema = m.smoothed("run,1", "val_bpb");
    QCOMPARE(lines[10].section(',', -1).toDouble(), QString::number(ema.back(), 'g', 12).toDouble());
  }
  void loadsMetricsFile() {
    QTemporaryDir dir;
    QFile f(dir.filePath("metrics.jsonl"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"step\":1,\"tokens\":100,\"loss\":5.0,\"flops\":1000,\"wall_s\":0.5,\"tokens_per_s\":200,\"peak_mem_mib\":50}\n");
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
