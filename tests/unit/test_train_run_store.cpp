// Run folders: metrics with a torn last line are tolerated and reported, corrupted lines and
// checkpoints give clear errors, keep-last-K, run status, and seed-matched comparisons that
// reproduce seed 001 Table 3 (DoD row 9) and the token-efficiency ratio on synthetic run folders.
#include <QtTest>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/compare.h"
#include "engine/train/events_json.h"
#include "engine/train/run_store.h"
#include "tests/support/test_support.h"

using gllm::test::error_of;
using gllm::test::write_text;

namespace fs = std::filesystem;

namespace {

// A finished run folder with the given arm, seed and final BPB (metrics reach `bpb` at step 10).
std::string make_run(const std::string& parent, const std::string& arm, int seed, double val,
                     double held, int64_t tokens_per_step = 1000) {
  std::string dir = gllm::join_path(parent, arm + "-s" + std::to_string(seed));
  gllm::RunStore s(dir);
  s.create({{"name", arm}, {"train", {{"seed", seed}, {"steps", 10}}}});
  for (int step = 1; step <= 10; ++step) {
    s.append_metric(
        {{"step", step}, {"tokens", step * tokens_per_step}, {"loss", 3.0 - 0.1 * step}});
    // val BPB falls linearly from val + 1 at step 1 to val at step 10.
    s.append_metric(
        {{"step", step}, {"tokens", step * tokens_per_step}, {"val_bpb", val + (10 - step) / 9.0}});
  }
  s.append_metric({{"step", 10}, {"tokens", 10 * tokens_per_step}, {"heldout_bpb", held}});
  s.write_summary({{"status", "completed"}, {"val_bpb", val}, {"heldout_bpb", held}});
  return dir;
}

}  // namespace

class TestTrainRunStore : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string root() const { return tmp_.path().toStdString(); }

 private Q_SLOTS:
  // The writer rank clears a run folder for its restart while the other ranks of the task check
  // it: the checkpoint folder is emptied in place, so it never goes missing under them (it was
  // removed and made again, and a rank that looked in between refused the run).
  void restartKeepsTheCheckpointFolderForOtherRanks() {
    const std::string dir = gllm::join_path(root(), "restart-race");
    gllm::RunStore s(dir);
    s.create({{"name", "restart-race"}});
    write_text(gllm::join_path(s.checkpoints_dir(), "orphan.tmp"), "left by a killed writer");
    std::atomic<bool> done{false};
    std::atomic<int> refusals{0}, checks{0};
    std::thread other_rank([&] {
      while (!done.load()) {
        try {
          gllm::check_checkpoint_store(dir);
        } catch (const gllm::Error&) {
          ++refusals;
        }
        ++checks;
      }
    });
    for (int i = 0; i < 300; ++i) {
      s.reset_for_restart();
      write_text(gllm::join_path(s.checkpoints_dir(), "orphan.tmp"), "again");
    }
    done = true;
    other_rank.join();
    QVERIFY(checks.load() > 0);
    QCOMPARE(refusals.load(), 0);
    s.reset_for_restart();
    QVERIFY(fs::is_directory(s.checkpoints_dir()));
    QVERIFY(fs::is_empty(s.checkpoints_dir()));  // the orphan is cleared with the rest
  }

  void metrics_torn_tail_and_corruption() {
    std::string p = root() + "/m1.jsonl";
    write_text(p,
               "{\"step\":1,\"tokens\":10,\"loss\":2.5}\n{\"step\":2,\"tokens\":20,\"loss\":2.4}\n{"
               "\"step\":3,\"tok");
    auto m = gllm::read_metrics(p);
    QCOMPARE(m.records.size(), size_t(2));
    QVERIFY(m.torn_tail);
    QVERIFY(m.warning.find("line 3") != std::string::npos);
    // A bad line in the middle is corruption, not a crash artefact.
    std::string q = root() + "/m2.jsonl";
    write_text(q, "{\"step\":1,\"loss\":2.5}\ngarbage\n{\"step\":3,\"loss\":2.3}\n");
    auto err = error_of([&] { gllm::read_metrics(q); });
    QVERIFY2(err.find("line 2") != std::string::npos && err.find("corrupted") != std::string::npos,
             err.c_str());
    // Records without an integer step are refused too.
    write_text(q, "{\"loss\":2.5}\n{\"step\":2}\n");
    QVERIFY(!error_of([&] { gllm::read_metrics(q); }).empty());
    // truncate_metrics_after drops later records and the torn line.
    gllm::RunStore s(root() + "/trunc");
    s.create({{"name", "t"}});
    write_text(s.metrics_path(), "{\"step\":1}\n{\"step\":2}\n{\"step\":3}\n{\"ste");
    QVERIFY(!s.truncate_metrics_after(2).empty());
    auto m2 = gllm::read_metrics(s.metrics_path());
    QCOMPARE(m2.records.size(), size_t(2));
    QVERIFY(!m2.torn_tail);
    // A second create() in the same folder is refused with the way out.
    QVERIFY(error_of([&] { s.create({{"name", "t"}}); }).find("gllm resume") != std::string::npos);
  }

  void checkpoints_verify_and_prune() {
    gllm::RunStore s(root() + "/ck");
    s.create({{"name", "ck"}});
    for (int step : {2, 4, 6, 8}) {
      write_text(s.weights_path(step), std::string(100 + step, 'w'));
      write_text(s.optimizer_path(step), std::string(50 + step, 'o'));
      s.commit_checkpoint(step, {{"tokens", step * 10}, {"loader", {{"format", 1}}}}, 3);
    }
    auto all = gllm::list_checkpoints(s.dir());
    QCOMPARE(all.size(), size_t(3));  // keep the last 3
    QCOMPARE(all.front().step, int64_t(4));
    QVERIFY(!fs::exists(s.weights_path(2)));
    for (const auto& c : all) gllm::verify_checkpoint(c);
    // Truncate the newest weights: verification names the file and the cause; resume falls back.
    fs::resize_file(s.weights_path(8), 40);
    auto err = error_of([&] { gllm::verify_checkpoint(gllm::list_checkpoints(s.dir()).back()); });
    QVERIFY2(
        err.find("truncated") != std::string::npos && err.find("step_000008") != std::string::npos,
        err.c_str());
    std::vector<std::string> skipped;
    QCOMPARE(gllm::last_valid_checkpoint(s.dir(), &skipped).step, int64_t(6));
    QCOMPARE(skipped.size(), size_t(1));
    // Same size, one byte flipped: the digest catches it.
    {
      std::fstream f(s.optimizer_path(6), std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(3);
      f.put('X');
    }
    err = error_of([&] { gllm::verify_checkpoint(gllm::list_checkpoints(s.dir())[1]); });
    QVERIFY2(err.find("SHA-512") != std::string::npos, err.c_str());
    // Missing file.
    fs::remove(s.optimizer_path(4));
    err = error_of([&] { gllm::verify_checkpoint(gllm::list_checkpoints(s.dir())[0]); });
    QVERIFY2(err.find("missing") != std::string::npos, err.c_str());
    err = error_of([&] { gllm::last_valid_checkpoint(s.dir()); });
    QVERIFY2(err.find("no valid checkpoint") != std::string::npos, err.c_str());
    // A garbled sidecar is not a committed checkpoint.
    write_text(s.sidecar_path(8), "{\"format\": ");
    QCOMPARE(gllm::list_checkpoints(s.dir()).size(), size_t(2));
  }

  void run_status() {
    std::string dir = make_run(root() + "/status", "arm", 1, 1.0, 1.1);
    QCOMPARE(gllm::read_run(dir).status, std::string("completed"));
    // "running" with a process that no longer exists reads as interrupted.
    gllm::RunStore s(dir);
    s.write_summary({{"status", "running"}, {"pid", 999999999L}});
    QCOMPARE(gllm::read_run(dir).status, std::string("interrupted"));
    s.write_summary(
        {{"status", "running"}, {"pid", static_cast<long>(QCoreApplication::applicationPid())}});
    QCOMPARE(gllm::read_run(dir).status, std::string("running"));
    auto info = gllm::read_run(dir);
    QCOMPARE(info.step, int64_t(10));
    QVERIFY(std::fabs(info.heldout_bpb - 1.1) < 1e-12);
    QVERIFY(error_of([&] { gllm::read_run(root() + "/nothing"); }).find("not a run folder") !=
            std::string::npos);
  }

  // A run cancelled between evaluations (issue 42, point 7): its val BPB says the step it was
  // measured at, from the summary the trainer writes and, without one, from metrics.jsonl.
  void val_bpb_keeps_its_step() {
    std::string dir = gllm::join_path(root(), "cancelled-s1");
    gllm::RunStore s(dir);
    s.create({{"name", "cancelled"}, {"train", {{"seed", 1}, {"steps", 100}}}});
    for (int step = 1; step <= 60; ++step) {
      s.append_metric({{"step", step}, {"tokens", step * 100}, {"loss", 3.0}});
      if (step % 25 == 0)
        s.append_metric({{"step", step}, {"tokens", step * 100}, {"val_bpb", 2.0 - step / 100.0}});
    }
    auto info = gllm::read_run(dir);
    QCOMPARE(info.step, int64_t(60));
    QCOMPARE(info.val_bpb_step, int64_t(50));
    QVERIFY(std::fabs(info.val_bpb - 1.5) < 1e-12);
    gllm::FinishedRecord f;
    f.status = "cancelled";
    f.step = 60;
    f.val_bpb = 1.5;
    f.val_bpb_step = 50;
    const nlohmann::json summary = gllm::to_json(f);
    QCOMPARE(summary.value("val_bpb_step", int64_t(-1)), int64_t(50));
    s.write_summary(summary);
    info = gllm::read_run(dir);
    QCOMPARE(info.val_bpb_step, int64_t(50));
    QCOMPARE(info.status, std::string("cancelled"));
  }

  void compare_reproduces_table3_dod() {
    // Seed 001 Table 2 held-out BPB at DEPTH = 6, cells 00, 01, 10, 11, seeds 41, 42, 47.
    std::string parent = root() + "/t3";
    const std::vector<int> seeds = {41, 42, 47};
    const std::vector<std::pair<std::string, std::vector<double>>> cells = {
        {"00_dense_native", {1.048465, 1.045764, 1.049959}},
        {"01_dense_opt", {1.047426, 1.045099, 1.047451}},
        {"10_oe_native", {1.025273, 1.022420, 1.025654}},
        {"11_oe_opt", {1.023987, 1.021989, 1.025326}}};
    std::vector<gllm::RunInfo> runs;
    for (const auto& [arm, vals] : cells)
      for (size_t i = 0; i < seeds.size(); ++i)
        runs.push_back(gllm::read_run(make_run(parent, arm, seeds[i], vals[i] + 0.001, vals[i])));
    auto j = gllm::compare_runs(runs, "00_dense_native", "heldout_bpb", true);
    // Row 1 held-out: −0.001404 ± 0.000974, CI [−0.003824, +0.001016].
    const auto& r1 = j["arms"][1]["vs_baseline"];
    QVERIFY(std::fabs(r1["mean"].get<double>() + 0.001404) < 1.5e-6);
    QVERIFY(std::fabs(r1["sd"].get<double>() - 0.000974) < 2e-6);
    QVERIFY(std::fabs(r1["ci_low"].get<double>() + 0.003824) < 6e-6);
    // Row 9 held-out: DoD(OE × Opt) = +0.000722 ± 0.001285, CI [−0.002471, +0.003915].
    const auto& d = j["dod"];
    QVERIFY(std::fabs(d["mean"].get<double>() - 0.000722) < 1.5e-6);
    QVERIFY(std::fabs(d["sd"].get<double>() - 0.001285) < 2e-6);
    QVERIFY(std::fabs(d["ci_low"].get<double>() + 0.002471) < 6e-6);
    QVERIFY(std::fabs(d["ci_high"].get<double>() - 0.003915) < 6e-6);
    QCOMPARE(d["seeds"].size(), size_t(3));
    // Only three arms: a 2x2 is refused.
    runs.resize(9);
    QVERIFY(!error_of([&] {
               gllm::compare_runs(runs, "00_dense_native", "heldout_bpb", true);
             }).empty());
    QVERIFY(!error_of([&] { gllm::compare_runs(runs, "nope", "heldout_bpb", false); }).empty());
  }

  void token_efficiency_ratio() {
    std::string parent = root() + "/eff";
    // Uniform reaches val BPB 2.0 at step 10 (tokens 10·1000); the graded arm, with the same curve
    // but 600 tokens per step, at 6000 tokens: ratio 0.6. Target 1.5 is never reached.
    std::vector<gllm::RunInfo> runs = {
        gllm::read_run(make_run(parent, "ladder-uniform", 1, 2.0, 2.0, 1000)),
        gllm::read_run(make_run(parent, "ladder-educated", 1, 2.0, 2.0, 600))};
    auto j = gllm::token_efficiency(runs, "val_bpb", 2.0, "");
    QCOMPARE(j["uniform_arm"].get<std::string>(), std::string("ladder-uniform"));
    QCOMPARE(j["runs"][0]["tokens"].get<int64_t>(), int64_t(10000));
    QCOMPARE(j["runs"][1]["tokens"].get<int64_t>(), int64_t(6000));
    QVERIFY(std::fabs(j["runs"][1]["ratio_to_uniform"].get<double>() - 0.6) < 1e-12);
    // Target 2.5 is first reached where 2 + (10 − s)/9 ≤ 2.5, i.e. s = 6 (4/9 ≤ 0.5).
    auto k = gllm::token_efficiency(runs, "val_bpb", 2.5, "ladder-uniform");
    QCOMPARE(k["runs"][0]["step"].get<int64_t>(), int64_t(6));
    auto none = gllm::token_efficiency(runs, "val_bpb", 1.5, "");
    QVERIFY(!none["runs"][0]["reached"].get<bool>());
    QVERIFY(none.contains("note"));
  }
};

QTEST_APPLESS_MAIN(TestTrainRunStore)
#include "test_train_run_store.moc"
