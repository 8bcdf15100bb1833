// Run folders under hostile edits: one owner at a time (run.lock, taken over from a dead
// process), sidecars of the wrong shape, absurd step numbers, wrong JSON types in summaries and
// configs, temporaries of killed writes, FIFOs and links where files belong, duplicate keys, names
// that look like paths. Every problem is a gllm::Error or a warning, never a crash or a hang.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "engine/config/run_config.h"
#include "engine/config/sweep.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/train/compare.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;
using gllm::test::read_json;
using gllm::test::write_text;

namespace fs = std::filesystem;

namespace {

// A run folder with one committed checkpoint at step 4 (sidecar with real sizes and digests).
std::string make_run(const std::string& parent, const std::string& name, int seed = 1) {
  const std::string dir = gllm::join_path(parent, name);
  gllm::RunStore s(dir);
  s.create({{"name", name}, {"train", {{"seed", seed}, {"steps", 4}}}});
  for (int step = 1; step <= 4; ++step)
    s.append_metric({{"step", step}, {"tokens", 10 * step}, {"loss", 2.0}});
  s.append_metric({{"step", 4}, {"tokens", 40}, {"val_bpb", 1.5}});
  write_text(s.weights_path(4), "weights");
  write_text(s.optimizer_path(4), "optimizer");
  s.commit_checkpoint(4, {{"tokens", 40}, {"loader", {{"format", 1}}}}, 3);
  s.write_summary({{"status", "completed"}, {"step", 4}, {"val_bpb", 1.5}});
  return dir;
}

}  // namespace

class TestTrainRunFolderGuard : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string root() const { return tmp_.path().toStdString(); }

 private Q_SLOTS:
  void secondWriterIsRefusedNamingTheOwner() {
    const std::string dir = root() + "/locked";
    gllm::make_directories(dir);
    auto first = gllm::RunLock::acquire(dir, "train");
    QVERIFY(first.held());
    const std::string e = error_of([&] { gllm::RunLock::acquire(dir, "resume"); });
    QVERIFY2(e.find("in use by pid " + std::to_string(::getpid())) != std::string::npos, e.c_str());
    QVERIFY2(e.find("gllm train") != std::string::npos, e.c_str());
    QVERIFY2(e.find("since ") != std::string::npos, e.c_str());
    bool locked = false;
    QCOMPARE(gllm::read_run_owner(dir, &locked).pid, long(::getpid()));
    QVERIFY(locked);
    first.release();
    QVERIFY(!first.held());
    auto again = gllm::RunLock::acquire(dir, "resume");  // released: free again
    QVERIFY(again.held());
  }

  void lockOfADeadProcessIsTakenOver() {
    const std::string dir = root() + "/stale";
    gllm::make_directories(dir);
    // A child takes the lock and dies without releasing it (as kill -9 would leave it).
    int ready[2];
    QCOMPARE(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
      auto lock = gllm::RunLock::acquire(dir, "train");
      const char c = 'x';
      (void)!::write(ready[1], &c, 1);
      ::pause();
      ::_exit(0);
    }
    struct Reaper {  // the child never outlives the test, whatever fails below
      pid_t pid;
      ~Reaper() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    } reaper{child};
    char c = 0;
    QCOMPARE(::read(ready[0], &c, 1), ssize_t(1));
    const std::string e = error_of([&] { gllm::RunLock::acquire(dir, "resume"); });
    QVERIFY2(e.find("in use by pid " + std::to_string(child)) != std::string::npos, e.c_str());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);  // the reaper's second kill and wait are harmless
    gllm::RunOwner previous;
    auto lock = gllm::RunLock::acquire(dir, "resume", &previous);
    QVERIFY(lock.held());
    QCOMPARE(previous.pid, long(child));  // what the dead owner left, for the log
    QVERIFY(previous.describe().find("gllm train") != std::string::npos);
  }

  void absurdStepNumbersAreSkipped() {
    const std::string dir = make_run(root(), "steps");
    write_text(dir + "/checkpoints/step_99999999999999999999.json",
               "{\"format\": \"gllm-checkpoint-1\"}");
    write_text(dir + "/checkpoints/step_99999999999999999999.safetensors", "x");
    std::vector<std::string> problems;
    auto all = gllm::list_checkpoints(dir, &problems);
    QCOMPARE(all.size(), size_t(1));
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(problems[0].find("64 bits") != std::string::npos, problems[0].c_str());
    QCOMPARE(gllm::last_valid_checkpoint(dir).step, int64_t(4));
    auto info = gllm::read_run(dir);
    QCOMPARE(info.last_checkpoint, int64_t(4));
    QVERIFY(!info.warnings.empty());
  }

  void sidecarOfTheWrongShapeIsNotACheckpoint() {
    const std::string dir = make_run(root(), "sidecar");
    const std::string side = dir + "/checkpoints/step_000004.json";
    const auto good = read_json(side);
    struct Case {
      const char* what;
      std::function<void(nlohmann::json&)> edit;
      const char* want;
    };
    const Case cases[] = {
        {"no loader", [](nlohmann::json& j) { j.erase("loader"); }, "loader"},
        {"bytes as text", [](nlohmann::json& j) { j["weights"]["bytes"] = "many"; },
         "size or SHA-512"},
        {"digest as number", [](nlohmann::json& j) { j["optimizer"]["sha512"] = 5; },
         "size or SHA-512"},
        {"step elsewhere", [](nlohmann::json& j) { j["step"] = 5; },
         "does not match the file name"},
        {"format as list", [](nlohmann::json& j) { j["format"] = nlohmann::json::array(); },
         "not a gllm checkpoint"},
        {"weights as text", [](nlohmann::json& j) { j["weights"] = "w"; }, "no record of weights"},
    };
    for (const auto& c : cases) {
      auto j = good;
      c.edit(j);
      gllm::write_file_atomic(side, j.dump());
      auto all = gllm::list_checkpoints(dir);
      QCOMPARE(all.size(), size_t(1));
      const std::string e = error_of([&] { gllm::verify_checkpoint(all[0]); });
      QVERIFY2(e.find(c.want) != std::string::npos, (std::string(c.what) + ": " + e).c_str());
      const std::string e2 = error_of([&] { gllm::last_valid_checkpoint(dir); });
      QVERIFY2(e2.find(c.want) != std::string::npos, (std::string(c.what) + ": " + e2).c_str());
    }
  }

  void auditAndCompileInputsAreVerified() {
    const std::string dir = make_run(root(), "verify");
    const std::string w = dir + "/checkpoints/step_000004.safetensors";
    QCOMPARE(gllm::resolve_weights_path(w), w);
    QCOMPARE(gllm::resolve_weights_path(dir + "/checkpoints/step_000004.json"), w);
    write_text(w, "weightz");  // same size, other bytes
    std::string e = error_of([&] { gllm::resolve_weights_path(w); });
    QVERIFY2(e.find("SHA-512") != std::string::npos, e.c_str());
    // Weights inside checkpoints/ without a sidecar were never committed.
    write_text(dir + "/checkpoints/step_000008.safetensors", "w");
    e = error_of([&] { gllm::resolve_weights_path(dir + "/checkpoints/step_000008.safetensors"); });
    QVERIFY2(e.find("never committed") != std::string::npos, e.c_str());
    // A file outside a run passes unchecked (exported models have no sidecar).
    write_text(root() + "/model.safetensors", "m");
    QCOMPARE(gllm::resolve_weights_path(root() + "/model.safetensors"),
             root() + "/model.safetensors");
  }

  void wrongTypesInRunFilesAreWarningsOrErrors() {
    const std::string parent = root() + "/types";
    const std::string a = make_run(parent, "a", 1);
    const std::string b = make_run(parent, "b", 2);
    // b: status and pid of the wrong types, heldout as text, a metrics record with odd values.
    write_text(b + "/summary.json", R"({"status": 5, "pid": "me", "heldout_bpb": "low"})");
    gllm::append_line(b + "/metrics.jsonl",
                      R"({"step": 5, "tokens": "many", "val_bpb": [1], "loss": {}})");
    auto rb = gllm::read_run(b);
    QCOMPARE(rb.step, int64_t(5));
    QCOMPARE(rb.tokens, int64_t(40));
    // c: a config whose name and seed have the wrong types; d: a config that is not an object.
    const std::string c = parent + "/c", d = parent + "/d";
    gllm::make_directories(c);
    gllm::make_directories(d);
    write_text(c + "/config.json", R"({"name": 5, "train": {"seed": "x", "steps": [4]}})");
    write_text(d + "/config.json", "[1, 2]");
    auto rc = gllm::read_run(c);
    QCOMPARE(rc.name, std::string());
    QCOMPARE(rc.seed, 0);
    std::vector<std::string> errors;
    auto runs = gllm::list_runs(parent, &errors);
    QCOMPARE(runs.size(), size_t(3));  // a, b, c; d reported
    QCOMPARE(errors.size(), size_t(1));
    QVERIFY2(errors[0].find("/d/config.json") != std::string::npos, errors[0].c_str());
    // A summary of a wrong shape is a warning, not the end of the listing.
    write_text(a + "/summary.json", "[\"completed\"]");
    QVERIFY(!gllm::read_run(a).warnings.empty());
    // first_reach reads steps and tokens defensively too.
    auto reach =
        gllm::first_reach({{{"step", "one"}, {"tokens", "x"}, {"val_bpb", 1.0}}}, "val_bpb", 2.0);
    QVERIFY(reach.found);
    QCOMPARE(reach.step, int64_t(0));
  }

  void metricsLinesAreBounded() {
    const std::string p = root() + "/m.jsonl";
    write_text(p, "{\"step\": 1}\n{\"step\": 2, \"x\": \"" + std::string(2 << 20, 'x') +
                      "\"}\n{\"step\": 3}\n");
    const std::string e = error_of([&] { gllm::read_metrics(p); });
    QVERIFY2(e.find("line 2") != std::string::npos, e.c_str());
    write_text(p, "{\"step\": 1}\n{\"step\": " + std::string(100000, '[') + "\n{\"step\": 3}\n");
    QVERIFY(!error_of([&] { gllm::read_metrics(p); }).empty());
    write_text(p, "{\"step\": 18446744073709551615}\n{\"step\": 2}\n");
    QVERIFY(!error_of([&] { gllm::read_metrics(p); }).empty());
  }

  void temporariesOfKilledWritesAreRemoved() {
    const std::string dir = make_run(root(), "tmps");
    gllm::RunStore s(dir);
    // A dead writer's temporaries go; a live process's (this one's own excepted) stay.
    const std::string dead = dir + "/checkpoints/step_000008.safetensors.tmp.999999.0.17";
    const std::string dead2 = dir + "/summary.json.tmp.999998.3.1";
    const std::string live = dir + "/metrics.jsonl.tmp.1.0.1";  // pid 1 is alive
    write_text(dead, std::string(1 << 20, 'x'));
    write_text(dead2, "{}");
    write_text(live, "{}");
    const auto removed = s.remove_temporaries();
    QCOMPARE(removed.files, 2);
    QCOMPARE(removed.bytes, uint64_t((1 << 20) + 2));
    QVERIFY(!fs::exists(dead) && !fs::exists(dead2) && fs::exists(live));
    QVERIFY(fs::exists(dir + "/checkpoints/step_000004.safetensors"));
  }

  void restartClearsOnlyARunWithoutCheckpoints() {
    const std::string dir = make_run(root(), "restart");
    gllm::RunStore s(dir);
    QVERIFY(!error_of([&] { s.reset_for_restart(); }).empty());  // it has a checkpoint
    QVERIFY(fs::exists(dir + "/metrics.jsonl"));
    const std::string fresh = root() + "/fresh";
    gllm::RunStore f(fresh);
    f.create({{"name", "fresh"}});
    f.append_metric({{"step", 1}, {"loss", 3.0}});
    f.write_summary({{"status", "running"}, {"pid", 999999}});
    f.reset_for_restart();
    QVERIFY(!fs::exists(fresh + "/metrics.jsonl") && !fs::exists(fresh + "/summary.json"));
    QVERIFY(fs::exists(fresh + "/config.json") && fs::is_directory(fresh + "/checkpoints"));
  }

  void nonRegularFilesAreRefusedWithoutBlocking() {
    // Each read below would block for ever on a FIFO without a writer if it were opened plainly.
    const std::string fifo = root() + "/pipe";
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    std::string e = error_of([&] { gllm::read_file(fifo); });
    QVERIFY2(e.find("named pipe") != std::string::npos && e.find(fifo) != std::string::npos,
             e.c_str());
    e = error_of([&] { gllm::read_json_file(fifo, "fix it", {}); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::read_file(root()); });
    QVERIFY2(e.find("folder") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::read_file("/dev/zero"); });
    QVERIFY2(e.find("device") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::RunConfig::load(fifo); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::read_sweep_file(fifo); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    // A run's config.json, metrics.jsonl and newest sidecar as FIFOs.
    const std::string a = make_run(root(), "fifo-config");
    fs::remove(a + "/config.json");
    QCOMPARE(::mkfifo((a + "/config.json").c_str(), 0644), 0);
    e = error_of([&] { gllm::read_run(a); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    const std::string b = make_run(root(), "fifo-metrics");
    fs::remove(b + "/metrics.jsonl");
    QCOMPARE(::mkfifo((b + "/metrics.jsonl").c_str(), 0644), 0);
    e = error_of([&] { gllm::read_run(b); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::RunStore(b).append_metric({{"step", 5}}); });
    QVERIFY2(e.find("not a regular file") != std::string::npos, e.c_str());
    const std::string c = make_run(root(), "fifo-sidecar");
    QCOMPARE(::mkfifo((c + "/checkpoints/step_000009.json").c_str(), 0644), 0);
    std::vector<std::string> problems;
    QCOMPARE(gllm::list_checkpoints(c, &problems).size(), size_t(1));
    QCOMPARE(problems.size(), size_t(1));
    QVERIFY2(problems[0].find("named pipe") != std::string::npos, problems[0].c_str());
  }

  void linksAreNeverWrittenThrough() {
    const std::string other = make_run(root(), "other");
    const std::string summary = gllm::read_file(other + "/summary.json");
    // run.lock pointing at another run's summary: refused, the summary untouched.
    const std::string dir = make_run(root(), "linked");
    fs::create_symlink(other + "/summary.json", dir + "/run.lock");
    std::string e = error_of([&] { gllm::RunLock::acquire(dir, "resume"); });
    QVERIFY2(
        e.find("symbolic link") != std::string::npos && e.find("run.lock") != std::string::npos,
        e.c_str());
    QCOMPARE(gllm::read_file(other + "/summary.json"), summary);
    // metrics.jsonl as a link: appending is refused, the target untouched.
    fs::remove(dir + "/metrics.jsonl");
    fs::create_symlink(other + "/summary.json", dir + "/metrics.jsonl");
    e = error_of([&] { gllm::RunStore(dir).append_metric({{"step", 5}, {"loss", 1.0}}); });
    QVERIFY2(e.find("symbolic link") != std::string::npos, e.c_str());
    QCOMPARE(gllm::read_file(other + "/summary.json"), summary);
    // An atomic write replaces a link by a file; it never writes into the link's target.
    fs::remove(dir + "/summary.json");
    fs::create_symlink(other + "/summary.json", dir + "/summary.json");
    gllm::RunStore(dir).write_summary({{"status", "completed"}, {"step", 99}});
    QCOMPARE(gllm::read_file(other + "/summary.json"), summary);
    QVERIFY(!fs::is_symlink(dir + "/summary.json"));
  }

  void checkpointStoreMustBeAFolderOfTheRun() {
    const std::string dir = make_run(root(), "store");
    gllm::check_checkpoint_store(dir);  // the folder as written: fine
    const std::string ck = dir + "/checkpoints";
    fs::rename(ck, dir + "/moved");
    std::string e = error_of([&] { gllm::check_checkpoint_store(dir); });
    QVERIFY2(e.find("is missing") != std::string::npos && e.find("mkdir") != std::string::npos,
             e.c_str());
    write_text(ck, "a copy gone wrong");
    e = error_of([&] { gllm::check_checkpoint_store(dir); });
    QVERIFY2(e.find("a regular file, not a folder") != std::string::npos, e.c_str());
    fs::remove(ck);
    fs::create_symlink(root() + "/unmounted/disk", ck);
    e = error_of([&] { gllm::check_checkpoint_store(dir); });
    QVERIFY2(e.find("symbolic link") != std::string::npos &&
                 e.find("does not exist") != std::string::npos,
             e.c_str());
    fs::remove(ck);
    fs::create_directory_symlink(dir + "/moved", ck);
    e = error_of([&] { gllm::check_checkpoint_store(dir); });
    QVERIFY2(e.find("symbolic link") != std::string::npos, e.c_str());
    fs::remove(ck);
    QCOMPARE(::mkfifo(ck.c_str(), 0644), 0);
    e = error_of([&] { gllm::check_checkpoint_store(dir); });
    QVERIFY2(e.find("named pipe") != std::string::npos, e.c_str());
    fs::remove(ck);
    fs::rename(dir + "/moved", ck);
    gllm::check_checkpoint_store(dir);
  }

  void duplicateKeysAreErrors() {
    std::string e = error_of([] { gllm::parse_json(R"({"a": 1, "a": 2})", "x.json", "fix it"); });
    QVERIFY2(
        e.find("x.json") != std::string::npos && e.find("\"a\" appears twice") != std::string::npos,
        e.c_str());
    e = error_of([] { gllm::parse_json(R"({"m": {"b": 1}, "n": [{"c": 1, "c": 1}]})", "y", ""); });
    QVERIFY2(e.find("\"c\" appears twice") != std::string::npos, e.c_str());
    // The same key in two different objects is fine.
    QCOMPARE(gllm::parse_json(R"({"m": {"k": 1}, "n": {"k": 2}})", "z", "")["n"]["k"].get<int>(),
             2);
    // A preset with train.steps twice, and with the section "model" twice.
    write_text(root() + "/dup1.json", R"({"name": "d", "train": {"steps": 5, "steps": 500}})");
    e = error_of([&] { gllm::RunConfig::load(root() + "/dup1.json"); });
    QVERIFY2(e.find("\"steps\" appears twice") != std::string::npos &&
                 e.find("dup1.json") != std::string::npos,
             e.c_str());
    write_text(root() + "/dup2.json", R"({"model": {"n_layer": 1}, "model": {"n_layer": 2}})");
    e = error_of([&] { gllm::RunConfig::load(root() + "/dup2.json"); });
    QVERIFY2(e.find("\"model\" appears twice") != std::string::npos, e.c_str());
    write_text(root() + "/dup-sweep.json", R"({"arms": ["tiny-cpu"], "seeds": [1], "seeds": [2]})");
    e = error_of([&] { gllm::read_sweep_file(root() + "/dup-sweep.json"); });
    QVERIFY2(e.find("\"seeds\" appears twice") != std::string::npos, e.c_str());
  }

  void namesAreNotPaths() {
    for (const std::string& name :
         std::vector<std::string>{"../../escaped", "/abs/path", "..", ".", "a/b", "", ".hidden",
                                  std::string(500, 'x'), std::string("nul\0in", 6)}) {
      const std::string f = gllm::folder_name(name);
      QVERIFY2(!f.empty() && f.size() <= 96, f.c_str());
      QVERIFY2(f.find('/') == std::string::npos && f.find('\0') == std::string::npos, f.c_str());
      QVERIFY2(f[0] != '.', f.c_str());
      QVERIFY2(fs::path(gllm::join_path(root(), f)).parent_path() == fs::path(root()), f.c_str());
    }
    QCOMPARE(gllm::folder_name("tiny-cpu_2.b"), std::string("tiny-cpu_2.b"));
    QCOMPARE(gllm::folder_name("tiny-cpu+storage=bf16"), std::string("tiny-cpu+storage=bf16"));
    QCOMPARE(gllm::folder_name("a b:c*d?\\e"), std::string("a_b_c_d__e"));
    const std::string made = gllm::new_run_dir(root(), "../../escaped");
    QCOMPARE(fs::path(made).parent_path(), fs::path(root()));
  }

  void configsAreComparedKeyByKey() {
    const nlohmann::json a = {{"name", "x"}, {"description", "one"}, {"train", {{"steps", 4}}}};
    nlohmann::json b = a;
    b["description"] = "two";
    QVERIFY(gllm::config_differences(a, b).empty());  // descriptions do not count
    b["train"]["steps"] = 8;
    b["name"] = "y";
    const auto d = gllm::config_differences(a, b);
    QCOMPARE(d.size(), size_t(2));
    QVERIFY2(d[1].find("train.steps 4 → 8") != std::string::npos, d[1].c_str());
  }

  void runningMeansTheLockIsHeld() {
    const std::string dir = make_run(root(), "pidreuse");
    gllm::RunStore s(dir);
    // The recorded pid is alive (this process) but nobody holds the lock: a killed run whose
    // pid was reused.
    { auto lock = gllm::RunLock::acquire(dir, "train"); }
    s.write_summary({{"status", "running"}, {"pid", static_cast<long>(::getpid())}});
    QCOMPARE(gllm::read_run(dir).status, std::string("interrupted"));
    auto lock = gllm::RunLock::acquire(dir, "train");
    QCOMPARE(gllm::read_run(dir).status, std::string("running"));
  }

  void efficiencyRefusesATargetOrBaselineThatDoesNotFit() {
    const std::string parent = root() + "/eff";
    make_run(parent, "uniform", 1);
    make_run(parent, "educated", 1);
    const auto runs = gllm::list_runs(parent);
    std::string e = error_of([&] { gllm::token_efficiency(runs, "val_bpb", NAN, ""); });
    QVERIFY2(e.find("finite") != std::string::npos, e.c_str());
    e = error_of([&] { gllm::token_efficiency(runs, "val_bpb", 2.0, "unifrom"); });
    QVERIFY2(e.find("'unifrom' names no arm") != std::string::npos &&
                 e.find("'educated'") != std::string::npos,
             e.c_str());
    QVERIFY(error_of([&] { gllm::token_efficiency(runs, "val_bpb", 2.0, "uniform"); }).empty());
  }

  void oneSeedHasNoInterval() {
    const std::string parent = root() + "/oneseed";
    make_run(parent, "x", 1);
    auto runs = gllm::list_runs(parent);
    auto j = gllm::compare_runs(runs, "x", "val_bpb", false);
    QCOMPARE(j["arms"][0]["summary"]["interval"].get<bool>(), false);
    QVERIFY(j["arms"][0]["summary"].contains("note"));
  }
};

QTEST_APPLESS_MAIN(TestTrainRunFolderGuard)
#include "test_train_run_folder_guard.moc"
