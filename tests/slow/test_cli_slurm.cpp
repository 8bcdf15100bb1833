// gllm submit, runs, cancel and requeue against a real one-node SLURM (scripts/slurm-local.sh,
// started by this test's CTest fixture): array throttling, equal losses, cancel, exact requeue.
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "engine/cluster/scheduler_record.h"
#include "engine/io/atomic_file.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

namespace {

std::vector<double> step_losses(const std::string& dir) {
  std::vector<double> out;
  for (const auto& r : gllm::read_metrics(dir + "/metrics.jsonl").records)
    if (r.contains("loss")) out.push_back(r["loss"].get<double>());
  return out;
}

int64_t last_step(const std::string& dir) {
  int64_t s = 0;
  try {
    for (const auto& r : gllm::read_metrics(dir + "/metrics.jsonl").records)
      s = std::max<int64_t>(s, r["step"].get<int64_t>());
  } catch (...) {
  }
  return s;
}

bool final_state(const std::string& s) {
  return s == "completed" || s == "failed" || s == "cancelled" || s == "timeout" || s == "lost" ||
         s == "never_submitted";
}

}  // namespace

class TestCliSlurm : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::vector<std::string> env_;
  std::string path(const std::string& n) const { return tmp_.path().toStdString() + "/" + n; }

  // `gllm runs DIR --json`, keyed by run folder.
  std::map<std::string, nlohmann::json> runs(const std::string& dir,
                                             const std::vector<std::string>& env = {}) {
    std::vector<std::string> e = env_;
    e.insert(e.end(), env.begin(), env.end());
    auto r = gllm::test::run_cli({"runs", dir, "--json"}, e, 120000);
    if (r.exit_code != 0) qFatal("gllm runs failed: %s", (r.out + r.err).c_str());
    std::map<std::string, nlohmann::json> out;
    const auto listing = nlohmann::json::parse(r.out);
    // A folder that does not read is a failure to show, never a run silently left out.
    if (!listing["errors"].empty()) qFatal("gllm runs %s: %s", dir.c_str(), r.out.c_str());
    for (const auto& run : listing["runs"]) out[run["dir"].get<std::string>()] = run;
    return out;
  }
  static std::string state_of(const nlohmann::json& run) {
    return run["scheduler"].is_object() ? run["scheduler"]["state"].get<std::string>() : "";
  }
  // Polls every 2 s (the bounded rate a user's `watch` would have) until every cluster run under
  // `dir` is final; returns every state seen per run.
  std::map<std::string, std::set<std::string>> wait_final(const std::string& dir,
                                                          int timeout_s = 900) {
    std::map<std::string, std::set<std::string>> seen;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      bool all = true;
      for (const auto& [d, run] : runs(dir)) {
        seen[d].insert(state_of(run));
        all = all && final_state(state_of(run));
      }
      if (all) return seen;
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    qFatal("cluster runs under %s did not finish within %d s", dir.c_str(), timeout_s);
  }
  std::string wait_state(const std::string& run_dir,
                         const std::function<bool(const nlohmann::json&)>& ok,
                         int timeout_s = 600) {
    const std::string parent = std::filesystem::path(run_dir).parent_path().string();
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    std::string last;
    while (std::chrono::steady_clock::now() < end) {
      auto all = runs(run_dir);
      if (!all.count(run_dir)) {
        auto r = gllm::test::run_cli({"runs", run_dir, "--json"}, env_, 120000);
        qFatal("gllm runs %s does not list it: %s", run_dir.c_str(), (r.out + r.err).c_str());
      }
      if (ok(all[run_dir])) return state_of(all[run_dir]);
      last = state_of(all[run_dir]);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    (void)parent;
    qFatal("%s did not reach the state waited for within %d s (last: %s, step %lld)",
           run_dir.c_str(), timeout_s, last.c_str(), static_cast<long long>(last_step(run_dir)));
  }
  gllm::test::CommandResult cli(const std::vector<std::string>& args,
                                const std::vector<std::string>& env = {}) {
    std::vector<std::string> e = env_;
    e.insert(e.end(), env.begin(), env.end());
    return gllm::test::run_cli(args, e, 300000);
  }
  // [start, end] in seconds of each task of array job `job_id`, read from the cluster's job
  // completion log (JobCompLoc in SLURM_CONF, written when a task ends); waits up to 60 s for
  // `count` tasks to appear there.
  std::vector<std::pair<int64_t, int64_t>> task_spans(const std::string& job_id, size_t count) {
    std::string log_path;
    {
      std::ifstream conf(std::getenv("SLURM_CONF"));
      for (std::string line; std::getline(conf, line);)
        if (line.rfind("JobCompLoc=", 0) == 0) log_path = line.substr(11);
    }
    if (log_path.empty()) qFatal("SLURM_CONF names no JobCompLoc");
    const std::regex time_re(R"((\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+))");
    auto seconds = [&](const std::string& field, const std::string& line) -> int64_t {
      const auto at = line.find(" " + field + "=");
      std::smatch m;
      const std::string rest = at == std::string::npos ? "" : line.substr(at + field.size() + 2);
      if (!std::regex_search(rest, m, time_re) || m.position(0) != 0)
        qFatal("no %s in the job completion line: %s", field.c_str(), line.c_str());
      std::tm t{};
      t.tm_year = std::stoi(m[1]) - 1900;
      t.tm_mon = std::stoi(m[2]) - 1;
      t.tm_mday = std::stoi(m[3]);
      t.tm_hour = std::stoi(m[4]);
      t.tm_min = std::stoi(m[5]);
      t.tm_sec = std::stoi(m[6]);
      return static_cast<int64_t>(timegm(&t));
    };
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::vector<std::pair<int64_t, int64_t>> spans;
    while (true) {
      spans.clear();
      std::ifstream in(log_path);
      for (std::string line; std::getline(in, line);)
        if (line.find(" ArrayJobId=" + job_id + " ") != std::string::npos)
          spans.emplace_back(seconds("StartTime", line), seconds("EndTime", line));
      if (spans.size() >= count || std::chrono::steady_clock::now() > end) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (spans.size() != count)
      qFatal("%s lists %zu tasks of job %s, not %zu", log_path.c_str(), spans.size(),
             job_id.c_str(), count);
    return spans;
  }
  std::string write_preset(const std::string& name, int steps, int checkpoint_every) {
    gllm::RunConfig c = gllm::test::tiny_text_run(steps);
    c.name = name;
    c.train.checkpoint_every = checkpoint_every;
    const std::string p = path(name + ".json");
    gllm::write_file_atomic(p, c.to_json().dump(2));
    return p;
  }

 private Q_SLOTS:
  void initTestCase() {
    const char* conf = std::getenv("SLURM_CONF");
    QVERIFY2(conf && gllm::file_exists(conf),
             "SLURM_CONF names no slurm.conf: this test runs under CTest, whose fixture starts "
             "the local cluster with scripts/slurm-local.sh start");
    // Each step takes at least 100 ms (sbatch passes the variable on to the tasks): a tiny run
    // takes 40 steps in about a second here, too fast to requeue or watch mid-way.
    env_ = {"GLLM_DATA=" + path("cache"), "GLLM_CONFIG=" + path("config"),
            "GLLM_RUNS=" + path("runs"), "GLLM_TEST_STEP_DELAY_MS=100"};
    auto r = cli({"cluster", "set", "local", "--partition", "debug", "--time-limit", "00:20:00",
                  "--cpus-per-task", "1", "--mem-per-task", "1G", "--max-parallel", "2"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
  }

  // Three seeds, two at a time: the third starts only when one of the first two has ended, all
  // complete, and each equals the same run trained here step by step.
  void arrayOfThreeMatchesLocalRuns() {
    write_preset("slurm-tiny", 12, 0);
    gllm::write_file_atomic(
        path("sweep.json"),
        R"({"name": "three", "arms": ["slurm-tiny.json"], "seeds": [41, 42, 43]})");
    auto dry = cli({"submit", "--sweep", path("sweep.json"), "--cluster", "local", "--dry-run"});
    QVERIFY2(dry.exit_code == 0, (dry.out + dry.err).c_str());
    QVERIFY(dry.out.find("#SBATCH --array=0-2%2") != std::string::npos);
    QVERIFY(!gllm::file_exists(path("runs/three")));  // a dry run makes nothing
    auto sub = cli({"submit", "--sweep", path("sweep.json"), "--cluster", "local", "--json"});
    QVERIFY2(sub.exit_code == 0, (sub.out + sub.err).c_str());
    const auto j = nlohmann::json::parse(sub.out);
    QCOMPARE(j["runs"].size(), size_t(3));
    QVERIFY(gllm::file_exists(j["script_path"].get<std::string>()));
    // Folders exist at once, config first, each naming its job and array index.
    const auto first = runs(path("runs/three"));
    QCOMPARE(first.size(), size_t(3));
    for (const auto& [d, run] : first) {
      const auto& s = run["scheduler"];
      QVERIFY2(s.is_object(), d.c_str());
      QVERIFY(s["task_id"].get<std::string>().find(j["job_id"].get<std::string>() + "_") == 0);
    }
    // A second submission of the same sweep is refused while it is on the cluster.
    auto again = cli({"submit", "--sweep", path("sweep.json"), "--cluster", "local"});
    QVERIFY(again.exit_code != 0);
    QVERIFY2(again.err.find("not submitted twice") != std::string::npos, again.err.c_str());

    const auto seen = wait_final(path("runs/three"));
    for (const auto& [d, states] : seen) QVERIFY2(states.count("completed"), d.c_str());
    // The throttle, from the cluster's own record of when each task ran (a snapshot of the
    // pending reason races the scheduler's first pass on a busy machine): the third task started
    // only when one of the first two had ended.
    auto spans = task_spans(j["job_id"].get<std::string>(), 3);
    std::sort(spans.begin(), spans.end());
    QVERIFY2(spans[2].first >= std::min(spans[0].second, spans[1].second),
             "with %2 the third task waits until one of the first two has ended");
    for (int seed : {41, 42, 43}) {
      const std::string local = path("local-s" + std::to_string(seed));
      auto r = cli({"train", path("slurm-tiny.json"), "--seed", std::to_string(seed), "--out",
                    local, "--quiet"});
      QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
      const auto cluster = step_losses(path("runs/three/slurm-tiny-s" + std::to_string(seed)));
      const auto here = step_losses(local);
      QCOMPARE(cluster.size(), size_t(12));
      QCOMPARE(cluster, here);  // same program, same threads: the same numbers
    }
  }

  // A sweep whose arms fork from a parent's checkpoint: each task forks on its node (parent.json
  // made before sbatch) and trains the same steps, to the same losses, as the sweep trained here.
  void forkedArmsMatchTheLocalSweep() {
    write_preset("slurm-fork", 12, 6);
    gllm::RunConfig graded = gllm::test::tiny_text_run(12);
    graded.name = "slurm-fork-random";
    graded.train.checkpoint_every = 6;
    graded.grading.head_grades = "random";
    graded.grading.random_seed = 9;
    gllm::write_file_atomic(path("slurm-fork-random.json"),
                            gllm::RunConfig::from_json(graded.to_json()).to_json().dump(2));
    auto parent = cli({"train", path("slurm-fork.json"), "--seed", "41", "--out",
                       path("fork-parent-s41"), "--quiet"});
    QVERIFY2(parent.exit_code == 0, (parent.out + parent.err).c_str());
    const nlohmann::json sweep = {{"name", "forked"},
                                  {"fork", path("fork-parent-s{seed}") + "@6"},
                                  {"arms", {"slurm-fork.json", "slurm-fork-random.json"}},
                                  {"seeds", {41}}};
    gllm::write_file_atomic(path("forked.json"), sweep.dump(2));
    auto sub = cli({"submit", "--sweep", path("forked.json"), "--cluster", "local"});
    QVERIFY2(sub.exit_code == 0, (sub.out + sub.err).c_str());
    for (const auto& [d, states] : wait_final(path("runs/forked")))
      QVERIFY2(states.count("completed"), d.c_str());
    auto local =
        cli({"train", "--sweep", path("forked.json"), "--out", path("forked-here"), "--quiet"});
    QVERIFY2(local.exit_code == 0, (local.out + local.err).c_str());
    for (const std::string arm : {"slurm-fork-s41", "slurm-fork-random-s41"}) {
      const std::string there = path("runs/forked/" + arm);
      QCOMPARE(gllm::read_parent_record(there)["step"].get<int64_t>(), int64_t(6));
      const auto got = step_losses(there);
      QCOMPARE(got.size(), size_t(6));  // steps 7..12: a fork trains after its fork step only
      QCOMPARE(got, step_losses(path("forked-here/" + arm)));
    }
    // The parent's own continuation equals the fork with its config, bit for bit.
    const auto whole = step_losses(path("fork-parent-s41"));
    QCOMPARE(step_losses(path("runs/forked/slurm-fork-s41")),
             std::vector<double>(whole.begin() + 6, whole.end()));
    // A parent that is not there (yet) is refused before anything is made.
    const nlohmann::json orphan = {{"name", "orphan"},
                                   {"fork", path("no-such-parent-s{seed}") + "@6"},
                                   {"arms", {"slurm-fork.json"}},
                                   {"seeds", {41}}};
    gllm::write_file_atomic(path("orphan.json"), orphan.dump(2));
    auto refused = cli({"submit", "--sweep", path("orphan.json"), "--cluster", "local"});
    QVERIFY(refused.exit_code != 0);
    QVERIFY2(refused.err.find("Train (or wait for) the parent run first") != std::string::npos,
             refused.err.c_str());
    QVERIFY(!gllm::file_exists(path("runs/orphan")));
  }

  void cancelOne() {
    write_preset("slurm-long", 100000, 0);
    const std::string dir = path("runs/long");
    auto sub = cli({"submit", path("slurm-long.json"), "--cluster", "local", "--out", dir});
    QVERIFY2(sub.exit_code == 0, (sub.out + sub.err).c_str());
    wait_state(
        dir,
        [&](const nlohmann::json& r) { return state_of(r) == "running" && last_step(dir) >= 2; },
        90);
    auto c = cli({"cancel", dir});
    QVERIFY2(c.exit_code == 0, (c.out + c.err).c_str());
    QCOMPARE(wait_state(dir, [](const nlohmann::json& r) { return final_state(state_of(r)); }),
             std::string("cancelled"));
  }

  // A task requeued mid-run (scontrol requeue) and one warned by SLURM's signal (USR1: the trainer
  // checkpoints, exits 75 and the script requeues it) both resume exactly: the same per-step
  // losses as the run trained in one go here.
  void requeueResumesExactly() {
    write_preset("slurm-requeue", 40, 5);
    auto ref = cli({"train", path("slurm-requeue.json"), "--out", path("requeue-ref"), "--quiet"});
    QVERIFY2(ref.exit_code == 0, (ref.out + ref.err).c_str());
    const auto want = step_losses(path("requeue-ref"));
    for (const std::string how : {"requeue", "signal"}) {
      const std::string dir = path("runs/requeue-" + how);
      auto sub =
          cli({"submit", path("slurm-requeue.json"), "--cluster", "local", "--out", dir, "--json"});
      QVERIFY2(sub.exit_code == 0, (sub.out + sub.err).c_str());
      const std::string task = nlohmann::json::parse(sub.out)["job_id"].get<std::string>() + "_0";
      wait_state(dir, [&](const nlohmann::json& r) {
        return state_of(r) == "running" && last_step(dir) >= 7;
      });
      gllm::test::CommandResult r;
      if (how == "requeue")
        r = cli({"requeue", dir});
      else
        r = gllm::test::run_program("scancel", {"--signal=USR1", task}, env_);
      QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
      std::set<std::string> seen;
      int restarts = 0;
      wait_state(dir, [&](const nlohmann::json& run) {
        seen.insert(state_of(run));
        restarts = std::max(restarts, run["scheduler"]["restarts"].get<int>());
        return final_state(state_of(run));
      });
      QVERIFY2(seen.count("completed"), how.c_str());
      QVERIFY2(restarts >= 1, ("the task ran again after " + how).c_str());
      QCOMPARE(step_losses(dir), want);
    }
  }

  // One task of two ranks (srun --ntasks 2, data parallel, micro-steps split): its losses equal
  // the one-process run's to 1e-5; requeued mid-run, both ranks resume from the checkpoint and the
  // losses still equal. A run whose batch does not split over two ranks is refused before sbatch.
  void twoRankTaskEqualsOneProcess() {
    auto set = cli({"cluster", "set", "pair", "--partition", "debug", "--time-limit", "00:20:00",
                    "--tasks-per-node", "2", "--cpus-per-task", "1", "--mem-per-task", "1G"});
    QVERIFY2(set.exit_code == 0, (set.out + set.err).c_str());
    write_preset("slurm-pair", 30, 5);  // 4 rows × 2 micro-steps: one micro-step per rank
    auto ref = cli({"train", path("slurm-pair.json"), "--out", path("pair-ref"), "--quiet"});
    QVERIFY2(ref.exit_code == 0, (ref.out + ref.err).c_str());
    const auto want = step_losses(path("pair-ref"));
    QCOMPARE(want.size(), size_t(30));
    auto close = [&](const std::vector<double>& got) {
      if (got.size() != want.size()) return false;
      for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-5 * std::max(1.0, std::abs(want[i]))) return false;
      return true;
    };
    for (const bool requeue : {false, true}) {
      const std::string dir = path(requeue ? "runs/pair-requeued" : "runs/pair");
      auto sub = cli({"submit", path("slurm-pair.json"), "--cluster", "pair", "--out", dir});
      QVERIFY2(sub.exit_code == 0, (sub.out + sub.err).c_str());
      if (requeue) {
        wait_state(dir, [&](const nlohmann::json& r) {
          return state_of(r) == "running" && last_step(dir) >= 7;
        });
        auto r = cli({"requeue", dir});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
      }
      int restarts = 0;
      const std::string end = wait_state(dir, [&](const nlohmann::json& run) {
        restarts = std::max(restarts, run["scheduler"]["restarts"].get<int>());
        return final_state(state_of(run));
      });
      QCOMPARE(end, std::string("completed"));
      if (requeue) QVERIFY2(restarts >= 1, "the two-rank task ran again after the requeue");
      const std::string log = gllm::read_file(gllm::read_scheduler_record(dir).log);
      QVERIFY2(log.find("data parallel: rank 0 of 2") != std::string::npos, log.c_str());
      const auto got = step_losses(dir);
      double worst = 0;
      for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
        worst = std::max(worst, std::abs(got[i] - want[i]));
      qInfo("two ranks%s: %zu step losses, max |Δ| against one process %.3g",
            requeue ? ", requeued" : "", got.size(), worst);
      QVERIFY2(close(got), ("two ranks" + std::string(requeue ? ", requeued," : "") +
                            " part from one process by more than 1e-5")
                               .c_str());
    }
    // 3 rows in one micro-step cannot be split over two ranks: refused, nothing made.
    gllm::RunConfig odd = gllm::test::tiny_text_run(4, 3, 1);
    odd.name = "slurm-odd";
    gllm::write_file_atomic(path("slurm-odd.json"), odd.to_json().dump(2));
    auto refused =
        cli({"submit", path("slurm-odd.json"), "--cluster", "pair", "--out", path("runs/odd")});
    QVERIFY(refused.exit_code != 0);
    QVERIFY2(refused.err.find("cannot run on the 2 ranks") != std::string::npos,
             refused.err.c_str());
    QVERIFY(!gllm::file_exists(path("runs/odd/config.json")));
  }

  void badInputAndFaults() {
    // sbatch refuses: its words are passed on and no folder is left as if queued.
    auto bad = cli({"cluster", "set", "nowhere", "--partition", "nope"});
    QVERIFY2(bad.exit_code == 0, bad.err.c_str());
    auto refused = cli(
        {"submit", path("slurm-tiny.json"), "--cluster", "nowhere", "--out", path("runs/refused")});
    QVERIFY(refused.exit_code != 0);
    QVERIFY2(refused.err.find("Invalid partition") != std::string::npos, refused.err.c_str());
    QVERIFY(!gllm::file_exists(path("runs/refused/config.json")));
    // No sbatch on PATH: the package is named.
    auto nopath =
        cli({"submit", path("slurm-tiny.json"), "--cluster", "local", "--out", path("runs/nopath")},
            {"PATH=/nonexistent"});
    QVERIFY(nopath.exit_code != 0);
    QVERIFY2(nopath.err.find("slurm-client") != std::string::npos, nopath.err.c_str());
    // A job the scheduler never heard of, with no summary: lost by the scheduler.
    const std::string lost = path("runs/lostrun");
    std::filesystem::create_directories(lost + "/checkpoints");
    std::filesystem::copy_file(path("runs/three/slurm-tiny-s41/config.json"),
                               lost + "/config.json");
    gllm::write_file_atomic(lost + "/scheduler.json",
                            R"({"scheduler":"slurm","submission":"submitted","job_id":"999999",)"
                            R"("array_task":0,"log":""})");
    auto all = runs(lost);
    QCOMPARE(state_of(all[lost]), std::string("lost"));
    QVERIFY(all[lost]["scheduler"]["detail"].get<std::string>().find("lost by the scheduler") !=
            std::string::npos);
    // A controller that does not answer: unknown, with the reason, and nothing changed.
    std::ifstream in(std::getenv("SLURM_CONF"));
    std::string conf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    conf = std::regex_replace(conf, std::regex("SlurmctldPort=[0-9]+"), "SlurmctldPort=9");
    gllm::write_file_atomic(path("dead.conf"), conf);
    auto dead = runs(path("runs/three"), {"SLURM_CONF=" + path("dead.conf")});
    for (const auto& [d, run] : dead) {
      QCOMPARE(state_of(run), std::string("unknown"));
      QVERIFY(!run["scheduler"]["detail"].get<std::string>().empty());
      QCOMPARE(run["status"].get<std::string>(), std::string("completed"));  // its own: kept
    }
  }
};

QTEST_GUILESS_MAIN(TestCliSlurm)
#include "test_cli_slurm.moc"
