// GUI test of the heatmaps: head average and single-head views equal direct sums, A − B uses a
// diverging scale centred at 0, hovering shows the cell's value, mismatched shapes are refused.
#include <QtTest>

#include "widgets/attention_cost_panel.h"
#include "widgets/heatmap_panel.h"

using namespace gllm::gui;

static GradeGrid ramp(double scale) {
  GradeGrid g = GradeGrid::zeros(3, 2, 4);
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 2; ++h)
      for (int p = 0; p < 4; ++p) g.at(l, h, p) = scale * (l + 10 * h + 0.1 * p);
  return g;
}

class TestHeatmap : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void viewsAndDifference() {
    HeatmapPanel panel;
    panel.resize(700, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setSource("A", ramp(1.0), ramp(0.5));
    panel.setSource("B", ramp(0.5), GradeGrid{});
    panel.setSourceA("A");
    panel.setHead(-1);
    const HeatmapData& d = panel.heatmap()->data();
    QCOMPARE(d.rows, 3);
    QCOMPARE(d.cols, 4);
    QCOMPARE(d.at(2, 3), (2 + 0.3 + 2 + 10 + 0.3) / 2.0);
    panel.setHead(1);
    QCOMPARE(panel.heatmap()->data().at(1, 2), 1 + 10 + 0.2);
    panel.setSourceB("B");
    QCOMPARE(panel.heatmap()->scale(), HeatmapWidget::Scale::Diverging);
    QCOMPARE(panel.heatmap()->data().at(1, 2), 0.5 * (1 + 10 + 0.2));
    QCOMPARE(panel.heatmap()->rangeLow(), -panel.heatmap()->rangeHigh());
    // Hover shows the value.
    QApplication::processEvents();
    const QRect cell = panel.heatmap()->cellRect(1, 2);
    QVERIFY(cell.isValid());
    QTest::mouseMove(panel.heatmap(), cell.center());
    QTRY_VERIFY(panel.heatmap()->hoverText().contains("5.6"));
    // The query scale of B is missing: the status says so.
    panel.setQuantity(HeatmapPanel::QueryScale);
    panel.setSourceB(QString());
    panel.setSourceA("B");
    QVERIFY(panel.statusText().contains("no"));
    // Shapes must match for A − B.
    panel.setQuantity(HeatmapPanel::Grades);
    panel.setSource("C", GradeGrid::zeros(2, 2, 4), GradeGrid{});
    panel.setSourceA("A");
    panel.setSourceB("C");
    QVERIFY(panel.statusText().contains("same shape"));
  }
  void sourceOpensOnTheQuantityItHolds() {
    // A run with query scale and no graded attention (seed 001's arms) opens on exp(q_τ).
    HeatmapPanel panel;
    panel.setQuantity(HeatmapPanel::Grades);
    panel.setSource("scale only", GradeGrid{}, ramp(0.5));
    QCOMPARE(panel.quantity(), HeatmapPanel::QueryScale);
    QCOMPARE(panel.heatmap()->data().rows, 3);
    QVERIFY2(panel.statusText().contains("showing exp(q_τ)"), qPrintable(panel.statusText()));
    // A source holding both keeps the user's choice.
    panel.setSource("both", ramp(1.0), ramp(0.5));
    panel.setSourceA("both");
    panel.setQuantity(HeatmapPanel::Grades);
    QCOMPARE(panel.quantity(), HeatmapPanel::Grades);
    QVERIFY(!panel.statusText().contains("showing"));
  }
  void attentionEmptyStateAndGrid() {
    AttentionCostPanel p;
    QTemporaryDir dir;
    QCOMPARE(p.setResultsDir(dir.path()), 0);
    QVERIFY(p.isEmptyState());
    QFile f(dir.filePath("attention-1.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        R"({"kind":"attention","lengths":[128,256],"widths":[64,128,256],"overhead":[[0.01,0.02],[0.03,-0.01],[0.0,0.05]],"head_dim":64,"batch":1,"repeats":3})");
    f.close();
    QCOMPARE(p.setResultsDir(dir.path()), 1);
    QVERIFY(!p.isEmptyState());
    QCOMPARE(p.heatmap()->data().rows, 3);
    QCOMPARE(p.heatmap()->data().at(1, 0), 3.0);  // percent
  }
};

QTEST_MAIN(TestHeatmap)
#include "test_widgets_heatmap.moc"
