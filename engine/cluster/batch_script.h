// The sbatch script for a sweep or a run: one array task per run folder, an %N throttle, the
// profile's #SBATCH lines, each task `srun gllm resume RUN_DIR` (folders are made config-first).
#pragma once
#include <string>
#include <vector>

#include "engine/cluster/cluster_profile.h"

namespace gllm {

struct BatchScriptRequest {
  std::string name;                   // sweep or run name (the job is "gllm-<name>")
  std::vector<std::string> run_dirs;  // absolute; task i trains run_dirs[i]
  std::string log_dir;                // absolute; task output goes to <log_dir>/<job>_<task>.log
  ClusterProfile profile;
  int throttle = 0;  // tasks at once; 0: no limit
  std::string gllm;  // absolute path of the gllm the nodes run
  std::string written_at;
};

// Exit code of `gllm resume` after it checkpointed on the scheduler's warning signal: the batch
// script requeues the task, which resumes from that checkpoint.
constexpr int kExitRequeue = 75;

// The script text (bash). Values are single-quoted; nothing in it depends on the submitting shell.
std::string batch_script(const BatchScriptRequest& r);

// The log file of one task once the array's job id is known.
std::string task_log_path(const std::string& log_dir, const std::string& job_id, int task);

// 'text' for bash: single quotes, with ' written as '\''.
std::string shell_quote(const std::string& text);

}  // namespace gllm
