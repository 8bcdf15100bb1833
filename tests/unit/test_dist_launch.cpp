// How a rank learns its place: gllm --nproc, torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT) and SLURM srun variables; SLURM node lists; batch plans of the global batch over N
// processes (whole micro-steps or split rows, counted against a brute-force tally); and
// train.total_batch_tokens deriving grad_accum.
#include <QtTest>
#include <cstdlib>
#include <map>
#include <numeric>

#include "engine/config/run_config.h"
#include "engine/dist/batch_plan.h"
#include "engine/dist/launcher.h"
#include "engine/io/error.h"
#include "tests/support/test_configs.h"

namespace {

const char* const kLaunchVars[] = {"GLLM_DIST_WORLD_SIZE",
                                   "GLLM_DIST_RANK",
                                   "GLLM_DIST_LOCAL_RANK",
                                   "GLLM_DIST_STORE_FILE",
                                   "GLLM_DIST_MASTER_ADDR",
                                   "GLLM_DIST_MASTER_PORT",
                                   "WORLD_SIZE",
                                   "RANK",
                                   "LOCAL_RANK",
                                   "MASTER_ADDR",
                                   "MASTER_PORT",
                                   "TORCHELASTIC_USE_AGENT_STORE",
                                   "TORCHELASTIC_RESTART_COUNT",
                                   "SLURM_STEP_ID",
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "SLURM_LOCALID",
                                   "SLURM_STEP_NODELIST",
                                   "SLURM_NODELIST",
                                   "SLURM_LAUNCH_NODE_IPADDR"};

// Sets exactly `vars` among the launch variables for the scope's lifetime.
struct LaunchVars {
  explicit LaunchVars(const std::map<std::string, std::string>& vars) {
    for (const char* v : kLaunchVars) ::unsetenv(v);
    for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~LaunchVars() {
    for (const char* v : kLaunchVars) ::unsetenv(v);
  }
};

bool throws_with(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
  } catch (const gllm::Error& e) {
    return std::string(e.what()).find(needle) != std::string::npos;
  }
  return false;
}

}  // namespace

class TestDistLaunch : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void alone() {
    LaunchVars v({});
    auto e = gllm::dist::launch_env();
    QCOMPARE(e.source, std::string("none"));
    QCOMPARE(e.world_size, 1);
    QVERIFY(!gllm::dist::launched_child());
    // A batch script sees SLURM_NTASKS and SLURM_PROCID but no step: it is one process.
    LaunchVars batch({{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NODELIST", "n[1-4]"}});
    QCOMPARE(gllm::dist::launch_env().world_size, 1);
  }

  void torchrun() {
    LaunchVars v({{"WORLD_SIZE", "8"},
                  {"RANK", "5"},
                  {"LOCAL_RANK", "1"},
                  {"MASTER_ADDR", "node07"},
                  {"MASTER_PORT", "29411"}});
    auto e = gllm::dist::launch_env();
    QCOMPARE(e.source, std::string("torchrun"));
    QCOMPARE(e.world_size, 8);
    QCOMPARE(e.rank, 5);
    QCOMPARE(e.local_rank, 1);
    QCOMPARE(e.master_addr, std::string("node07"));
    QCOMPARE(e.master_port, 29411);
    QVERIFY(!e.agent_store);
    QVERIFY(e.store_file.empty());
    QVERIFY(gllm::dist::launched_child());
  }

  void torchrun_agent_store() {
    LaunchVars v({{"WORLD_SIZE", "2"},
                  {"RANK", "0"},
                  {"LOCAL_RANK", "0"},
                  {"MASTER_ADDR", "127.0.0.1"},
                  {"MASTER_PORT", "29500"},
                  {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                  {"TORCHELASTIC_RESTART_COUNT", "3"}});
    auto e = gllm::dist::launch_env();
    QVERIFY(e.agent_store);
    QCOMPARE(e.store_prefix, std::string("/worker/attempt_3"));
    QVERIFY(!gllm::dist::launched_child());  // rank 0
  }

  void torchrun_errors() {
    {
      LaunchVars v({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "29500"}});
      QVERIFY(throws_with([] { gllm::dist::launch_env(); }, "MASTER_ADDR"));
    }
    {
      LaunchVars v(
          {{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
      QVERIFY(throws_with([] { gllm::dist::launch_env(); }, "RANK=\"2\""));
    }
    {
      LaunchVars v(
          {{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}});
      QVERIFY(throws_with([] { gllm::dist::launch_env(); }, "MASTER_PORT"));
    }
    {
      LaunchVars v(std::map<std::string, std::string>{{"WORLD_SIZE", "two"}});
      QVERIFY(throws_with([] { gllm::dist::launch_env(); }, "WORLD_SIZE"));
    }
    {
      LaunchVars v({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
      QVERIFY(throws_with([] { gllm::dist::launch_env(); }, "RANK is not set"));
    }
  }

  void slurm() {
    LaunchVars v({{"SLURM_STEP_ID", "0"},
                  {"SLURM_PROCID", "3"},
                  {"SLURM_NTASKS", "4"},
                  {"SLURM_LOCALID", "1"},
                  {"SLURM_NODELIST", "gpu[003-004]"},
                  {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.9"}});
    auto e = gllm::dist::launch_env();
    QCOMPARE(e.source, std::string("slurm"));
    QCOMPARE(e.world_size, 4);
    QCOMPARE(e.rank, 3);
    QCOMPARE(e.local_rank, 1);
    QCOMPARE(e.master_addr, std::string("gpu003"));  // where SLURM_PROCID 0 runs
    QCOMPARE(e.master_port, 29500);
    // MASTER_ADDR and MASTER_PORT win; without a node list, the launching node's address.
    ::setenv("MASTER_PORT", "12345", 1);
    QCOMPARE(gllm::dist::launch_env().master_port, 12345);
    ::unsetenv("SLURM_NODELIST");
    QCOMPARE(gllm::dist::launch_env().master_addr, std::string("10.0.0.9"));
    ::setenv("MASTER_ADDR", "head", 1);
    QCOMPARE(gllm::dist::launch_env().master_addr, std::string("head"));
  }

  void gllm_launcher_wins() {
    LaunchVars v({{"GLLM_DIST_WORLD_SIZE", "2"},
                  {"GLLM_DIST_RANK", "1"},
                  {"GLLM_DIST_STORE_FILE", "/tmp/s"},
                  {"WORLD_SIZE", "8"},
                  {"RANK", "7"}});
    auto e = gllm::dist::launch_env();
    QCOMPARE(e.source, std::string("gllm"));
    QCOMPARE(e.world_size, 2);
    QCOMPARE(e.rank, 1);
    QCOMPARE(e.store_file, std::string("/tmp/s"));
  }

  void slurm_node_lists() {
    using gllm::dist::first_slurm_host;
    QCOMPARE(first_slurm_host("gpu[003-005,010],cpu01"), std::string("gpu003"));
    QCOMPARE(first_slurm_host("node7"), std::string("node7"));
    QCOMPARE(first_slurm_host("a,b,c"), std::string("a"));
    QCOMPARE(first_slurm_host("rack[2,4]-n[09-12]"), std::string("rack2-n09"));
    QVERIFY(throws_with([] { first_slurm_host("gpu[003-"); }, "unclosed"));
  }

  // Every (micro-step, row) of the global batch is computed by exactly one rank, each rank has the
  // same number of rows, and the loss weights (1/local_micro_steps per rank, mean over ranks) give
  // every row the same weight 1/(grad_accum · device_batch); checked by brute force.
  void plans_cover_the_batch_once() {
    int plans = 0, row_splits = 0;
    for (int batch = 1; batch <= 12; ++batch)
      for (int accum = 1; accum <= 6; ++accum)
        for (int world = 1; world <= 8; ++world) {
          std::vector<gllm::dist::BatchPlan> ps;
          try {
            for (int r = 0; r < world; ++r)
              ps.push_back(gllm::dist::plan_batch(batch, accum, world, r));
          } catch (const gllm::Error& e) {
            // No split: the ranks sharing a micro-batch do not divide its rows.
            const int share = world / std::gcd(accum, world);
            QVERIFY2(batch % share != 0, e.what());
            QVERIFY(std::string(e.what()).find("processes") != std::string::npos);
            continue;
          }
          ++plans;
          std::vector<double> weight(static_cast<size_t>(batch * accum), 0.0);
          std::vector<int> rows_of(world, 0);
          for (const auto& p : ps) {
            row_splits += p.split_rows && p.rank == 0;
            int owned = 0;
            for (int m = 0; m < accum; ++m) {
              if (!p.owns(m)) continue;
              ++owned;
              for (int64_t row = p.row_begin; row < p.row_end; ++row) {
                // Mean over the rank's rows of the micro-batch, scaled by 1/local_micro_steps,
                // averaged over ranks.
                weight[static_cast<size_t>(m * batch + row)] +=
                    1.0 / static_cast<double>(p.row_end - p.row_begin) / p.local_micro_steps /
                    world;
                rows_of[p.rank] += 1;
              }
            }
            QCOMPARE(owned, p.local_micro_steps);
            QVERIFY(p.split_rows == (p.row_end - p.row_begin < batch));
          }
          for (int r = 0; r < world; ++r) QCOMPARE(rows_of[r], rows_of[0]);
          for (double w : weight)
            QVERIFY2(std::abs(w - 1.0 / (batch * accum)) < 1e-12,
                     qPrintable(QString("batch %1 accum %2 world %3: weight %4")
                                    .arg(batch)
                                    .arg(accum)
                                    .arg(world)
                                    .arg(w)));
        }
    QCOMPARE(plans, 272);  // of 12 × 6 × 8: batch % (N / gcd(accum, N)) == 0
    QCOMPARE(row_splits, 104);
    // The default preset's batch (8 rows, one micro-step) over 2 processes: 4 rows each.
    auto p1 = gllm::dist::plan_batch(8, 1, 2, 1);
    QVERIFY(p1.split_rows);
    QCOMPARE(p1.row_begin, int64_t(4));
    QCOMPARE(p1.row_end, int64_t(8));
    // 2 micro-steps over 2 processes: whole micro-steps, no row split (bit-exact with one process).
    auto p2 = gllm::dist::plan_batch(4, 2, 2, 1);
    QVERIFY(!p2.split_rows && p2.owns(1) && !p2.owns(0));
    QVERIFY(throws_with([] { gllm::dist::plan_batch(8, 1, 3, 0); }, "Use 1, 2, 4, 8"));
    QVERIFY(throws_with([] { gllm::dist::plan_batch(8, 1, 2, 2); }, "outside"));
  }

  void total_batch_tokens_derives_grad_accum() {
    gllm::RunConfig c = gllm::test::tiny_text_run(4, 4, 1);  // sequence_len 32
    auto j = c.to_json();
    j["train"]["total_batch_tokens"] = 4 * 32 * 6;
    auto d = gllm::RunConfig::from_json(j);
    QCOMPARE(d.train.grad_accum, 6);
    QCOMPARE(d.train.total_batch_tokens, int64_t(768));
    // The resolved config reads back to itself.
    QCOMPARE(gllm::RunConfig::from_json(d.to_json()).to_json(), d.to_json());
    // The global batch stays when the rows per micro-step change.
    j["train"]["device_batch"] = 2;
    QCOMPARE(gllm::RunConfig::from_json(j).train.grad_accum, 12);
    // A total that is no whole number of micro-steps is an error naming the key and the fix.
    j["train"]["total_batch_tokens"] = 4 * 32 * 6 + 32;
    j["train"]["device_batch"] = 4;
    QVERIFY(throws_with([&] { gllm::RunConfig::from_json(j); }, "train.total_batch_tokens"));
    QVERIFY(throws_with([&] { gllm::RunConfig::from_json(j); }, "768 or 896"));
    j["train"]["total_batch_tokens"] = 64;  // less than one micro-step
    QVERIFY(throws_with([&] { gllm::RunConfig::from_json(j); }, "use 128"));
    // 0 (the default) leaves grad_accum as given.
    j["train"]["total_batch_tokens"] = 0;
    j["train"]["grad_accum"] = 3;
    QCOMPARE(gllm::RunConfig::from_json(j).train.grad_accum, 3);
  }
};

QTEST_APPLESS_MAIN(TestDistLaunch)
#include "test_dist_launch.moc"
