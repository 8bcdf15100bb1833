// The SLURM text the workbench reads and writes, without a cluster: squeue and sacct lines parsed,
// states mapped, profiles checked (bad spellings named), and the batch script's lines.
#include <QtTest>

#include "engine/cluster/batch_script.h"
#include "engine/cluster/cluster_profile.h"
#include "engine/cluster/cluster_state.h"
#include "engine/cluster/slurm_client.h"
#include "tests/support/test_support.h"

class TestClusterSlurmText : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void squeueLines() {
    const auto jobs = gllm::parse_squeue(
        "5|2|5|PENDING|JobArrayTaskLimit||0\n"
        "5|0|6|RUNNING|None|vm|1\n"
        "slurm_load_jobs error: nothing\n"
        "4|N/A|4|COMPLETED|None|vm|0\n");
    QCOMPARE(jobs.size(), size_t(3));
    QCOMPARE(jobs[0].array_job_id, std::string("5"));
    QCOMPARE(jobs[0].array_task, 2);
    QCOMPARE(jobs[0].reason, std::string("JobArrayTaskLimit"));
    QCOMPARE(jobs[1].job_id, std::string("6"));
    QCOMPARE(jobs[1].restarts, 1);
    QCOMPARE(jobs[2].array_job_id, std::string(""));  // not an array
    QCOMPARE(gllm::state_from_slurm(jobs[1].state, 1), std::string("running"));
    QCOMPARE(gllm::state_from_slurm("PENDING", 1), std::string("requeued"));
    QCOMPARE(gllm::state_from_slurm("OUT_OF_MEMORY", 0), std::string("failed"));
    QCOMPARE(gllm::state_from_slurm("DEADLINE", 0), std::string("timeout"));
  }

  void sacctLines() {
    const auto jobs = gllm::parse_sacct(
        "sacct: error: Unknown type ArrayJobId: 5\n"
        "7|COMPLETED|0:0|vm\n"
        "8_1|CANCELLED by 0|0:15|vm\n"
        "8_1.batch|CANCELLED|0:15|vm\n");
    QCOMPARE(jobs.size(), size_t(2));
    QCOMPARE(jobs[0].job_id, std::string("7"));
    QCOMPARE(jobs[1].array_job_id, std::string("8"));
    QCOMPARE(jobs[1].array_task, 1);
    QCOMPARE(jobs[1].state, std::string("CANCELLED"));
    QCOMPARE(jobs[1].exit_code, std::string("0:15"));
    QCOMPARE(gllm::slurm_error_line("sacct: error: Unknown type ArrayJobId: 5\nsbatch: error: "
                                    "Batch job submission failed: Invalid partition name "
                                    "specified\n"),
             std::string("sbatch: error: Batch job submission failed: Invalid partition name "
                         "specified"));
  }

  void profilesNameTheirProblem() {
    auto bad = [](const nlohmann::json& j) {
      return gllm::test::error_of([&] { gllm::ClusterProfile::from_json(j, "p"); });
    };
    QVERIFY(bad({{"time_limit", "2 hours"}}).find("time_limit") != std::string::npos);
    QVERIFY(bad({{"signal", "B:USR1@60"}}).find("B:") != std::string::npos);
    QVERIFY(bad({{"mem_per_task", "lots"}}).find("memory size") != std::string::npos);
    QVERIFY(bad({{"partiton", "gpu"}}).find("unknown key") != std::string::npos);
    QVERIFY(bad({{"extra_sbatch", {"#SBATCH --exclusive"}}}).find("--key=value") !=
            std::string::npos);
    QVERIFY(bad({{"setup", {"module load a\nrm -rf x"}}}).find("line break") != std::string::npos);
    QVERIFY(!gllm::test::error_of([] { gllm::check_profile_name("../etc"); }).empty());
    const auto p = gllm::ClusterProfile::from_json(
        {{"time_limit", "1-02:00:00"}, {"mem_per_task", "2G"}, {"tasks_per_node", 2}}, "p");
    QCOMPARE(p.mem_per_node(), std::string("4096M"));
  }

  void scriptHoldsTheProfile() {
    gllm::BatchScriptRequest r;
    r.name = "../sweep name";  // a name, never a path
    r.run_dirs = {"/runs/a-s41", "/runs/it's-s42"};
    r.log_dir = "/runs/logs";
    r.profile = gllm::ClusterProfile::from_json({{"partition", "gpu"},
                                                 {"account", "lab"},
                                                 {"gpus_per_node", 1},
                                                 {"extra_sbatch", {"--exclusive"}},
                                                 {"setup", {"module load cuda"}}},
                                                "gpu");
    r.throttle = 3;
    r.gllm = "/opt/gllm";
    const std::string s = gllm::batch_script(r);
    for (const char* want :
         {"#SBATCH --array=0-1%3\n", "#SBATCH --partition=gpu\n", "#SBATCH --account=lab\n",
          "#SBATCH --gpus-per-node=1\n", "#SBATCH --signal=USR1@120\n", "#SBATCH --requeue\n",
          "#SBATCH --exclusive\n", "#SBATCH --output=/runs/logs/%A_%a.log\n", "module load cuda\n",
          "'/runs/it'\\''s-s42'", "resume \"$run_dir\"", "-eq 75 ]"})
      QVERIFY2(s.find(want) != std::string::npos, want);
    QVERIFY(s.find("job-name=gllm-.._sweep_name") == std::string::npos);
    QVERIFY(s.find("#SBATCH --job-name=gllm-_._sweep_name\n") != std::string::npos);
    QVERIFY(s.find("MASTER_PORT") == std::string::npos);  // one rank: no rendezvous
    // Two ranks per task: srun starts both, and they meet at a port of the job's own.
    r.profile =
        gllm::ClusterProfile::from_json({{"partition", "gpu"}, {"tasks_per_node", 2}}, "dp");
    const std::string two = gllm::batch_script(r);
    QVERIFY(two.find("#SBATCH --ntasks-per-node=2\n") != std::string::npos);
    QVERIFY(two.find("srun --kill-on-bad-exit=1 --ntasks=2 ") != std::string::npos);
    QVERIFY(two.find("export MASTER_PORT=\"${MASTER_PORT:-$((10000 + SLURM_JOB_ID % 20000))}\"") !=
            std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestClusterSlurmText)
#include "test_cluster_slurm_text.moc"
