// The SLURM commands the workbench calls (sbatch, squeue, sacct, scancel, scontrol), each without
// a shell and with a timeout, and the parsers of their output. One squeue call serves every run.
#pragma once
#include <string>
#include <vector>

namespace gllm {

// One job or array task as the scheduler reports it.
struct SlurmJob {
  std::string array_job_id;  // the array's id ("" for a job that is not an array)
  int array_task = -1;
  std::string job_id;  // the task's own id (SLURM_JOB_ID inside it)
  std::string state;   // SLURM's word: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, …
  std::string reason;  // why pending ("Priority", "JobArrayTaskLimit", …); "None" otherwise
  std::string node;
  int restarts = 0;
  std::string exit_code;  // "3:0" (sacct); empty where the source has none
};

struct SlurmPoll {
  bool ok = false;     // false: the scheduler could not be asked; `error` says why
  std::string error;   // e.g. "Unable to contact slurm controller (connect failure)"
  std::string source;  // squeue | sacct | sacct -c (job completion log)
  std::vector<SlurmJob> jobs;
};

// Seconds a scheduler command may take before it is given up (the GUI and `gllm runs` move on).
constexpr double kSlurmTimeoutS = 20;

// Throws gllm::Error when `program` (sbatch, squeue, …) is not on PATH, naming the package.
void require_slurm_program(const std::string& program);

// sbatch --parsable SCRIPT in `workdir`: the job id. A refusal throws gllm::Error holding
// sbatch's own message.
std::string sbatch_submit(const std::string& script, const std::string& workdir);

// squeue for these array (or plain) job ids, every state, one line per array task.
SlurmPoll squeue_jobs(const std::vector<std::string>& job_ids, double timeout_s = kSlurmTimeoutS);
std::vector<SlurmJob> parse_squeue(const std::string& text);

// Jobs that left squeue: sacct (accounting) or, where accounting is off, sacct -c (the job
// completion log). `job_ids` may hold array ids and the tasks' own ids.
SlurmPoll sacct_jobs(const std::vector<std::string>& job_ids, double timeout_s = kSlurmTimeoutS);
std::vector<SlurmJob> parse_sacct(const std::string& text);

// scancel / scontrol requeue on "JOB" or "JOB_TASK" ids; throws gllm::Error with the
// command's message when it fails.
void scancel_jobs(const std::vector<std::string>& ids);
void requeue_jobs(const std::vector<std::string>& ids);

// The first line of a SLURM command's output that says what went wrong ("" when none does).
std::string slurm_error_line(const std::string& output);

}  // namespace gllm
