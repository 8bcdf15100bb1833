// GUI test of the RunConfig-generated preset form: a user types values; valid ones change the
// config, invalid ones are refused at the field with the engine's reason and leave it unchanged.
#include <QtTest>

#include "engine/config/run_config.h"
#include "widgets/preset_form.h"

using namespace gllm;
using namespace gllm::gui;

class TestPresetForm : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyFieldHasAnEditor() {
    PresetForm form;
    int leaves = 0;
    for (const auto& f : run_config_fields())
      if (f.kind != FieldKind::Section) {
        ++leaves;
        QVERIFY2(form.fieldEditor(QString::fromStdString(f.path)), f.path.c_str());
      }
    QCOMPARE(form.fieldPaths().size(), leaves);
  }
  void acceptsValidValues() {
    PresetForm form;
    form.setConfig(RunConfig{});
    QSignalSpy changed(&form, &PresetForm::configChanged);
    QVERIFY(form.editField("model.n_layer", "6"));
    QCOMPARE(form.config().model.n_layer, 6);
    QVERIFY(form.editField("grading.clip", "3.5"));
    QCOMPARE(form.config().grading.clip, 3.5);
    QVERIFY(form.editField("grading.attention", "true"));
    QVERIFY(form.config().grading.attention);
    QVERIFY(form.editField("train.device", "cpu"));
    QCOMPARE(form.config().train.device, std::string("cpu"));
    QVERIFY(form.editField("grading.level_grades", "0, 0.5, 1, 1.5"));
    QCOMPARE(form.config().grading.level_grades.size(), size_t(4));
    QCOMPARE(changed.count(), 5);
    QVERIFY(form.fieldError("model.n_layer").isEmpty());
  }
  void refusesInvalidValuesAtTheField() {
    PresetForm form;
    form.setConfig(RunConfig{});
    QSignalSpy refused(&form, &PresetForm::valueRefused);
    QVERIFY(!form.editField("model.n_layer", "abc"));
    QVERIFY(form.fieldError("model.n_layer").contains("not a whole number"));
    QCOMPARE(form.config().model.n_layer, RunConfig{}.model.n_layer);
    // Out of the schema range: the engine's message names the range.
    QVERIFY(!form.editField("grading.clip", "0.5"));
    const QString why = form.fieldError("grading.clip");
    QVERIFY2(!why.isEmpty(), "clip 0.5 must be refused");
    QCOMPARE(form.config().grading.clip, 2.0);
    // λ ≤ 1 is refused by the cross-field check with its reason.
    QVERIFY(!form.editField("grading.lambda", "0.9"));
    QVERIFY(form.fieldError("grading.lambda").contains("> 1"));
    // Wrong number of level grades: the engine names the levels.
    QVERIFY(!form.editField("grading.level_grades", "1, 2"));
    QVERIFY(form.fieldError("grading.level_grades").contains("levels"));
    QVERIFY(refused.count() >= 4);
    // A valid edit clears the refusal.
    QVERIFY(form.editField("grading.clip", "2.5"));
    QVERIFY(form.fieldError("grading.clip").isEmpty());
  }
};

QTEST_MAIN(TestPresetForm)
#include "test_widgets_preset_form.moc"
