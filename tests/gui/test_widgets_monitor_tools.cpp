// Charts you can read and point at (issue 28, point 4): the hover readout names step, tokens and
// each visible curve's value; zoom and pan hold while points arrive and reset; runs hide and show;
// the CSV carries run folder and seed; PNGs export at a chosen resolution, per chart too.
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QValueAxis>
#include <QXYSeries>
#include <QtTest>

#include "widgets/monitor_panel.h"

using namespace gllm::gui;

namespace {

nlohmann::json config(const char* name, int seed) {
  return {{"name", name}, {"train", {{"seed", seed}, {"steps", 100}}}};
}

void fill(MonitorPanel& m) {
  m.setRunConfig("a-s1", config("a", 1));
  m.setRunConfig("b-s7", config("b", 7));
  m.setRunFolder("a-s1", "/runs/a-s1");
  m.setRunFolder("b-s7", "/runs/b-s7");
  for (int step = 1; step <= 100; ++step) {
    m.addPoint("a-s1", "loss", {double(step), 64.0 * step, NAN, 0.1 * step, 5.0 + 1.0 / step});
    m.addPoint("b-s7", "loss", {double(step), 64.0 * step, NAN, 0.1 * step, 4.0 + 1.0 / step});
  }
}

QValueAxis* xAxis(QChart* c) {
  for (QAbstractAxis* a : c->axes(Qt::Horizontal))
    if (auto* v = qobject_cast<QValueAxis*>(a)) return v;
  return nullptr;
}

}  // namespace

class TestMonitorTools : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void hoverReadout() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0);
    fill(m);
    m.redrawNow();
    const QString r = m.readoutAt("loss", 50.2);
    QVERIFY2(r.contains("step 50") && r.contains("tokens 3200") && r.contains("5.02 a-s1") &&
                 r.contains("4.02 b-s7"),
             qPrintable(r));
    // A hidden run leaves the readout and the chart.
    const int shown = m.seriesCount("loss");
    m.setRunVisible("b-s7", false);
    m.redrawNow();
    QVERIFY(!m.readoutAt("loss", 50).contains("b-s7"));
    QVERIFY(m.seriesCount("loss") < shown);
    m.setRunVisible("b-s7", true);
    m.redrawNow();
    QCOMPARE(m.seriesCount("loss"), shown);
    // The Runs menu lists each run, checked while shown.
    QMenu* menu = m.runsMenu();
    QMetaObject::invokeMethod(menu, "aboutToShow");
    QStringList items;
    for (QAction* a : menu->actions()) items << a->text() + (a->isChecked() ? "+" : "-");
    QCOMPARE(items, QStringList({"a-s1+", "b-s7+"}));
    // Moving the mouse over the plot shows the readout under the bar.
    QChart* c = m.chartFor("loss");
    QChartView* view = nullptr;
    for (QChartView* v : m.findChildren<QChartView*>())
      if (v->chart() == c) view = v;
    QVERIFY(view);
    const QPointF mid = c->plotArea().center();
    const QPoint at = view->mapFromScene(c->mapToScene(mid));
    QMouseEvent move(QEvent::MouseMove, QPointF(at), view->viewport()->mapToGlobal(QPointF(at)),
                     Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(view->viewport(), &move);
    QVERIFY2(m.readoutText().startsWith("step ") && m.readoutText().contains("a-s1"),
             qPrintable(m.readoutText()));
  }

  // A run folder's start time is left out of the legend unless two runs would then read alike.
  // Issue 42, point 7: hiding the only run leaves no curve or mark in any chart, and the legend
  // says the runs are hidden (and how to show them), not that there are none.
  void hidingTheOnlyRun() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setRunConfig("a-s1", config("a", 1));
    for (int step = 1; step <= 20; ++step)
      m.addPoint("a-s1", "loss", {double(step), 64.0 * step, NAN, 0.1 * step, 5.0 + 1.0 / step});
    m.addPoint("a-s1", "val_bpb", {20, 1280, NAN, 2, 2.5});
    m.addPoint("a-s1", "heldout_bpb", {20, 1280, NAN, 2, 2.6});
    m.redrawNow();
    m.setRunVisible("a-s1", false);
    m.redrawNow();
    for (const char* metric : {"loss", "val_bpb", "tokens_per_s", "peak_mem_mib"}) {
      QChart* c = m.chartFor(metric);
      QVERIFY(c);
      for (QAbstractSeries* s : c->series()) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        QVERIFY2(!s->isVisible() || !xy || xy->count() == 0,
                 qPrintable(QString("%1: %2 still drawn").arg(metric, s->name())));
      }
    }
    auto* legend = m.findChild<QLabel*>(QStringLiteral("monitorLegend"));
    QVERIFY(legend);
    QVERIFY2(!legend->text().contains("No runs yet") && legend->text().contains("hidden"),
             qPrintable(legend->text()));
    m.setRunVisible("a-s1", true);
    m.redrawNow();
    QVERIFY(m.legendEntries().contains("a-s1"));
  }

  void legendNamesAreShort() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    for (const char* run :
         {"tiny-cpu-s42-20261202-120000", "tiny-cpu+steps=150-s42-20261202-130000",
          "tiny-cpu+steps=150-s42-20261202-140000-2"})
      m.addPoint(run, "loss", {1, 64, NAN, 0.1, 5.0});
    m.redrawNow();
    QStringList names;
    for (QAbstractSeries* s : m.chartFor("loss")->series())
      if (s->isVisible() && !s->name().endsWith("(raw)")) names << s->name();
    names.sort();
    QCOMPARE(names, QStringList({"tiny-cpu+steps=150-s42-20261202-130000",
                                 "tiny-cpu+steps=150-s42-20261202-140000-2", "tiny-cpu-s42"}));
  }

  void legendEntriesStayWhole() {
    // A wrapped legend breaks between entries only: "ladder-random · 5 seeds" never splits at its
    // hyphen or spaces onto two lines (no-break hyphens and spaces inside an entry).
    MonitorPanel m;
    m.resize(520, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    for (const char* run : {"ladder-uniform-s41", "ladder-random-s41", "ladder-pos-s41"})
      m.addPoint(run, "loss", {1, 64, NAN, 0.1, 5.0});
    m.redrawNow();
    auto* legend = m.findChild<QLabel*>(QStringLiteral("monitorLegend"));
    QVERIFY(legend);
    QCOMPARE(m.legendEntries().size(), 3);
    const QString html = legend->text();
    for (const QString& name : m.legendEntries()) {
      QString whole = name;
      whole.replace(QLatin1Char(' '), QStringLiteral("&nbsp;")).replace('-', QChar(0x2011));
      QVERIFY2(html.contains(whole), qPrintable(name + " not whole in " + html));
    }
    QVERIFY2(!html.contains(QLatin1Char('-')), qPrintable(html));
  }

  void zoomHoldsAndResets() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    fill(m);
    m.redrawNow();
    QValueAxis* x = xAxis(m.chartFor("loss"));
    QVERIFY(x);
    const double fullMax = x->max();
    QVERIFY(fullMax >= 100);
    m.zoomChart("loss", 2.0);
    QVERIFY(m.isZoomed("loss"));
    const double zoomedMax = x->max();
    QVERIFY(zoomedMax < fullMax);
    m.panChart("loss", -30, 0);  // pan left
    QVERIFY(x->max() < zoomedMax);
    const double pannedMax = x->max();
    // New points do not undo the zoom.
    m.addPoint("a-s1", "loss", {101, 6464, NAN, 10.1, 5.01});
    m.redrawNow();
    QCOMPARE(x->max(), pannedMax);
    m.resetZoom();
    QVERIFY(!m.isZoomed("loss"));
    QVERIFY(x->max() >= 101);
  }

  void csvAndResolution() {
    MonitorPanel m;
    m.resize(900, 600);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    fill(m);
    m.redrawNow();
    QTemporaryDir dir;
    QVERIFY(m.exportCsv(dir.filePath("m.csv")).isEmpty());
    QFile f(dir.filePath("m.csv"));
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY(lines[0].startsWith("run,run_folder,seed,metric,step"));
    QVERIFY(lines.filter(QRegularExpression("^b-s7,/runs/b-s7,7,loss,50,3200,")).size() == 1);
    // PNGs at a chosen resolution: the whole monitor and a single chart.
    QVERIFY(m.exportPng(dir.filePath("all.png"), QSize(2400, 1600)).isEmpty());
    QCOMPARE(QImage(dir.filePath("all.png")).size(), QSize(2400, 1600));
    QVERIFY(m.exportChartPng("loss", dir.filePath("loss.png"), QSize(1600, 1000)).isEmpty());
    const QImage loss(dir.filePath("loss.png"));
    QCOMPARE(loss.size(), QSize(1600, 1000));
    // Not blank: the chart was drawn into it.
    QSet<QRgb> colours;
    for (int y = 0; y < loss.height(); y += 20)
      for (int x = 0; x < loss.width(); x += 20) colours.insert(loss.pixel(x, y));
    QVERIFY(colours.size() > 3);
    QVERIFY(!m.exportChartPng("nope", dir.filePath("x.png")).isEmpty());
  }
};

QTEST_MAIN(TestMonitorTools)
#include "test_widgets_monitor_tools.moc"
