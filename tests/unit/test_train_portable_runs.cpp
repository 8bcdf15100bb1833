// Portable run folders: a run stores the files its config names relative to the project, and a
// run tree moved elsewhere — another checkout, or from runs/ into bench/results/ — reopens and
// resumes there; find_run_file re-anchors a config written on another machine.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

#include "engine/config/run_paths.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

using namespace gllm;
namespace fs = std::filesystem;

namespace {

struct Errors : RunObserver {
  std::string error;
  void on_error(const std::string& m) override { error = m; }
};

std::string resume(const std::string& run, int64_t steps) {
  Trainer t;
  TrainerOptions o;
  o.steps_override = steps;
  Errors e;
  t.resume(run, &e, o);
  t.wait();
  return e.error;
}

}  // namespace

class TestTrainPortableRuns : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", dir("cache").c_str(), 1);
  }

  void aMovedRunTreeResumes() {
    // A project "a" with its presets and a corpus; the run's config names the corpus.
    fs::create_directories(dir("a/presets"));
    fs::create_directories(dir("a/data"));
    fs::copy_file(test::fixture("runs_corpus.txt"), dir("a/data/corpus.txt"));
    ::setenv("GLLM_PRESETS", dir("a/presets").c_str(), 1);
    RunConfig c = test::tiny_text_run(4);
    c.data.corpus_path = dir("a/data/corpus.txt");
    c.train.checkpoint_every = 2;
    c = RunConfig::from_json(c.to_json());
    {
      Trainer t;
      Errors e;
      t.start(c, dir("a/runs/r"), &e);
      t.wait();
      QVERIFY2(e.error.empty(), e.error.c_str());
    }
    QCOMPARE(read_run(dir("a/runs/r")).status, std::string("completed"));
    const auto stored = test::read_json(dir("a/runs/r/config.json"));
    QCOMPARE(stored["data"]["corpus_path"].get<std::string>(), std::string("data/corpus.txt"));

    // The whole project moves (another checkout); the program runs from a third place.
    fs::rename(dir("a"), dir("b"));
    fs::create_directories(dir("elsewhere/presets"));
    ::setenv("GLLM_PRESETS", dir("elsewhere/presets").c_str(), 1);
    QCOMPARE(find_run_file("data/corpus.txt", dir("b/runs/r")),
             fs::weakly_canonical(dir("b/data/corpus.txt")).string());
    std::string err = resume(dir("b/runs/r"), 6);  // extends: reads the corpus again
    QVERIFY2(err.empty(), err.c_str());
    QCOMPARE(read_run(dir("b/runs/r")).step, int64_t(6));

    // The run alone moves deeper into the project (runs/ → bench/results/).
    fs::create_directories(dir("b/bench/results"));
    fs::rename(dir("b/runs/r"), dir("b/bench/results/r"));
    err = resume(dir("b/bench/results/r"), 8);
    QVERIFY2(err.empty(), err.c_str());
    QCOMPARE(read_run(dir("b/bench/results/r")).step, int64_t(8));
    ::setenv("GLLM_PRESETS", test::source_file("presets").c_str(), 1);
  }

  void portableConfigAndAbsolutePathsFromAnotherMachine() {
    fs::create_directories(dir("p/presets/ladders"));
    test::write_text(dir("p/presets/ladders/l.json"), "{}");
    ::setenv("GLLM_PRESETS", dir("p/presets").c_str(), 1);
    nlohmann::json j = {{"grading", {{"ladder_file", dir("p/presets/ladders/l.json")}}},
                        {"data", {{"corpus_path", "/somewhere/else.txt"}}}};
    const auto pj = portable_config(j);
    QCOMPARE(pj["grading"]["ladder_file"].get<std::string>(),
             std::string("presets/ladders/l.json"));
    QCOMPARE(pj["data"]["corpus_path"].get<std::string>(), std::string("/somewhere/else.txt"));
    // Written as /work/sweep/presets/… on another machine: found from its presets/ part.
    fs::create_directories(dir("p/runs/x"));
    QCOMPARE(find_run_file("/no/such/machine/presets/ladders/l.json", dir("p/runs/x")),
             fs::weakly_canonical(dir("p/presets/ladders/l.json")).string());
    QCOMPARE(find_run_file("/no/such/file.json", dir("p/runs/x")),
             std::string("/no/such/file.json"));
    ::setenv("GLLM_PRESETS", test::source_file("presets").c_str(), 1);
  }

  void forkRecordsAreRelative() {
    const nlohmann::json rec = {
        {"parent_run", dir("t/runs/trunk")},
        {"checkpoint", dir("t/runs/trunk/checkpoints/step_000002.safetensors")},
        {"step", 2}};
    const auto p = portable_fork_record(rec, dir("t/runs/child"));
    QCOMPARE(p["parent_run"].get<std::string>(), std::string("../trunk"));
    QCOMPARE(p["checkpoint"].get<std::string>(),
             std::string("../trunk/checkpoints/step_000002.safetensors"));
    QCOMPARE(p["step"].get<int>(), 2);
  }
};

QTEST_APPLESS_MAIN(TestTrainPortableRuns)
#include "test_train_portable_runs.moc"
