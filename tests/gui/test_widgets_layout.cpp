// The workbench at 1440 × 900 and 1280 × 800 as a new user sees it: the attention-cost panel
// opens the newest result and shows its heatmap whole, the raised checkpoint inspector gets room
// for its chart and headers, every panel fits its dock's width, and the cone panel starts on the
// estimated profiles when the data cache has them.
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QGraphicsTextItem>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "engine/grading/profiles.h"
#include "engine/io/safetensors.h"
#include "tests/support/workbench_env.h"
#include "widgets/attention_cost_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/heatmap_widget.h"
#include "widgets/inspector_panel.h"
#include "widgets/main_window.h"
#include "widgets/widget_util.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

// An attention result as `gllm bench attention` writes it (3 widths × 4 lengths).
void writeAttentionResult(const QString& path) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(
      R"({"kind":"attention","schema":"gllm-bench-attention-1","head_dim":64,"batch":1,"repeats":5,
              "lengths":[128,256,512,1024],"widths":[128,256,512],
              "overhead":[[0.01,0.02,0.03,0.04],[0.0,-0.01,0.02,0.01],[0.05,0.04,0.03,0.02]]})");
}

// A checkpoint with the matrices of a 2-layer model (16 of them) and its grades.
QString writeCheckpoint(const QString& dir) {
  std::vector<std::vector<float>> store;
  std::vector<StTensorIn> tensors;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = float(std::sin(0.37 * double(i) + double(name.size())));
    store.push_back(std::move(v));
    tensors.push_back(
        {name, StDtype::F32, shape, store.back().data(), store.back().size() * sizeof(float)});
  };
  store.reserve(32);
  add("transformer.wte.weight", {300, 64});
  add("lm_head.weight", {300, 64});
  for (int l = 0; l < 2; ++l) {
    const std::string h = "transformer.h." + std::to_string(l) + ".";
    for (const char* m : {"attn.c_q", "attn.c_k", "attn.c_v", "attn.c_proj"})
      add(h + m + ".weight", {64, 64});
    add(h + "mlp.c_fc.weight", {256, 64});
    add(h + "mlp.c_proj.weight", {64, 256});
    add(h + "attn.ve_gate.weight", {2, 32});
  }
  add("attn_grades", {2, 2, 16});
  const QString path = dir + "/step_000010.safetensors";
  write_safetensors(path.toStdString(), tensors);
  return path;
}

// The part of `w` its dock's scroll area shows, in w's coordinates.
QRect shownPart(QWidget* w) {
  QWidget* p = w;
  while (p && !qobject_cast<QScrollArea*>(p)) p = p->parentWidget();
  auto* area = qobject_cast<QScrollArea*>(p);
  if (!area) return w->rect();
  const QRect viewport(w->mapFrom(area->viewport(), QPoint(0, 0)), area->viewport()->size());
  return w->rect().intersected(viewport);
}

// The scroll area of a panel's dock.
QScrollArea* dockScroll(MainWindow& w, const QString& panel) {
  return qobject_cast<QScrollArea*>(w.panel(panel)->parentWidget()->parentWidget());
}

QString describe(QWidget* w) {
  const QRect shown = shownPart(w);
  return QStringLiteral("%1: %2 × %3, shown %4 × %5")
      .arg(QString::fromLatin1(w->metaObject()->className()))
      .arg(w->width())
      .arg(w->height())
      .arg(shown.width())
      .arg(shown.height());
}

// Axis titles a chart shows cut ("…" or hidden for want of room): "" when all are whole. Qt
// Charts draws each title as a text item of the chart's scene, elided to the room it has.
QStringList elidedAxisTitles(QWidget* root) {
  QStringList out;
  for (QChartView* v : root->findChildren<QChartView*>()) {
    if (!v->isVisible()) continue;
    QChart* c = v->chart();
    QStringList drawn;
    for (QGraphicsItem* item : v->scene()->items())
      if (auto* t = dynamic_cast<QGraphicsTextItem*>(item); t && t->isVisible())
        drawn << t->toPlainText();
    for (QAbstractAxis* a : c->axes()) {
      if (!a->isVisible() || a->titleText().isEmpty()) continue;
      if (!a->isTitleVisible() || !drawn.contains(a->titleText()))
        out << QStringLiteral("'%1' not drawn whole (chart %2 × %3 px)")
                   .arg(a->titleText())
                   .arg(v->width())
                   .arg(v->height());
    }
  }
  return out;
}

// Buttons and one-line labels shown narrower than their text (cut or elided).
QStringList cutLabels(QWidget* root) {
  QStringList out;
  for (QPushButton* b : root->findChildren<QPushButton*>())
    if (b->isVisible() && !b->text().isEmpty() && b->width() < b->minimumSizeHint().width())
      out << QStringLiteral("button '%1': %2 of %3 px")
                 .arg(b->text())
                 .arg(b->width())
                 .arg(b->minimumSizeHint().width());
  for (QLabel* l : root->findChildren<QLabel*>()) {
    if (!l->isVisible() || l->wordWrap() || l->text().isEmpty() || l->text().contains('<') ||
        l->text().contains('\n'))
      continue;
    const int need = l->fontMetrics().horizontalAdvance(l->text());
    if (l->contentsRect().width() + 1 < need)
      out << QStringLiteral("label '%1': %2 of %3 px").arg(l->text()).arg(l->width()).arg(need);
  }
  return out;
}

}  // namespace

class TestLayout : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    test::isolate_workbench(tmp_);  // an empty data cache: no profiles unless a test writes them
    MainWindow::applyStyle();
  }

  void attentionOpensTheNewestResult() {
    // In a fresh clone every result has the same modification time; the stamp in the name decides.
    // Here the older result was even touched last.
    QTemporaryDir dir;
    const QString older = dir.filePath("attention-20261129-185051.json");
    const QString newer = dir.filePath("attention-20261201-085504.json");
    const QString middle = dir.filePath("attention-20261130-120000.json");
    writeAttentionResult(newer);
    writeAttentionResult(middle);
    writeAttentionResult(older);
    QFile f(older);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(3600),
                          QFileDevice::FileModificationTime));
    f.close();
    QFile g(newer);
    QVERIFY(g.open(QIODevice::ReadWrite));
    QVERIFY(g.setFileTime(QDateTime::currentDateTime().addDays(-30),
                          QFileDevice::FileModificationTime));
    g.close();
    AttentionCostPanel panel;
    QCOMPARE(panel.setResultsDir(dir.path()), 3);
    QCOMPARE(panel.currentFile(), newer);
    QVERIFY(panel.statusText().startsWith("attention-20261201-085504.json"));
    QCOMPARE(filesNewestFirst(dir.path(), {"attention*.json"}),
             QStringList({newer, middle, older}));
    // Without a stamp the modification time decides.
    QFile a(dir.filePath("profiles-a.json")), b(dir.filePath("profiles-b.json"));
    QVERIFY(a.open(QIODevice::WriteOnly) && b.open(QIODevice::WriteOnly));
    QVERIFY(a.setFileTime(QDateTime::currentDateTime().addSecs(-60),
                          QFileDevice::FileModificationTime));
    QVERIFY(b.setFileTime(QDateTime::currentDateTime().addSecs(-7200),
                          QFileDevice::FileModificationTime));
    a.close();
    b.close();
    QCOMPARE(newestFile(dir.path(), {"profiles*.json"}), a.fileName());
  }

  void attentionHeatmapIsWhole_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1440x900") << QSize(1440, 900);
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }
  void attentionHeatmapIsWhole() {
    QFETCH(QSize, size);
    MainWindow w;
    auto* panel = qobject_cast<AttentionCostPanel*>(w.panel("attention"));
    QVERIFY(panel);
    QTemporaryDir dir;
    writeAttentionResult(dir.filePath("attention-20261201-085504.json"));
    QCOMPARE(panel->setResultsDir(dir.path()), 1);
    QVERIFY(w.saveScreenshot(dir.filePath("shot.png"), "attention", size).isEmpty());
    HeatmapWidget* map = panel->heatmap();
    QVERIFY(map->isVisible());
    // The whole heatmap (grid, labels, legend) is in view: at once where the Monitor leaves the
    // room (issue 28: no panel squeezes the Monitor's charts), else once the dock is scrolled
    // down to it, never cut at the side.
    QScrollArea* area = dockScroll(w, "attention");
    area->ensureWidgetVisible(map, 0, 0);
    QVERIFY2(!area->horizontalScrollBar()->isVisible(), qPrintable(describe(map)));
    if (size.height() >= 900)
      QVERIFY2(shownPart(map) == map->rect(), qPrintable(describe(map)));
    else  // as much of it as the dock's height shows, scrolled to
      QVERIFY2(shownPart(map).height() >= std::min(map->height(), area->viewport()->height() - 2),
               qPrintable(describe(map)));
    QVERIFY2(map->height() >= 200, qPrintable(describe(map)));
    QVERIFY(!map->cellRect(2, 3).isEmpty());
  }

  void raisedInspectorHasRoom_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1440x900") << QSize(1440, 900);
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }
  void raisedInspectorHasRoom() {
    QFETCH(QSize, size);
    MainWindow w;
    auto* inspector = qobject_cast<InspectorPanel*>(w.panel("inspector"));
    QVERIFY(inspector);
    QTemporaryDir dir;
    inspector->open(writeCheckpoint(dir.path()));
    QVERIFY(inspector->waitForResult());
    QCOMPARE(int(inspector->audit().matrices.size()), 16);
    QVERIFY(w.saveScreenshot(dir.filePath("shot.png"), "inspector", size).isEmpty());
    // The chart is a chart, not a 30-pixel column: most of it is on screen when the window is
    // tall enough beside a readable Monitor, else once the dock is scrolled to it.
    QChartView* chart = inspector->chartView();
    const QRect shown = shownPart(chart);
    QVERIFY2(shown.width() >= 250, qPrintable(describe(chart)));
    if (size.height() >= 1080) QVERIFY2(shown.height() >= 200, qPrintable(describe(chart)));
    QVERIFY(!dockScroll(w, "inspector")->horizontalScrollBar()->isVisible());
    // Every header of the matrix table reads in full ("mean-row share", not "ean-row sha"), and the
    // table needs no sideways scrolling.
    QTableWidget* table = inspector->matrixTable();
    QHeaderView* header = table->horizontalHeader();
    QFont bold = header->font();
    bold.setBold(true);
    const QFontMetrics fm(bold);
    for (int c = 0; c < table->columnCount(); ++c) {
      int need = 0;
      for (const QString& line : table->horizontalHeaderItem(c)->text().split('\n'))
        need = std::max(need, fm.horizontalAdvance(line));
      QVERIFY2(header->sectionSize(c) >= need + 6,
               qPrintable(QString("column %1 (%2): %3 px for %4 px of text")
                              .arg(c)
                              .arg(table->horizontalHeaderItem(c)->text())
                              .arg(header->sectionSize(c))
                              .arg(need)));
    }
    // The matrix names read whole (issue 42, point 7: they were cut to "h….").
    for (int r = 0; r < table->rowCount(); ++r) {
      const QString n = table->item(r, 0)->text();
      QVERIFY2(header->sectionSize(0) >= table->fontMetrics().horizontalAdvance(n) + 6,
               qPrintable(QString("'%1' needs %2 px, its column has %3")
                              .arg(n)
                              .arg(table->fontMetrics().horizontalAdvance(n))
                              .arg(header->sectionSize(0))));
    }
    QVERIFY2(header->length() <= table->viewport()->width() + 1,
             qPrintable(QString("%1 px of columns in %2 px")
                            .arg(header->length())
                            .arg(table->viewport()->width())));
    // And the dock gave the panel all the height the Monitor's readable charts leave (most of
    // the column where there is room for both).
    auto* monitor = w.panel("monitor");
    const int floor = monitor->minimumSizeHint().height();
    QVERIFY2(w.dock("inspector")->height() > w.dock("monitor")->height() ||
                 dockScroll(w, "monitor")->viewport()->height() <= floor + 40,
             qPrintable(QString("inspector %1 px, monitor %2 px (its charts need %3)")
                            .arg(w.dock("inspector")->height())
                            .arg(w.dock("monitor")->height())
                            .arg(floor)));
  }

  void everyPanelFitsItsDockWidth_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1440x900") << QSize(1440, 900);
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }
  void everyPanelFitsItsDockWidth() {
    QFETCH(QSize, size);
    MainWindow w;
    QTemporaryDir dir;
    for (const QString& name : w.panelNames()) {
      QVERIFY(w.saveScreenshot(dir.filePath(name + ".png"), name, size).isEmpty());
      QScrollArea* area = dockScroll(w, name);
      QVERIFY(area);
      // No panel is wider than its dock: nothing is cut off at the side.
      QVERIFY2(!area->horizontalScrollBar()->isVisible(),
               qPrintable(QString("%1: panel %2 px wide in a %3 px dock")
                              .arg(name)
                              .arg(w.panel(name)->minimumSizeHint().width())
                              .arg(area->viewport()->width())));
    }
  }

  // Issue 28, point 6: at both screen sizes every panel shows its axis titles and key labels
  // whole, the grade editor and the certificate are in view together, and no raised panel
  // squeezes the Monitor's charts below their readable height.
  void axisTitlesAndLabelsAreWhole_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
  }
  void axisTitlesAndLabelsAreWhole() {
    QFETCH(QSize, size);
    MainWindow w;
    QTemporaryDir dir;
    QWidget* monitor = w.panel("monitor");
    for (const QString& name : w.panelNames()) {
      QVERIFY(w.saveScreenshot(dir.filePath(name + ".png"), name, size).isEmpty());
      const QStringList elided = elidedAxisTitles(w.panel(name)) + elidedAxisTitles(monitor);
      QVERIFY2(elided.isEmpty(), qPrintable(name + ": " + elided.join("; ")));
      const QStringList cut = cutLabels(w.panel(name));
      QVERIFY2(cut.isEmpty(), qPrintable(name + ": " + cut.join("; ")));
      // The Monitor's charts stay whole and readable whatever is raised beside them.
      for (QChartView* v : monitor->findChildren<QChartView*>()) {
        if (!v->isVisible()) continue;
        const QRect shown = shownPart(v);
        QVERIFY2(shown.height() >= 150 && shown.height() + 1 >= v->height(),
                 qPrintable(name + " raised: monitor " + describe(v)));
      }
    }
    // The certificate is in view while grades are edited.
    w.showPanel("grades");
    QApplication::processEvents();
    QVERIFY(w.dock("grades")->isVisible() && w.dock("cone")->isVisible());
    QVERIFY(!w.dock("grades")->visibleRegion().isEmpty());
    QVERIFY(!w.dock("cone")->visibleRegion().isEmpty());
    QVERIFY(!w.dock("grades")->geometry().intersects(w.dock("cone")->geometry()));
    if (size.width() >= 1800)  // side by side where three columns fit
      QVERIFY(w.dock("cone")->geometry().left() >= w.dock("grades")->geometry().right());
  }

  void coneStartsOnEstimatedProfiles() {
    // `gllm profiles --out` into the data cache: the cone starts on those profiles.
    QTemporaryDir data;
    qputenv("GLLM_DATA", data.path().toUtf8());
    grading::ProfilesFile f;
    f.profiles.alpha = {0.05, 0.05, 0.1, 0.1, 0.2, 0.2, 0.15, 0.15};
    f.profiles.tau = {0.3, 0.3, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05};
    f.profiles.level_dims = {2, 2, 2, 2};
    grading::save_profiles_file(data.filePath("profiles.json").toStdString(), f);
    QCOMPARE(MainWindow::defaultProfilesFile(), data.filePath("profiles.json"));
    {
      MainWindow w;
      auto* cone = qobject_cast<ConePanel*>(w.panel("cone"));
      QVERIFY(cone);
      QVERIFY(cone->waitForResult());
      QCOMPARE(cone->currentProfiles().d(), 8);  // the file's 8 coordinates, not 4 geometric levels
      QVERIFY2(cone->result().error.isEmpty(), qPrintable(cone->result().error));
      // The geometric (ν, μ) explorer is one click away.
      cone->useGeometric();
      QCOMPARE(cone->currentProfiles().d(), 4);
    }
    // Without a file in the data cache: the Brown profiles the ladder presets ship with.
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    QVERIFY(MainWindow::defaultProfilesFile().endsWith(
        QStringLiteral("ladders/brown-tokens-d128-profiles.json")));
    MainWindow w;
    auto* cone = qobject_cast<ConePanel*>(w.panel("cone"));
    QVERIFY(cone->waitForResult(30000));
    QCOMPARE(cone->currentProfiles().d(), 128);
  }
};

QTEST_MAIN(TestLayout)
#include "test_widgets_layout.moc"
