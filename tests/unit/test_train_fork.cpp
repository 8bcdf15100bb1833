// Forking a run (route 2 of the certificate): a fork with the parent's config reproduces the
// parent's losses after the fork step exactly; a fork with other grades holds its own grades and
// trains differently; a fork of another model is refused naming the keys; parent.json records it.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/fork.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

using namespace gllm;

namespace {

RunConfig parent_config() {
  RunConfig c = test::tiny_text_run(6);
  c.train.checkpoint_every = 3;
  return RunConfig::from_json(c.to_json());
}

// Step → loss of a run's metrics.jsonl.
std::map<int64_t, double> losses(const std::string& run) {
  std::map<int64_t, double> out;
  for (const auto& r : read_metrics(join_path(run, "metrics.jsonl")).records)
    if (r.contains("loss") && r["loss"].is_number())
      out[r["step"].get<int64_t>()] = r["loss"].get<double>();
  return out;
}

struct Errors : RunObserver {
  std::string error;
  void on_error(const std::string& m) override { error = m; }
};

// Trains `c` into `dir` (from `fork` when given); "" or the run's error.
std::string train(const RunConfig& c, const std::string& dir, const std::string& fork = "") {
  Trainer t;
  TrainerOptions o;
  o.fork_from = fork;
  Errors e;
  t.start(c, dir, &e, o);
  t.wait();
  return e.error;
}

}  // namespace

class TestTrainFork : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", dir("cache").c_str(), 1);
    const std::string err = train(parent_config(), dir("parent"));
    QVERIFY2(err.empty(), err.c_str());
    QCOMPARE(read_run(dir("parent")).status, std::string("completed"));
  }

  void sameConfigReproducesTheParent() {
    const std::string err = train(parent_config(), dir("same"), dir("parent") + "@3");
    QVERIFY2(err.empty(), err.c_str());
    const auto p = losses(dir("parent")), f = losses(dir("same"));
    QCOMPARE(read_run(dir("same")).status, std::string("completed"));
    QCOMPARE(f.size(), size_t(3));  // steps 4, 5, 6: the fork trains only after its fork step
    for (int64_t s = 4; s <= 6; ++s) {
      QVERIFY2(f.count(s), qPrintable(QString::number(s)));
      QCOMPARE(f.at(s), p.at(s));  // bit for bit: same weights, optimizer, RNG, data position
    }
    const auto parent = read_parent_record(dir("same"));
    QCOMPARE(parent["step"].get<int64_t>(), int64_t(3));
    QVERIFY(parent["checkpoint"].get<std::string>().find("step_000003") != std::string::npos);
    const auto summary = test::read_json(dir("same") + "/summary.json");
    QCOMPARE(summary["parent"]["step"].get<int64_t>(), int64_t(3));
  }

  void otherGradesAreTheFork_s_own() {
    RunConfig c = parent_config();
    c.grading.head_grades = "random";
    c.grading.random_seed = 9;
    c.name = "tiny-test+random-grades";
    c = RunConfig::from_json(c.to_json());
    const std::string err = train(c, dir("graded"), dir("parent"));  // the newest: step 6
    QVERIFY2(err.empty(), err.c_str());
    QCOMPARE(read_run(dir("graded")).status, std::string("completed"));
    QCOMPARE(read_parent_record(dir("graded"))["step"].get<int64_t>(), int64_t(6));
    RunConfig nine = c;
    nine.train.steps = 9;
    const std::string err9 =
        train(RunConfig::from_json(nine.to_json()), dir("graded9"), dir("parent"));
    QVERIFY2(err9.empty(), err9.c_str());
    const auto m = model_grades_from_checkpoint(dir("graded9"));
    double sum = 0;
    for (double q : m.attn_grades) sum += q;
    QVERIFY2(sum > 0, "the fork holds its own (random) head grades, not the parent's zeros");
    const auto f = losses(dir("graded9"));
    QCOMPARE(f.size(), size_t(3));  // steps 7, 8, 9
    QVERIFY(std::isfinite(f.at(7)));
  }

  void anotherModelIsRefused() {
    RunConfig c = parent_config();
    c.model.n_embd = 48;
    c.model.n_head = 2;
    c = RunConfig::from_json(c.to_json());
    const std::string err = test::error_of([&] { resolve_fork(dir("parent"), c); });
    QVERIFY2(
        err.find("model.n_embd") != std::string::npos && err.find("grading") != std::string::npos,
        err.c_str());
    const std::string err2 = test::error_of([&] { resolve_fork(dir("parent") + "@4", c); });
    QVERIFY2(err2.find("no checkpoint at step 4") != std::string::npos, err2.c_str());
  }
};

QTEST_APPLESS_MAIN(TestTrainFork)
#include "test_train_fork.moc"
