// The JSON form of the event records (engine/train/events_json.h): every field under the key that
// run folders, the workbench and outside scripts read, and unset figures written as null.
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/train/events_json.h"

using namespace gllm;

class TestTrainEventsJson : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void stepLineHoldsEveryField() {
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
    r.estimate_mem_mib = 560.5;
    const nlohmann::json j = to_json(r);
    QCOMPARE(j.size(), size_t(9));
    QCOMPARE(j["step"].get<int64_t>(), r.step);
    QCOMPARE(j["tokens"].get<int64_t>(), r.tokens);
    QCOMPARE(j["loss"].get<double>(), r.loss);
    QCOMPARE(j["lr_scale"].get<double>(), r.lr_scale);
    QCOMPARE(j["tokens_per_s"].get<double>(), r.tokens_per_s);
    QCOMPARE(j["wall_s"].get<double>(), r.wall_s);
    QCOMPARE(j["peak_mem_mib"].get<double>(), r.peak_mem_mib);
    QCOMPARE(j["flops"].get<double>(), r.flops);
    QCOMPARE(j["estimate_mem_mib"].get<double>(), r.estimate_mem_mib);
  }

  void evalLineNamesItsSplit() {
    EvalRecord r;
    r.step = 50;
    r.tokens = 102400;
    r.split = "heldout";
    r.bpb = 1.875;
    r.loss = 4.5;
    r.eval_tokens = 32768;
    r.wall_s = 30;
    const nlohmann::json j = to_json(r);
    QCOMPARE(j.size(), size_t(6));
    QCOMPARE(j["heldout_bpb"].get<double>(), 1.875);
    QCOMPARE(j["heldout_loss"].get<double>(), 4.5);
    QVERIFY(!j.contains("val_bpb") && !j.contains("split"));
    QCOMPARE(j["step"].get<int64_t>(), r.step);
    QCOMPARE(j["tokens"].get<int64_t>(), r.tokens);
    QCOMPARE(j["eval_tokens"].get<int64_t>(), r.eval_tokens);
    QCOMPARE(j["wall_s"].get<double>(), r.wall_s);
    r.split = "val";
    QCOMPARE(to_json(r)["val_bpb"].get<double>(), 1.875);
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
    f.resident_start_mib = 280;
    f.estimate_mem_mib = 470;
    f.wall_s = 4;
    f.message = "cancelled by the user";
    const nlohmann::json j = to_json(f);
    QVERIFY(j["final_loss"].is_null());
    QVERIFY(j["val_bpb"].is_null());
    QCOMPARE(j["heldout_bpb"].get<double>(), 1.9);
    QCOMPARE(j["run_dir"].get<std::string>(), std::string("runs/x"));
    QCOMPARE(j["status"].get<std::string>(), f.status);
    QCOMPARE(j["step"].get<int64_t>(), f.step);
    QCOMPARE(j["tokens"].get<int64_t>(), f.tokens);
    QCOMPARE(j["tokens_per_s"].get<double>(), f.tokens_per_s);
    QCOMPARE(j["peak_mem_mib"].get<double>(), f.peak_mem_mib);
    QCOMPARE(j["analytic_mem_mib"].get<double>(), f.analytic_mem_mib);
    QCOMPARE(j["resident_start_mib"].get<double>(), f.resident_start_mib);
    QCOMPARE(j["estimate_mem_mib"].get<double>(), f.estimate_mem_mib);
    QCOMPARE(j["wall_s"].get<double>(), f.wall_s);
    QCOMPARE(j["message"].get<std::string>(), f.message);
    // A negative final loss is a loss, not "unset"; only BPBs use −1 for none.
    f.final_loss = -0.5;
    QCOMPARE(to_json(f)["final_loss"].get<double>(), -0.5);
    // Without a run folder the key is left out (summary.json lives inside the folder).
    f.run_dir.clear();
    QVERIFY(!to_json(f).contains("run_dir"));
  }
};

QTEST_APPLESS_MAIN(TestTrainEventsJson)
#include "test_train_events_json.moc"
