// A researcher's day, round two (issue 42): edits are used or refused, a refused value stays where
// it is, names and readouts keep what tells them apart, symbols render, the wheel leaves combos be.
#include <QAbstractButton>
#include <QComboBox>
#include <QDockWidget>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QtTest>

#include "engine/config/run_config.h"
#include "engine/model/initial_grades.h"
#include "tests/support/workbench_env.h"
#include "widgets/grade_editor.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/preset_form.h"
#include "widgets/widget_util.h"

using namespace gllm;
using namespace gllm::gui;

namespace {

RunConfig tinyCpu() {
  return RunConfig::load(resolve_preset_path("tiny-cpu"));
}

// A code point of Unicode's combining diacritical marks block: drawn on whichever glyph the font
// puts before it, so "α̂" can render as "α^" or the accent lands on a neighbour.
bool hasCombiningMark(const QString& s) {
  for (const QChar c : s)
    if (c.unicode() >= 0x0300 && c.unicode() <= 0x036F) return true;
  return false;
}

QStringList widgetTexts(QWidget* root) {
  QStringList out;
  for (auto* l : root->findChildren<QLabel*>()) out << l->text() << l->toolTip();
  for (auto* b : root->findChildren<QAbstractButton*>()) out << b->text() << b->toolTip();
  for (auto* g : root->findChildren<QGroupBox*>()) out << g->title();
  for (auto* c : root->findChildren<QComboBox*>())
    for (int i = 0; i < c->count(); ++i) out << c->itemText(i);
  for (auto* t : root->findChildren<QTableWidget*>()) {
    for (int i = 0; i < t->columnCount(); ++i)
      if (auto* h = t->horizontalHeaderItem(i)) out << h->text();
    for (int r = 0; r < t->rowCount(); ++r)
      for (int c = 0; c < t->columnCount(); ++c)
        if (auto* it = t->item(r, c)) out << it->text() << it->toolTip();
  }
  return out;
}

}  // namespace

class TestRoundTwo : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    test::isolate_workbench(tmp_);
  }

  // Point 1: with MLGE off the level grades say so, refuse edits, and offer to turn it on.
  void levelGradesOfAnOffComponentAreRefused() {
    GradeEditor g;
    g.setConfig(tinyCpu());
    QVERIFY(!g.componentOn("mlge"));
    QVERIFY2(g.componentNotice("mlge").contains("off"), qPrintable(g.componentNotice("mlge")));
    auto* notice = g.findChild<QWidget*>("componentOff_mlge");
    QVERIFY(notice && !notice->isHidden());
    const QString why = g.setLevelGradeText(1, "3");
    QVERIFY2(why.contains("MLGE is off"), qPrintable(why));
    QVERIFY(g.config().grading.level_grades.empty());  // nothing silently kept
    QVERIFY(g.invalidFields().isEmpty());              // nothing invalid left in a field either
    auto* turnOn = g.findChild<QPushButton*>("turnOn_mlge");
    QVERIFY(turnOn);
    turnOn->click();
    QVERIFY(g.componentOn("mlge"));
    QVERIFY(notice->isHidden());
    QVERIFY2(g.setLevelGradeText(1, "3").isEmpty(), qPrintable(g.levelError()));
    QCOMPARE(g.levelGrades().at(1), 3.0);
  }

  // Point 1: "random" shows the grades the run gets; an edited cell makes them explicit.
  void headGradesShownAreTheRunsGrades() {
    RunConfig c = tinyCpu();
    c.grading.head_grades = "random";
    c.grading.random_seed = 7;
    GradeEditor g;
    g.setConfig(c);
    const std::vector<float> run = initial_head_grades(c);
    const GradeGrid& shown = g.headGrades();
    QCOMPARE(shown.values.size(), run.size());
    double top = 0;
    for (size_t i = 0; i < run.size(); ++i) {
      QCOMPARE(shown.values[i], double(run[i]));
      top = std::max(top, shown.values[i]);
    }
    QVERIFY(top > 1.0);  // not the all-zero table
    QCOMPARE(g.headCellText(0, 0, 0), QString::number(double(run[0]), 'g', 4));

    const int planes = shown.planes, heads = shown.heads;
    QVERIFY2(g.setHeadGradeText(1, 2, 3, "1.5").isEmpty(), qPrintable(g.headError()));
    const auto& grading = g.config().grading;
    QCOMPARE(QString::fromStdString(grading.head_grades), QStringLiteral("explicit"));
    QCOMPARE(grading.attn_grades.size(), run.size());
    const size_t edited = size_t((1 * heads + 2) * planes + 3);
    QCOMPARE(grading.attn_grades[edited], 1.5);
    for (size_t i = 0; i < run.size(); ++i)
      if (i != edited) QCOMPARE(float(grading.attn_grades[i]), run[i]);  // the rest kept
    QCOMPARE(g.headCellText(1, 2, 3), QStringLiteral("1.5"));
    // The config the run is launched with validates and the model would start from exactly these.
    const RunConfig launched = RunConfig::from_json(g.config().to_json());
    const std::vector<float> model = initial_head_grades(launched, launched.grading.attn_grades);
    QCOMPARE(double(model[edited]), 1.5);
  }

  // Point 2: −2 stays in its cell, marked, explained; Launch's refusal shows that field.
  void refusedValueStaysWhereItIs() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* grades = qobject_cast<GradeEditor*>(w.panel("grades"));
    auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
    QVERIFY(grades && launcher);
    QVERIFY(grades->enableComponent("mlge").isEmpty());
    const QString why = grades->setLevelGradeText(3, "-2");
    QVERIFY2(why.contains("≥ 0"), qPrintable(why));
    QCOMPARE(grades->levelCellText(3), QStringLiteral("-2"));  // not reverted to 0 without a word
    auto* table = grades->findChild<QTableWidget*>("levelGrades");
    QVERIFY(table);
    QTableWidgetItem* cell = table->item(3, 2);
    QVERIFY(cell && cell->toolTip().contains("≥ 0"));
    QVERIFY(cell->background().color().red() > cell->background().color().blue());  // marked red
    QVERIFY(!grades->levelError().isEmpty());

    // Another panel in front; Launch refuses and brings the grade table and its cell back.
    w.showPanel("preset");
    const QString refused = launcher->launch(true);
    QVERIFY2(refused.contains("level 3"), qPrintable(refused));
    QCOMPARE(grades->firstInvalidField(), static_cast<QWidget*>(table));
    QTRY_VERIFY(table->isVisible());
    QCOMPARE(table->currentRow(), 3);
    QVERIFY(!table->visibleRegion().isEmpty());

    // Corrected, the refusal is gone and Launch no longer points anywhere.
    QVERIFY(grades->setLevelGradeText(3, "2").isEmpty());
    QCOMPARE(grades->levelCellText(3), QStringLiteral("2"));
    QVERIFY(grades->invalidFields().isEmpty());
    QVERIFY(!grades->firstInvalidField());
  }

  // Point 7: every text the window shows uses precomposed symbols (α̂ rendered as "αˆ").
  void noCombiningAccentsInTheWindow() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    for (const QString& name : w.panelNames()) w.showPanel(name);
    QVERIFY(w.waitForIdle());
    int checked = 0;
    for (const QString& t : widgetTexts(&w)) {
      QVERIFY2(!hasCombiningMark(t), qPrintable(t));
      ++checked;
    }
    QVERIFY(checked > 100);
  }

  // Point 5: the hover readout keeps every value whole and elides names in the middle.
  void readoutKeepsValues() {
    const QString full = QStringLiteral(
        "step 120 · tokens 245,760 — 5.0234 tiny-cpu+matrix_lr=0.01+steps=150-s1 · 4.9876 "
        "tiny-cpu+matrix_lr=0.02+steps=150-s7");
    QFont f;
    const QFontMetrics fm(f);
    const int width = fm.horizontalAdvance(full) / 2;
    const QString fitted = fitReadout(full, fm, width);
    QVERIFY2(fm.horizontalAdvance(fitted) <= width, qPrintable(fitted));
    QVERIFY2(fitted.contains("5.0234") && fitted.contains("4.9876"), qPrintable(fitted));
    QVERIFY2(fitted.contains("-s1") && fitted.contains("-s7"),
             qPrintable(fitted));                                  // distinct ends
    QVERIFY2(fitted.contains(QChar(0x2026)), qPrintable(fitted));  // elided
    QCOMPARE(fitReadout(full, fm, fm.horizontalAdvance(full) + 10), full);
  }
  // Point 7: the Ladder panel's folder field has room for a path at 1280 × 800.
  void ladderPathFieldIsWide() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.showPanel("ladder"));
    auto* folder = w.panel("ladder")->findChild<QLineEdit*>("ladderFolder");
    QVERIFY(folder);
    QTRY_VERIFY(folder->isVisible());
    QVERIFY2(folder->width() >= 300, qPrintable(QString::number(folder->width())));
  }
};

QTEST_MAIN(TestRoundTwo)
#include "test_widgets_round_two.moc"
