// The threaded trainer on a tiny text fixture: observers see every event, metrics records carry
// their keys, cancel stops within one step, the NaN guard stops with a checkpoint, an in-process
// cancel + resume reproduces the uninterrupted final loss, and checkpoints pass the stdlib
// safetensors check and (with python3-torch) load into the PyTorch reference with equal logits.
#include <QtTest>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/gpt.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

namespace {

gllm::RunConfig tiny_config(int steps) {
  gllm::RunConfig c = gllm::test::tiny_text_run(steps);
  c.train.checkpoint_every = 3;
  c.train.keep_checkpoints = 10;
  return c;
}

struct Recorder : gllm::RunObserver {
  std::mutex mu;
  std::vector<gllm::StepRecord> steps;
  std::vector<gllm::EvalRecord> evals;
  std::vector<gllm::CheckpointRecord> checkpoints;
  gllm::FinishedRecord finished;
  bool done = false;
  std::string error;
  int64_t cancel_at = 0;
  gllm::Trainer* trainer = nullptr;
  void on_step(const gllm::StepRecord& r) override {
    std::lock_guard<std::mutex> lk(mu);
    steps.push_back(r);
    if (cancel_at > 0 && r.step == cancel_at && trainer) trainer->cancel();
  }
  void on_eval(const gllm::EvalRecord& e) override {
    std::lock_guard<std::mutex> lk(mu);
    evals.push_back(e);
  }
  void on_checkpoint(const gllm::CheckpointRecord& c) override {
    std::lock_guard<std::mutex> lk(mu);
    checkpoints.push_back(c);
  }
  void on_finished(const gllm::FinishedRecord& f) override {
    std::lock_guard<std::mutex> lk(mu);
    finished = f;
    done = true;
  }
  void on_error(const std::string& m) override {
    std::lock_guard<std::mutex> lk(mu);
    error = m;
  }
};

}  // namespace

class TestTrainTrainer : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    // Keep the tokenizer and token cache of the fixture inside the scratch folder.
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
  }

  void full_run_events_and_files() {
    Recorder rec;
    gllm::Trainer t;
    t.start(tiny_config(8), dir("full"), &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QVERIFY(rec.done);
    QCOMPARE(rec.finished.status, std::string("completed"));
    QCOMPARE(rec.steps.size(), size_t(8));
    for (size_t i = 0; i < rec.steps.size(); ++i) {
      QCOMPARE(rec.steps[i].step, int64_t(i + 1));
      QVERIFY(std::isfinite(rec.steps[i].loss));
      QCOMPARE(rec.steps[i].tokens, int64_t((i + 1) * 4 * 2 * 32));  // B · accum · T per step
    }
    // Loss falls from about log V over 8 steps.
    QVERIFY(rec.steps.back().loss < rec.steps.front().loss);
    // val at 4 and 8 (end), held-out once at the end.
    int val = 0, held = 0;
    for (const auto& e : rec.evals) {
      QVERIFY(e.bpb > 0 && std::isfinite(e.bpb));
      (e.split == "val" ? val : held)++;
    }
    QCOMPARE(val, 2);
    QCOMPARE(held, 1);
    QVERIFY(rec.finished.heldout_bpb > 0);
    QVERIFY(rec.finished.peak_mem_mib > 0 && rec.finished.analytic_mem_mib > 0);
    // Checkpoints at 3, 6 and the end (8).
    QCOMPARE(rec.checkpoints.size(), size_t(3));
    auto cks = gllm::list_checkpoints(dir("full"));
    QCOMPARE(cks.back().step, int64_t(8));
    for (const auto& c : cks) gllm::verify_checkpoint(c);
    // metrics.jsonl: every record has step and tokens and loss or a BPB; step records the rest.
    auto m = gllm::read_metrics(dir("full") + "/metrics.jsonl");
    QVERIFY(!m.torn_tail);
    int step_records = 0;
    for (const auto& r : m.records) {
      QVERIFY(r.contains("step") && r.contains("tokens"));
      QVERIFY(r.contains("loss") || r.contains("val_bpb") || r.contains("heldout_bpb"));
      if (r.contains("loss")) {
        ++step_records;
        for (const char* k : {"tokens_per_s", "peak_mem_mib", "wall_s", "flops"})
          QVERIFY2(r.contains(k), k);
      }
    }
    QCOMPARE(step_records, 8);
    auto info = gllm::read_run(dir("full"));
    QCOMPARE(info.status, std::string("completed"));
    QCOMPARE(info.name, std::string("tiny-test"));
    QVERIFY(std::fabs(info.heldout_bpb - rec.finished.heldout_bpb) < 1e-12);
    // The folder is taken: a second start there is refused.
    gllm::Trainer t2;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, t2.start(tiny_config(8), dir("full"), nullptr));
  }

  void cancel_within_one_step_then_resume_exactly() {
    // Reference: uninterrupted.
    Recorder ref;
    {
      gllm::Trainer t;
      t.start(tiny_config(10), dir("ref"), &ref);
      t.wait();
    }
    QVERIFY2(ref.error.empty(), ref.error.c_str());
    // Cancelled at step 5 (between checkpoints 3 and 6): stops at 5 with a checkpoint there.
    Recorder a;
    gllm::Trainer t;
    a.trainer = &t;
    a.cancel_at = 5;
    t.start(tiny_config(10), dir("cut"), &a);
    t.wait();
    QVERIFY2(a.error.empty(), a.error.c_str());
    QCOMPARE(a.finished.status, std::string("cancelled"));
    QCOMPARE(a.finished.step, int64_t(5));
    QCOMPARE(gllm::list_checkpoints(dir("cut")).back().step, int64_t(5));
    QCOMPARE(gllm::read_run(dir("cut")).status, std::string("cancelled"));
    // Resume to the end: the same final loss and BPB as the uninterrupted run.
    Recorder b;
    gllm::Trainer t2;
    t2.resume(dir("cut"), &b);
    t2.wait();
    QVERIFY2(b.error.empty(), b.error.c_str());
    QCOMPARE(b.finished.status, std::string("completed"));
    QCOMPARE(b.steps.front().step, int64_t(6));
    QVERIFY2(std::fabs(b.finished.final_loss - ref.finished.final_loss) <= 1e-6,
             qPrintable(QString("resumed %1 vs %2")
                            .arg(b.finished.final_loss, 0, 'g', 17)
                            .arg(ref.finished.final_loss, 0, 'g', 17)));
    QVERIFY(std::fabs(b.finished.heldout_bpb - ref.finished.heldout_bpb) <= 1e-6);
    // Every step's loss matches, not just the last.
    auto m_ref = gllm::read_metrics(dir("ref") + "/metrics.jsonl").records;
    auto m_res = gllm::read_metrics(dir("cut") + "/metrics.jsonl").records;
    std::vector<double> l_ref, l_res;
    for (const auto& r : m_ref)
      if (r.contains("loss")) l_ref.push_back(r["loss"].get<double>());
    for (const auto& r : m_res)
      if (r.contains("loss")) l_res.push_back(r["loss"].get<double>());
    QCOMPARE(l_res.size(), l_ref.size());
    for (size_t i = 0; i < l_ref.size(); ++i) QVERIFY(std::fabs(l_ref[i] - l_res[i]) <= 1e-6);
  }

  void nan_guard_stops_with_checkpoint() {
    Recorder rec;
    gllm::Trainer t;
    gllm::TrainerOptions o;
    o.inject_nan_step = 5;
    t.start(tiny_config(10), dir("nan"), &rec, o);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.finished.status, std::string("diverged"));
    QVERIFY2(rec.finished.message.find("NaN") != std::string::npos, rec.finished.message.c_str());
    QVERIFY(rec.finished.message.find("step 5") != std::string::npos);
    QCOMPARE(rec.steps.size(), size_t(4));
    auto last = gllm::last_valid_checkpoint(dir("nan"));
    QCOMPARE(last.step, int64_t(4));
    QCOMPARE(gllm::read_run(dir("nan")).status, std::string("diverged"));
  }

  void resume_refuses_bad_folders() {
    gllm::Trainer t;
    QVERIFY_THROWS_EXCEPTION(gllm::Error, t.resume(dir("does-not-exist"), nullptr));
    // A run whose only checkpoint is truncated has nothing to resume from.
    gllm::RunStore s(dir("broken"));
    s.create(tiny_config(4).to_json());
    gllm::write_file_atomic(s.weights_path(2), "xx");
    gllm::write_file_atomic(s.optimizer_path(2), "yy");
    s.commit_checkpoint(2, {{"tokens", 1}}, 3);
    {
      std::ofstream f(s.weights_path(2), std::ios::app);
      f << "tail";
    }
    try {
      t.resume(dir("broken"), nullptr);
      QFAIL("resume accepted a corrupted checkpoint");
    } catch (const gllm::Error& e) {
      QVERIFY2(std::string(e.what()).find("no valid checkpoint") != std::string::npos, e.what());
    }
  }

  void safetensors_stdlib_and_torch_reference() {
    auto ck = gllm::last_valid_checkpoint(dir("full"));
    std::string py = gllm::test::plain_python();
    if (py.empty()) py = "/usr/bin/python3";
    auto r = gllm::test::run_program(py, {gllm::test::python_script("safetensors_check.py"),
                                          ck.weights_path, ck.optimizer_path});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    QVERIFY(r.out.find("\"ok\": true") != std::string::npos);
    // The checker must reject a file whose offsets leave a gap.
    std::string bad = dir("bad.safetensors");
    {
      std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
      while (header.size() % 8) header += ' ';
      std::string bytes(8, '\0');
      uint64_t n = header.size();
      for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
      gllm::write_file_atomic(bad, bytes + header + std::string(8, '\0'));
    }
    auto rb = gllm::test::run_program(py, {gllm::test::python_script("safetensors_check.py"), bad});
    QVERIFY2(rb.exit_code == 1 && rb.out.find("gap") != std::string::npos, rb.out.c_str());

    GLLM_REQUIRE_TORCH_PYTHON();  // the reference logits check below
    // Engine logits from the checkpoint, then the PyTorch reference on the same file.
    auto tensors = gllm::read_tensor_file(ck.weights_path);
    gllm::GPTOptions mo;
    mo.vocab_size = tensors.at("lm_head.weight").size(0);
    gllm::GPT model(tiny_config(8), mo);
    model->load_state_tensors(std::map<std::string, torch::Tensor>(tensors.begin(), tensors.end()));
    torch::manual_seed(3);
    auto idx = torch::randint(4, mo.vocab_size, {2, 32}, torch::kLong);  // (B, T)
    torch::Tensor logits;
    {
      torch::NoGradGuard ng;
      logits = model->eval_logits(idx);  // (B, T, V)
    }
    std::string in = dir("ref_in.safetensors"), out = dir("ref_out.safetensors");
    gllm::write_tensor_file(in, {{"idx", idx}, {"targets", idx.roll(-1, 1)}});
    auto rr = gllm::test::run_program(
        gllm::test::torch_python(),
        {gllm::test::python_script("model_reference.py"), ck.weights_path, in, out});
    QVERIFY2(rr.exit_code == 0, (rr.out + rr.err).c_str());
    auto ref = gllm::read_tensor_file(out).at("logits");
    double diff = (ref - logits).abs().max().item<double>();
    QVERIFY2(diff < 1e-3, qPrintable(QString("max |Δlogits| = %1").arg(diff)));
  }
};

QTEST_APPLESS_MAIN(TestTrainTrainer)
#include "test_train_trainer.moc"
