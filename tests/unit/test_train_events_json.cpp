// The JSON form of the event records (engine/train/events_json.h): each record survives its
// round trip, the keys are the ones run folders and outside scripts read, and edited values fail
// soft.
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/train/events_json.h"

using namespace gllm;

class TestTrainEventsJson : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void stepRecordRoundTrips() {
    StepRecord r;
    r.step = 17;
    r.total_steps = 400;  // not part of a metrics line: the config holds it
    r.tokens = 34816;
    r.loss = 5.25;
    r.lr_scale = 0.5;
    r.tokens_per_s = 6400.5;
    r.wall_s = 12.75;
    r.peak_mem_mib = 580.25;
    r.flops = 1.5e12;
    const nlohmann::json j = to_json(r);
    for (const char* key :
         {"step", "tokens", "loss", "lr_scale", "tokens_per_s", "peak_mem_mib", "wall_s", "flops"})
      QVERIFY2(j.contains(key), key);
    QCOMPARE(j.size(), size_t(8));
    const StepRecord b = step_record_from_json(j);
    QCOMPARE(b.step, r.step);
    QCOMPARE(b.tokens, r.tokens);
    QCOMPARE(b.loss, r.loss);
    QCOMPARE(b.lr_scale, r.lr_scale);
    QCOMPARE(b.tokens_per_s, r.tokens_per_s);
    QCOMPARE(b.wall_s, r.wall_s);
    QCOMPARE(b.peak_mem_mib, r.peak_mem_mib);
    QCOMPARE(b.flops, r.flops);
  }

  void evalRecordNamesItsSplit() {
    EvalRecord r;
    r.step = 50;
    r.tokens = 102400;
    r.split = "heldout";
    r.bpb = 1.875;
    r.loss = 4.5;
    r.eval_tokens = 32768;
    r.wall_s = 30;
    const nlohmann::json j = to_json(r);
    QCOMPARE(j["heldout_bpb"].get<double>(), 1.875);
    QCOMPARE(j["heldout_loss"].get<double>(), 4.5);
    QVERIFY(!j.contains("val_bpb") && !j.contains("split"));
    EvalRecord b;
    QVERIFY(!eval_record_from_json(j, "val", &b));  // a held-out line is not a validation line
    QVERIFY(eval_record_from_json(j, "heldout", &b));
    QCOMPARE(b.split, std::string("heldout"));
    QCOMPARE(b.step, r.step);
    QCOMPARE(b.tokens, r.tokens);
    QCOMPARE(b.bpb, r.bpb);
    QCOMPARE(b.loss, r.loss);
    QCOMPARE(b.eval_tokens, r.eval_tokens);
    QCOMPARE(b.wall_s, r.wall_s);
    // A step line is no evaluation of either split.
    QVERIFY(!eval_record_from_json(to_json(StepRecord{}), "val", &b));
  }

  void finishedRecordWritesUnsetValuesAsNull() {
    FinishedRecord f;
    f.run_dir = "runs/x";
    f.status = "cancelled";
    f.step = 3;
    f.tokens = 6144;
    f.final_loss = NAN;  // diverged before a finite loss
    f.val_bpb = -1;      // never evaluated
    f.heldout_bpb = 1.9;
    f.tokens_per_s = 100;
    f.peak_mem_mib = 200;
    f.analytic_mem_mib = 190;
    f.wall_s = 4;
    f.message = "cancelled by the user";
    const nlohmann::json j = to_json(f);
    QVERIFY(j["final_loss"].is_null());
    QVERIFY(j["val_bpb"].is_null());
    QCOMPARE(j["heldout_bpb"].get<double>(), 1.9);
    QCOMPARE(j["run_dir"].get<std::string>(), std::string("runs/x"));
    const FinishedRecord b = finished_record_from_json(j);
    QVERIFY(std::isnan(b.final_loss));
    QCOMPARE(b.val_bpb, -1.0);
    QCOMPARE(b.heldout_bpb, 1.9);
    QCOMPARE(b.status, f.status);
    QCOMPARE(b.step, f.step);
    QCOMPARE(b.tokens, f.tokens);
    QCOMPARE(b.tokens_per_s, f.tokens_per_s);
    QCOMPARE(b.peak_mem_mib, f.peak_mem_mib);
    QCOMPARE(b.analytic_mem_mib, f.analytic_mem_mib);
    QCOMPARE(b.wall_s, f.wall_s);
    QCOMPARE(b.message, f.message);
    // Without a run folder the key is left out (summary.json lives inside the folder).
    f.run_dir.clear();
    QVERIFY(!to_json(f).contains("run_dir"));
  }

  void editedValuesKeepDefaults() {
    // Hand-edited lines with values of the wrong type read as unset, never as an exception.
    const auto j = nlohmann::json::parse(
        R"({"step": "five", "tokens": 1e300, "loss": [1], "val_bpb": "low", "status": 7})");
    const StepRecord s = step_record_from_json(j);
    QCOMPARE(s.step, int64_t(0));
    QCOMPARE(s.tokens, int64_t(0));
    QCOMPARE(s.loss, 0.0);
    EvalRecord e;
    QVERIFY(!eval_record_from_json(j, "val", &e));
    const FinishedRecord f = finished_record_from_json(j);
    QCOMPARE(f.status, std::string());
    QCOMPARE(f.val_bpb, -1.0);
    QVERIFY(!eval_record_from_json(nlohmann::json::array(), "val", &e));
    QCOMPARE(step_record_from_json(nlohmann::json()).step, int64_t(0));
  }
};

QTEST_APPLESS_MAIN(TestTrainEventsJson)
#include "test_train_events_json.moc"
