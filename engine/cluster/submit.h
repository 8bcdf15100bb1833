// `gllm submit` and the Runs panel's "Submit to cluster": planned runs become one sbatch job array.
// Run folders are made config-first before sbatch, the script lands in the sweep folder, ids in
// each run.
#pragma once
#include <string>
#include <vector>

#include "engine/cluster/cluster_profile.h"
#include "engine/train/sweep_plan.h"

namespace gllm {

struct SubmitRequest {
  std::string name;            // sweep or run name
  std::string sweep_dir;       // the script, logs/ and submissions.jsonl go here
  std::vector<SweepJob> jobs;  // one array task each (completed runs are left out)
  ClusterProfile profile;
  int throttle = -1;  // tasks at once; -1: the profile's max_parallel; 0: no limit
  std::string gllm;   // empty: the profile's, else this program's absolute path
  bool dry_run = false;
};

struct SubmitOutcome {
  std::string script_path;  // empty on a dry run
  std::string script;
  std::string job_id;                  // empty on a dry run
  std::vector<std::string> run_dirs;   // task i → run_dirs[i]
  std::vector<std::string> completed;  // folders already completed, not submitted
};

// One config trained once per seed (the CLI's `gllm submit PRESET`, the Cluster panel's Submit):
// one seed is one run folder new under `root` (its script and log inside it); several are a
// sweep folder new under `root` holding NAME-sSEED for each. `out` (optional) replaces the new
// folder. Throws gllm::Error for a seed out of range.
SubmitRequest plan_seed_submission(const RunConfig& config, const std::vector<int>& seeds,
                                   const ClusterProfile& profile, const std::string& root,
                                   const std::string& out = "");

// Submits (or with dry_run only writes out) the array. Throws gllm::Error: no sbatch (names the
// package), sbatch's refusal in its own words (folders it made are removed, earlier ones marked
// never submitted), a folder holding another run, a run already queued or running on the cluster
// (never submitted twice, across workbenches: the sweep folder is locked while submitting).
SubmitOutcome submit_to_slurm(const SubmitRequest& request);

// Cancels the cluster tasks of these run folders (scancel JOB_TASK) and records the cancel in
// their scheduler.json; folders without a submitted job are refused by name. Returns the ids.
std::vector<std::string> cancel_cluster_runs(const std::vector<std::string>& run_dirs);
// scontrol requeue for these run folders' tasks (a running task checkpoints and resumes).
std::vector<std::string> requeue_cluster_runs(const std::vector<std::string>& run_dirs);

// The run folders a path stands for: a run folder itself, or every run folder directly in a sweep
// folder.
std::vector<std::string> run_folders_of(const std::string& path);

// The gllm the batch script runs when the profile names none: this program when it is gllm,
// else the gllm beside it (the workbench's build folder). Throws gllm::Error naming the fix.
std::string gllm_program_path();

}  // namespace gllm
