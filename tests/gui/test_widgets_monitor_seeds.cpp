// Seed groups in the monitor: runs whose configs differ only in train.seed are drawn as one mean
// curve with a band (values checked by hand), named once in the legend; the per-chart "seeds"
// toggle shows the individual seeds; the CSV and PNG exports carry the band.
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QtTest>
#include <cmath>

#include "widgets/monitor_panel.h"

using namespace gllm::gui;

namespace {

nlohmann::json config(int seed) {
  return {
      {"name", "arm-a"}, {"model", {{"n_layer", 2}}}, {"train", {{"seed", seed}, {"steps", 40}}}};
}

// Three seeds of arm-a whose losses sit 4.0, 4.6 and 5.2 above a shared decay, and a fourth run of
// another config.
void fill(MonitorPanel& m) {
  const double offset[] = {4.0, 4.6, 5.2};
  for (int s = 0; s < 3; ++s) m.setRunConfig(QStringLiteral("arm-a s%1").arg(s + 1), config(s + 1));
  nlohmann::json other = config(1);
  other["name"] = "arm-b";
  m.setRunConfig("arm-b s1", other);
  for (int step = 1; step <= 40; ++step) {
    for (int s = 0; s < 3; ++s)
      m.addPoint(QStringLiteral("arm-a s%1").arg(s + 1), "loss",
                 {double(step), 100.0 * step, NAN, 0.1 * step, offset[s] + 1.0 / step});
    m.addPoint("arm-b s1", "loss", {double(step), 100.0 * step, NAN, 0.1 * step, 3.0 + 1.0 / step});
  }
  for (int s = 0; s < 3; ++s)
    m.addPoint(QStringLiteral("arm-a s%1").arg(s + 1), "val_bpb",
               {40, 4000, NAN, 4, 2.0 + 0.1 * s});
}

template <class T>
QList<T*> seriesOf(QChart* c) {
  QList<T*> out;
  for (QAbstractSeries* s : c->series())
    if (auto* t = qobject_cast<T*>(s); t && t->isVisible()) out << t;
  return out;
}

}  // namespace

class TestMonitorSeeds : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void groupDrawnAsMeanWithBand() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0);
    fill(m);
    m.redrawNow();
    QChart* c = m.chartFor("loss");
    const auto areas = seriesOf<QAreaSeries>(c);
    QCOMPARE(areas.size(), 1);
    const auto lines = seriesOf<QLineSeries>(c);
    QCOMPARE(lines.size(), 2);  // the group's mean and arm-b's curve (unsmoothed: no raw twin)
    QLineSeries* mean = nullptr;
    for (QLineSeries* l : lines)
      if (l->name().startsWith("arm-a")) mean = l;
    QVERIFY(mean);
    QCOMPARE(mean->name(), QStringLiteral("arm-a · 3 seeds"));
    QCOMPARE(c->title(), QStringLiteral("Training loss · mean ± 95 % t"));
    // Mean and 95 % t band at step 10: values 4.1, 4.7, 5.3 → 4.7 ± 4.302653 · 0.6 / √3.
    const QPointF p10 = mean->points()[9];
    QCOMPARE(p10.x(), 10.0);
    QVERIFY(std::fabs(p10.y() - 4.7) < 1e-9);
    const QPointF hi = areas[0]->upperSeries()->points()[9],
                  lo = areas[0]->lowerSeries()->points()[9];
    QVERIFY2(std::fabs(hi.y() - (4.7 + 1.490483)) < 2e-6,
             qPrintable(QString::number(hi.y(), 'g', 10)));
    QVERIFY(std::fabs(lo.y() - (4.7 - 1.490483)) < 2e-6);
    // The legend names the group once, and none of its seeds; the band has no entry.
    QTRY_VERIFY(m.legendEntries().contains(mean->name()));
    const QStringList legend = m.legendEntries();
    QCOMPARE(legend.filter("arm-a").size(), 1);
    QVERIFY(!legend.contains("arm-a s1") && !legend.contains("arm-a s2"));
    QVERIFY(legend.contains("arm-b s1"));
    // The BPB chart groups its three validation points (one step, three seeds) the same way.
    QCOMPARE(seriesOf<QAreaSeries>(m.chartFor("val_bpb")).size(), 1);
  }

  void seedsToggleIsPerChart() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0);
    QVERIFY(m.seedToggle("loss")->isHidden());  // no seed group yet: no toggle
    fill(m);
    m.redrawNow();
    QCheckBox* toggle = m.seedToggle("loss");
    QVERIFY(toggle && !toggle->isHidden() && !toggle->isChecked());
    toggle->click();  // as a user does
    QVERIFY(m.showsSeeds("loss"));
    m.redrawNow();
    QChart* c = m.chartFor("loss");
    QCOMPARE(seriesOf<QAreaSeries>(c).size(), 0);
    QStringList names;
    for (QLineSeries* l : seriesOf<QLineSeries>(c)) names << l->name();
    names.sort();
    QCOMPARE(names, QStringList({"arm-a s1", "arm-a s2", "arm-a s3", "arm-b s1"}));
    // The other charts keep their groups.
    QVERIFY(!m.showsSeeds("val_bpb"));
    QCOMPARE(seriesOf<QAreaSeries>(m.chartFor("val_bpb")).size(), 1);
    // And back.
    toggle->click();
    m.redrawNow();
    QCOMPARE(seriesOf<QAreaSeries>(c).size(), 1);
    QCOMPARE(seriesOf<QLineSeries>(c).size(), 2);
  }

  // Issue 42, point 7: the shared legend speaks for all four charts, so one chart's seeds toggle
  // leaves it as it was (names and colours); that chart draws the seeds in shades of their
  // group's colour.
  void seedsToggleKeepsTheSharedLegend() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0);
    fill(m);
    m.redrawNow();
    auto* legend = m.findChild<QLabel*>(QStringLiteral("monitorLegend"));
    QVERIFY(legend);
    const QString before = legend->text();
    const QStringList names = m.legendEntries();
    QVERIFY2(names.filter("arm-a").size() == 1, qPrintable(names.join(", ")));
    QColor group;
    for (QLineSeries* l : seriesOf<QLineSeries>(m.chartFor("loss")))
      if (l->name().startsWith("arm-a")) group = l->pen().color();
    QVERIFY(group.isValid());
    m.seedToggle("loss")->click();
    m.redrawNow();
    QCOMPARE(m.legendEntries(), names);
    QCOMPARE(legend->text(), before);
    int shades = 0;
    for (QLineSeries* l : seriesOf<QLineSeries>(m.chartFor("loss"))) {
      if (!l->name().startsWith("arm-a s")) continue;
      ++shades;
      const QColor c = l->pen().color();
      QVERIFY2(std::abs(c.hslHue() - group.hslHue()) <= 12 || group.hslSaturation() < 20,
               qPrintable(QString("%1: hue %2, its group's %3")
                              .arg(l->name())
                              .arg(c.hslHue())
                              .arg(group.hslHue())));
    }
    QCOMPARE(shades, 3);
  }

  void csvCarriesTheBand() {
    MonitorPanel m;
    m.setSmoothing(0);
    fill(m);
    QTemporaryDir dir;
    QVERIFY(m.exportCsv(dir.filePath("m.csv")).isEmpty());
    QFile f(dir.filePath("m.csv"));
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines[0],
             QStringLiteral("run,run_folder,seed,metric,step,tokens,flops,wall_s,value,ema,group,"
                            "seeds,band,band_of,band_low,band_high"));
    // Per-run rows name their group; arm-b is a group of one (no group column).
    QVERIFY(lines.filter(QRegularExpression("^arm-a s2,,2,loss,10,1000,,1,4.7,4.7,arm-a,,,,,$"))
                .size() == 1);
    QVERIFY(
        lines.filter(QRegularExpression("^arm-b s1,,1,loss,10,1000,,1,3.1,3.1,,,,,,$")).size() ==
        1);
    // The group row of step 10: mean 4.7 of three seeds with its 95 % t band.
    const QStringList group = lines.filter(QRegularExpression("^arm-a,,,loss,10,"));
    QCOMPARE(group.size(), 1);
    const QStringList f10 = group[0].split(',');
    QCOMPARE(f10.size(), 16);
    QCOMPARE(f10[5], QStringLiteral("1000"));
    QVERIFY(std::fabs(f10[8].toDouble() - 4.7) < 1e-9);
    QCOMPARE(f10[10], QStringLiteral("arm-a"));
    QCOMPARE(f10[11], QStringLiteral("3"));
    QCOMPARE(f10[12], QStringLiteral("t95"));
    QCOMPARE(f10[13], QStringLiteral("value"));
    QVERIFY(std::fabs(f10[14].toDouble() - (4.7 - 1.490483)) < 2e-6);
    QVERIFY(std::fabs(f10[15].toDouble() - (4.7 + 1.490483)) < 2e-6);
    QCOMPARE(lines.filter(QRegularExpression("^arm-a,,,loss,")).size(), 40);
    QCOMPARE(lines.filter(QRegularExpression("^arm-b,")).size(), 0);  // no group row for one run
  }

  void pngCarriesTheBand() {
    MonitorPanel m;
    m.resize(1000, 700);
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    m.setSmoothing(0);
    fill(m);
    m.redrawNow();
    QTest::qWait(50);
    m.redrawNow();
    // A point inside the band, above every seed's curve: between the highest seed (5.2 + 1/20)
    // and the band's upper edge at step 20.
    QChart* c = m.chartFor("loss");
    const auto areas = seriesOf<QAreaSeries>(c);
    QCOMPARE(areas.size(), 1);
    const double top = areas[0]->upperSeries()->points()[19].y();
    const QPointF inChart = c->mapToPosition(QPointF(20, (5.25 + top) / 2), areas[0]);
    auto* view = qobject_cast<QChartView*>(c->scene()->views().first());
    QWidget* area = view->parentWidget();
    const QPoint inArea = view->viewport()->mapTo(area, view->mapFromScene(inChart));
    QTemporaryDir dir;
    QVERIFY(m.exportPng(dir.filePath("grouped.png")).isEmpty());
    m.setShowSeeds("loss", true);
    m.redrawNow();
    QVERIFY(m.exportPng(dir.filePath("seeds.png")).isEmpty());
    const QImage grouped(dir.filePath("grouped.png")), seeds(dir.filePath("seeds.png"));
    QVERIFY(grouped.rect().contains(inArea));
    const QColor band = grouped.pixelColor(inArea), plain = seeds.pixelColor(inArea);
    // The band is a tinted fill over the plot's background; without it the pixel is background.
    QVERIFY2(band != plain, qPrintable(QString("%1 vs %2").arg(band.name(), plain.name())));
    QVERIFY2(band.blue() > band.red(), qPrintable(band.name()));  // the first series colour is blue
  }
};

QTEST_MAIN(TestMonitorSeeds)
#include "test_widgets_monitor_seeds.moc"
