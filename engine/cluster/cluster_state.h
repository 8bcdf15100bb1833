// The scheduler's view of cluster runs, next to each run's own: one squeue call for all of them,
// sacct for those that left the queue, the tasks' own start/end records for what neither knows.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

struct ClusterRunState {
  std::string run_dir;
  // submitting | never_submitted | pending | running | completed | failed | cancelled |
  // timeout | preempted | requeued | lost | unknown
  std::string state;
  std::string detail;  // one line for a table: the reason, the node, the exit code, the error
  std::string reason;  // SLURM's pending reason
  std::string node;
  std::string exit_code;
  int restarts = 0;
  std::string task_id;  // JOB_TASK
  std::string log;
  std::string log_tail;  // failed and lost runs: the end of the task's log
  std::string source;    // squeue | sacct | sacct -c (job completion log) | run folder | …
};
nlohmann::json to_json(const ClusterRunState& s);

// One run to look up: its folder (holding scheduler.json) and its own status (RunInfo::status).
struct ClusterRunQuery {
  std::string run_dir;
  std::string run_status;
};

// States of every run in `runs` that has scheduler.json, in their order, asking the scheduler
// once (squeue; then sacct once for those it no longer lists). A scheduler that cannot be asked
// gives "unknown" with its error as the detail; nothing is changed on disk.
std::vector<ClusterRunState> cluster_run_states(const std::vector<ClusterRunQuery>& runs);

// The workbench's word for one of SLURM's job states (PENDING → pending, …); `restarts` > 0 makes
// a pending task "requeued".
std::string state_from_slurm(const std::string& slurm_state, int restarts);

// Whether a state is final (the scheduler will do nothing more with the task).
bool cluster_state_final(const std::string& state);

}  // namespace gllm
