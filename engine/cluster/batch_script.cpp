// Batch script generation: #SBATCH lines from the cluster profile, the run folders as a bash
// array indexed by SLURM_ARRAY_TASK_ID, start/end records, and the requeue on the warning signal.
#include "engine/cluster/batch_script.h"

#include <sstream>

#include "engine/io/paths.h"

namespace gllm {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string task_log_path(const std::string& log_dir, const std::string& job_id, int task) {
  return join_path(log_dir, job_id + "_" + std::to_string(task) + ".log");
}

std::string batch_script(const BatchScriptRequest& r) {
  const ClusterProfile& p = r.profile;
  const int n = static_cast<int>(r.run_dirs.size());
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "# GLLM Workbench: " << folder_name(r.name) << ", " << n << (n == 1 ? " run" : " runs")
    << " as one SLURM job array (task i trains the i-th folder below";
  if (r.throttle > 0) s << ", at most " << r.throttle << " at a time";
  s << ").\n";
  s << "# Written by `gllm submit` at " << r.written_at << " from cluster profile '" << p.name
    << "'. Rerun it with: sbatch THIS_FILE\n";
  s << "# Each task resumes its folder from its last checkpoint (step 0 when it has none); a\n"
       "# completed run ends at once. On the warning signal the trainer checkpoints, exits "
    << kExitRequeue << ",\n# and the task is requeued.\n";
  auto opt = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) s << "#SBATCH --" << key << "=" << value << "\n";
  };
  opt("job-name", "gllm-" + folder_name(r.name));
  opt("array", "0-" + std::to_string(n - 1) +
                   (r.throttle > 0 ? "%" + std::to_string(r.throttle) : std::string()));
  opt("output", join_path(r.log_dir, "%A_%a.log"));
  opt("open-mode", "append");  // a requeued task adds to its log
  opt("partition", p.partition);
  opt("account", p.account);
  opt("qos", p.qos);
  opt("time", p.time_limit);
  opt("nodes", std::to_string(p.nodes));
  opt("ntasks-per-node", std::to_string(p.tasks_per_node));
  if (p.gpus_per_node > 0) opt("gpus-per-node", std::to_string(p.gpus_per_node));
  if (p.cpus_per_task > 0) opt("cpus-per-task", std::to_string(p.cpus_per_task));
  opt("mem", p.mem_per_node());
  opt("constraint", p.constraint);
  opt("signal", p.signal);
  s << (p.requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n");
  for (const auto& e : p.extra_sbatch) s << "#SBATCH " << e << "\n";
  s << "\nset -uo pipefail\n";
  s << "runs=(\n";
  for (const auto& d : r.run_dirs) s << "  " << shell_quote(d) << "\n";
  s << ")\n";
  s << "gllm=" << shell_quote(r.gllm) << "\n";
  s << "run_dir=\"${runs[${SLURM_ARRAY_TASK_ID:?this script runs as a SLURM job array: submit it "
       "with sbatch}]}\"\n";
  s << "if [ ! -f \"$run_dir/config.json\" ]; then\n"
       "  echo \"gllm task: $run_dir holds no config.json; submit the sweep again with gllm "
       "submit\" >&2\n"
       "  exit 2\n"
       "fi\n";
  s << "# The task's own record beside the run (its id, node and restart count), for the "
       "workbench.\n";
  s << "record() {\n"
       "  printf '{\"event\":\"%s\",\"job_id\":\"%s\",\"array_job_id\":\"%s\",\"array_task\":%s,"
       "\"node\":\"%s\",\"restarts\":%s,\"time\":\"%s\"%s}\\n' \\\n"
       "    \"$1\" \"$SLURM_JOB_ID\" \"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}\" "
       "\"${SLURM_ARRAY_TASK_ID:-0}\" \\\n"
       "    \"${SLURMD_NODENAME:-$(hostname)}\" \"${SLURM_RESTART_COUNT:-0}\" \"$(date -u "
       "+%Y-%m-%dT%H:%M:%SZ)\" \"${2:-}\" \\\n"
       "    >> \"$run_dir/scheduler-events.jsonl\"\n"
       "}\n";
  s << "record start\n";
  for (const auto& line : p.setup) s << line << "\n";
  if (p.ranks() > 1)
    s << "# Data parallel over " << p.ranks()
      << " ranks: they meet on the first node, at a port of this job's own (tasks of the array "
         "may share a node)\n"
      << "export MASTER_PORT=\"${MASTER_PORT:-$((10000 + SLURM_JOB_ID % 20000))}\"\n";
  s << "srun --kill-on-bad-exit=1 --ntasks=" << p.ranks() << " \"$gllm\" resume \"$run_dir\" "
    << "--if-unfinished\n";
  s << "rc=$?\n";
  s << "record end \",\\\"exit_code\\\":$rc\"\n";
  s << "if [ \"$rc\" -eq " << kExitRequeue << " ]; then\n"
    << "  # checkpointed on the warning signal: back into the queue, to resume from it\n"
    << "  scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n"
    << "fi\n";
  s << "exit \"$rc\"\n";
  return s.str();
}

}  // namespace gllm
