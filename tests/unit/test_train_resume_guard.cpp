// What start and resume may do to a run folder: one writer at a time, a completed run never
// rewritten by a repeated, failed or diverged resume, a run without checkpoint restarted in place
// (and only such a run), a lost checkpoint store or tampered resume state refused, config edits
// that change results refused unless allowed (then recorded), temporaries cleaned.
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/safetensors.h"
#include "engine/io/sha512.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;

namespace fs = std::filesystem;

namespace {

gllm::RunConfig tiny_config(int64_t steps, int checkpoint_every = 3) {
  gllm::RunConfig c;
  c.name = "guard-test";
  c.model.n_layer = 1;
  c.model.n_embd = 32;
  c.model.n_head = 2;
  c.model.sequence_len = 32;
  c.data.corpus = "text";
  c.data.corpus_path = gllm::test::fixture("runs_corpus.txt");
  c.data.vocab_size = 300;
  c.data.val_fraction = 0.1;
  c.data.heldout_fraction = 0.1;
  c.train.steps = steps;
  c.train.device_batch = 2;
  c.train.eval_every = 0;
  c.train.eval_tokens = 256;
  c.train.heldout_tokens = 256;
  c.train.checkpoint_every = checkpoint_every;
  c.train.keep_checkpoints = 10;
  c.train.device = "cpu";
  c.train.threads = 1;
  return gllm::RunConfig::from_json(c.to_json());
}

struct Recorder : gllm::RunObserver {
  std::mutex mu;
  int64_t steps = 0;
  std::string status, error;
  std::vector<std::string> log;
  void on_step(const gllm::StepRecord&) override {
    std::lock_guard<std::mutex> lk(mu);
    ++steps;
  }
  void on_finished(const gllm::FinishedRecord& f) override {
    std::lock_guard<std::mutex> lk(mu);
    status = f.status;
  }
  void on_error(const std::string& m) override {
    std::lock_guard<std::mutex> lk(mu);
    error = m;
  }
  void on_log(const std::string& line) override {
    std::lock_guard<std::mutex> lk(mu);
    log.push_back(line);
  }
  int64_t step_count() {
    std::lock_guard<std::mutex> lk(mu);
    return steps;
  }
  bool logged(const std::string& part) {
    std::lock_guard<std::mutex> lk(mu);
    for (const auto& l : log)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

std::string text(const std::string& path) {
  return gllm::read_file(path);
}

// Drops the checkpoints after `step` and the summary: the folder of a run killed after `step`.
void cut_after(const std::string& dir, int64_t step) {
  fs::remove(dir + "/summary.json");
  for (const auto& c : gllm::list_checkpoints(dir))
    if (c.step > step)
      for (const auto& p : {c.sidecar_path, c.weights_path, c.optimizer_path}) fs::remove(p);
}

int64_t count_step_records(const std::string& dir) {
  int64_t n = 0;
  for (const auto& r : gllm::read_metrics(dir + "/metrics.jsonl").records)
    n += r.contains("loss") ? 1 : 0;
  return n;
}

// Every file of a run folder with its bytes, to show that a refused or failed resume changed
// nothing.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "run.lock")
      out[fs::relative(e.path(), dir).string()] = gllm::read_file(e.path().string());
  return out;
}

// Rewrites a checkpoint's optimizer file with an edited scalar_state and records the new size and
// digest in its sidecar, as a careful tamperer would (the sidecar matches).
void tamper_optimizer_steps(const gllm::CheckpointInfo& ck, const nlohmann::json& value) {
  const gllm::SafetensorsFile f = gllm::SafetensorsFile::open(ck.optimizer_path);
  std::vector<gllm::StTensorIn> ins;
  for (const auto& info : f.tensors())
    ins.push_back({info.name, info.dtype, info.shape, f.data(info.name), info.end - info.begin});
  auto meta = f.metadata();
  auto scalars = nlohmann::json::parse(meta.at("scalar_state"));
  for (auto& [name, steps] : scalars["steps"].items()) steps = value;
  meta["scalar_state"] = scalars.dump();
  gllm::write_safetensors(ck.optimizer_path, ins, meta);
  nlohmann::json side = ck.sidecar;
  const auto digest = gllm::sha512_file(ck.optimizer_path);
  side["optimizer"]["bytes"] = static_cast<int64_t>(fs::file_size(ck.optimizer_path));
  side["optimizer"]["sha512"] = gllm::to_hex(digest.data(), digest.size());
  gllm::write_file_atomic(ck.sidecar_path, side.dump(2));
}

}  // namespace

class TestTrainResumeGuard : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

  void complete(const std::string& d, const gllm::RunConfig& c) {
    Recorder rec;
    gllm::Trainer t;
    t.start(c, d, &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.status, std::string("completed"));
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", (tmp_.path().toStdString() + "/cache").c_str(), 1);
  }

  void oneWriterAtATime() {
    const std::string d = dir("busy");
    Recorder a;
    gllm::Trainer first;
    first.start(tiny_config(1000000, 0), d, &a);
    for (int i = 0; i < 600 && a.step_count() < 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    QVERIFY(a.step_count() >= 1);
    const std::string mine = "in use by pid " + std::to_string(::getpid());
    gllm::Trainer second;
    std::string e = error_of([&] { second.resume(d, nullptr); });
    QVERIFY2(e.find(mine) != std::string::npos && e.find("gllm train") != std::string::npos,
             e.c_str());
    e = error_of([&] { second.start(tiny_config(4), d, nullptr); });
    QVERIFY2(e.find(mine) != std::string::npos, e.c_str());
    first.cancel();
    first.wait();
    QCOMPARE(a.status, std::string("cancelled"));
    // Released with the run: the folder resumes (and is extended by one step) once it is free.
    const int64_t at = gllm::last_valid_checkpoint(d).step;
    gllm::TrainerOptions o;
    o.steps_override = at + 1;
    Recorder b;
    second.resume(d, &b, o);
    second.wait();
    QVERIFY2(b.error.empty(), b.error.c_str());
    QCOMPARE(b.status, std::string("completed"));
    // Steps 1 … at+1 once each, in order: nothing written twice.
    std::vector<int64_t> steps;
    for (const auto& r : gllm::read_metrics(d + "/metrics.jsonl").records)
      if (r.contains("loss")) steps.push_back(r["step"].get<int64_t>());
    QCOMPARE(int64_t(steps.size()), at + 1);
    for (size_t i = 0; i < steps.size(); ++i) QCOMPARE(steps[i], int64_t(i + 1));
  }

  void completedRunIsNotResumedAgain() {
    const std::string d = dir("done");
    complete(d, tiny_config(6));
    const std::string summary = text(d + "/summary.json"), metrics = text(d + "/metrics.jsonl");
    gllm::Trainer t;
    const std::string e = error_of([&] { t.resume(d, nullptr); });
    QVERIFY2(e.find("is completed") != std::string::npos && e.find("--steps") != std::string::npos,
             e.c_str());
    QCOMPARE(text(d + "/summary.json"), summary);
    QCOMPARE(text(d + "/metrics.jsonl"), metrics);
  }

  void failedExtensionLeavesTheCompletedRunAsItWas() {
    const std::string d = dir("keep");
    complete(d, tiny_config(6));
    // A damaged metrics line makes the extension fail after its worker started.
    std::string m = text(d + "/metrics.jsonl");
    m.insert(m.find('\n') + 1, "garbage{\n");
    gllm::write_file_atomic(d + "/metrics.jsonl", m);
    const std::string summary = text(d + "/summary.json"), config = text(d + "/config.json");
    Recorder rec;
    gllm::Trainer t;
    gllm::TrainerOptions o;
    o.steps_override = 9;
    t.resume(d, &rec, o);
    t.wait();
    QVERIFY2(rec.error.find("line 2") != std::string::npos, rec.error.c_str());
    QCOMPARE(text(d + "/summary.json"), summary);  // still "completed" at step 6
    QCOMPARE(text(d + "/config.json"), config);    // steps back to 6
    QCOMPARE(nlohmann::json::parse(summary)["status"].get<std::string>(), std::string("completed"));
  }

  void lostCheckpointStoreIsRefused() {
    // An interrupted run (checkpoint at step 3, killed at 6) whose checkpoints/ is a file, a link
    // to a disk that is not mounted, or gone: refused, nothing trained or deleted.
    const std::string d = dir("lost-store");
    complete(d, tiny_config(6));
    cut_after(d, 3);
    const std::string ck = d + "/checkpoints";
    fs::rename(ck, d + "/elsewhere");
    const auto before = snapshot(d);
    gllm::Trainer t;
    gllm::TrainerOptions o;
    o.steps_override = 8;
    std::string e = error_of([&] { t.resume(d, nullptr, o); });
    QVERIFY2(e.find("is missing") != std::string::npos, e.c_str());
    gllm::test::write_text(ck, "a copy gone wrong");
    e = error_of([&] { t.resume(d, nullptr, o); });
    QVERIFY2(e.find("not a folder") != std::string::npos, e.c_str());
    QCOMPARE(text(ck), std::string("a copy gone wrong"));
    fs::remove(ck);
    fs::create_directory_symlink(d + "/unmounted", ck);
    e = error_of([&] { t.resume(d, nullptr, o); });
    QVERIFY2(e.find("symbolic link") != std::string::npos &&
                 e.find("does not exist") != std::string::npos,
             e.c_str());
    fs::remove(ck);
    QVERIFY(snapshot(d) == before);
    QVERIFY(!fs::exists(d + "/summary.json"));
    fs::rename(d + "/elsewhere", ck);  // put back: the run resumes
    Recorder rec;
    t.resume(d, &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.step_count(), int64_t(3));
  }

  void lostSidecarsAreNotTakenForANewRun() {
    // Only the step_*.json sidecars removed: the metrics show a checkpoint was committed, so the
    // run is refused rather than restarted over its weights.
    const std::string d = dir("no-sidecars");
    complete(d, tiny_config(6));
    cut_after(d, 3);
    fs::remove(d + "/checkpoints/step_000003.json");
    const auto before = snapshot(d);
    gllm::Trainer t;
    const std::string e = error_of([&] { t.resume(d, nullptr); });
    QVERIFY2(e.find("sidecars are lost") != std::string::npos &&
                 e.find("metrics.jsonl records") != std::string::npos,
             e.c_str());
    QVERIFY(snapshot(d) == before);
    QVERIFY(fs::exists(d + "/checkpoints/step_000003.safetensors"));
    // The sidecar a named pipe: named as such, not taken for "none was written yet".
    QCOMPARE(::mkfifo((d + "/checkpoints/step_000003.json").c_str(), 0644), 0);
    const std::string f = error_of([&] { t.resume(d, nullptr); });
    QVERIFY2(f.find("named pipe") != std::string::npos &&
                 f.find("none was written yet") == std::string::npos,
             f.c_str());
    QVERIFY(snapshot(d) == before);
  }

  void tamperedResumeStateIsRefused() {
    const std::string base = dir("tamper");
    complete(base, tiny_config(6));
    cut_after(base, 3);
    auto variant = [&](const std::string& name) {
      const std::string d = dir(name);
      fs::copy(base, d, fs::copy_options::recursive);
      return d;
    };
    // Sidecar tokens at 2^63 − 1 (the count would overflow negative).
    std::string d = variant("tamper-tokens");
    auto ck = gllm::last_valid_checkpoint(d);
    nlohmann::json side = ck.sidecar;
    side["tokens"] = INT64_MAX;
    gllm::write_file_atomic(ck.sidecar_path, side.dump(2));
    auto before = snapshot(d);
    gllm::Trainer t;
    std::string e = error_of([&] { t.resume(d, nullptr); });
    QVERIFY2(e.find("\"tokens\"") != std::string::npos &&
                 e.find("step_000003.json") != std::string::npos,
             e.c_str());
    QVERIFY(snapshot(d) == before);
    // Optimizer step counters INT64_MIN and 1e15, the sidecar matching the edited file.
    for (const nlohmann::json& value : {nlohmann::json(INT64_MIN), nlohmann::json(1e15)}) {
      d = variant(value.is_number_float() ? "tamper-optim-big" : "tamper-optim-min");
      tamper_optimizer_steps(gllm::last_valid_checkpoint(d), value);
      before = snapshot(d);
      e = error_of([&] { t.resume(d, nullptr); });
      QVERIFY2(e.find("optimizer step counter") != std::string::npos, e.c_str());
      QVERIFY(snapshot(d) == before);
    }
    // An emptied loader buffer: the resume would not be exact. The worker refuses it; the
    // checkpoint and metrics stay.
    d = variant("tamper-loader");
    ck = gllm::last_valid_checkpoint(d);
    side = ck.sidecar;
    side["loader"]["buffer"] = nlohmann::json::array();
    gllm::write_file_atomic(ck.sidecar_path, side.dump(2));
    before = snapshot(d);
    Recorder rec;
    t.resume(d, &rec);
    t.wait();
    QVERIFY2(rec.error.find("buffered units") != std::string::npos, rec.error.c_str());
    QCOMPARE(rec.step_count(), int64_t(0));
    QVERIFY(snapshot(d) == before);
  }

  void failedOrDivergedExtensionLeavesTheCompletedRunAsItWas() {
    // keep_checkpoints 1: the extension's first checkpoint would prune the completed run's final
    // one; a divergence (step 8) or a failed write (step 8) must leave the run as it was.
    gllm::RunConfig c = tiny_config(6, 1);
    c.train.keep_checkpoints = 1;
    for (const std::string how : {"diverge", "fail"}) {
      const std::string d = dir("extend-" + how);
      complete(d, c);
      if (how == "fail") fs::create_directory(d + "/checkpoints/step_000008.safetensors");
      const auto before = snapshot(d);
      Recorder rec;
      gllm::Trainer t;
      gllm::TrainerOptions o;
      o.steps_override = 9;
      if (how == "diverge") o.inject_nan_step = 8;
      t.resume(d, &rec, o);
      t.wait();
      if (how == "diverge") {
        QCOMPARE(rec.status, std::string("diverged"));
        QVERIFY2(rec.error.empty(), rec.error.c_str());
      } else {
        QVERIFY2(!rec.error.empty(), "the write over a folder should have failed");
        QVERIFY2(rec.error.find("left as it was") != std::string::npos, rec.error.c_str());
      }
      QCOMPARE(rec.step_count(), int64_t(how == "diverge" ? 1 : 2));
      QVERIFY(snapshot(d) == before);
      QCOMPARE(gllm::last_valid_checkpoint(d).step, int64_t(6));
      QCOMPARE(gllm::read_run(d).status, std::string("completed"));
    }
  }

  void runWithoutCheckpointRestartsInPlace() {
    // The folder a kill -9 before the first checkpoint leaves: config, a few metrics, a
    // "running" summary of a process that is gone.
    const std::string d = dir("nockpt");
    gllm::RunStore s(d);
    s.create(tiny_config(5, 0).to_json());
    s.append_metric({{"step", 1}, {"tokens", 64}, {"loss", 5.0}});
    s.append_metric({{"step", 2}, {"tokens", 128}, {"loss", 4.9}});
    s.write_summary({{"status", "running"}, {"pid", 999999}, {"name", "guard-test"}});
    // Killed while writing the first checkpoint: weights without a sidecar were never committed.
    gllm::write_file_atomic(s.weights_path(2), "partial");
    Recorder rec;
    gllm::Trainer t;
    t.resume(d, &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.status, std::string("completed"));
    QVERIFY(rec.logged("starting it again from step 0"));
    QCOMPARE(count_step_records(d), int64_t(5));
    QCOMPARE(gllm::read_run(d).status, std::string("completed"));
  }

  void configEditsThatChangeResultsAreRefusedUnlessAllowed() {
    const std::string d = dir("edit");
    complete(d, tiny_config(8));
    cut_after(d, 6);
    nlohmann::json c = nlohmann::json::parse(text(d + "/config.json"));
    c["train"]["eval_every"] = 2;  // changes no trained number: accepted silently
    c["optim"]["matrix_lr"] = 0.5;
    gllm::write_file_atomic(d + "/config.json", c.dump(2));
    gllm::Trainer t;
    const std::string e = error_of([&] { t.resume(d, nullptr); });
    QVERIFY2(e.find("optim.matrix_lr") != std::string::npos &&
                 e.find("--allow-config-change") != std::string::npos,
             e.c_str());
    QVERIFY2(e.find("eval_every") == std::string::npos, e.c_str());
    QVERIFY(!fs::exists(d + "/summary.json"));  // refused before anything was written
    gllm::TrainerOptions o;
    o.allow_config_change = true;
    Recorder rec;
    t.resume(d, &rec, o);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QCOMPARE(rec.status, std::string("completed"));
    bool recorded = false;
    for (const auto& r : gllm::read_metrics(d + "/metrics.jsonl").records)
      if (r.value("event", "") == "config_change") {
        recorded = r["step"] == 6 && r["changes"].size() == 1 &&
                   r["changes"][0]["key"] == "optim.matrix_lr" && r["changes"][0]["to"] == 0.5;
      }
    QVERIFY(recorded);
  }

  void temporariesAreCleanedOnResume() {
    const std::string d = dir("tmpfiles");
    complete(d, tiny_config(6));
    cut_after(d, 3);
    const std::string tmp = d + "/checkpoints/step_000006.safetensors.tmp.999999.0.5";
    { std::ofstream(tmp) << std::string(1 << 20, 'x'); }
    Recorder rec;
    gllm::Trainer t;
    t.resume(d, &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QVERIFY(!fs::exists(tmp));
    QVERIFY(rec.logged("removed 1 temporary file"));
  }

  void threadCountAboveTheCoresIsCapped() {
    // train.threads 1024 on a machine with a few cores: capped with a warning, not 1024 threads.
    gllm::RunConfig c = tiny_config(1);
    c.train.threads = 1024;
    Recorder rec;
    gllm::Trainer t;
    t.start(c, dir("threads"), &rec);
    t.wait();
    QVERIFY2(rec.error.empty(), rec.error.c_str());
    QVERIFY(rec.logged("train.threads is 1024"));
    QVERIFY(rec.logged("cores; using"));
  }

  void impossiblyLargeModelIsRefusedBeforeAnythingIsWritten() {
    gllm::RunConfig c = tiny_config(2);
    c.model.n_layer = 64;
    c.model.n_embd = 8192;
    c.model.n_head = 64;
    c = gllm::RunConfig::from_json(c.to_json());
    gllm::Trainer t;
    const std::string e = error_of([&] { t.start(c, dir("huge"), nullptr); });
    QVERIFY2(e.find("analytic estimate") != std::string::npos &&
                 e.find("MiB of memory") != std::string::npos,
             e.c_str());
    QVERIFY(!fs::exists(dir("huge")));
  }
};

QTEST_APPLESS_MAIN(TestTrainResumeGuard)
#include "test_train_resume_guard.moc"
