// What a run folder knows about its cluster job: scheduler.json (written by `gllm submit`: job id,
// array index, script, log) and scheduler-events.jsonl (appended by the task itself on each
// start/end).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

// run_dir/scheduler.json. `submission`: "submitting" (sbatch is being called), "submitted", or
// "never_submitted" (sbatch refused; `message` holds its words).
struct SchedulerRecord {
  std::string scheduler = "slurm";
  std::string submission;
  std::string job_id;  // the array job's id (sbatch --parsable)
  int array_task = 0;
  std::string profile;
  std::string script;  // the batch script
  std::string log;     // the task's SLURM output (stdout and stderr of the trainer)
  std::string sweep;   // sweep (or single run) name
  std::string submitted_at;
  std::string message;
  std::string cancelled_at;  // set by `gllm cancel` (a cancelled pending task leaves no trace)
  // "JOB_TASK", the id scancel, scontrol and squeue take for this run.
  std::string task_id() const { return job_id + "_" + std::to_string(array_task); }
};

std::string scheduler_record_path(const std::string& run_dir);
// Whether run_dir holds scheduler.json (a run sent to a cluster).
bool has_scheduler_record(const std::string& run_dir);
// Throws gllm::Error naming the file when it does not read.
SchedulerRecord read_scheduler_record(const std::string& run_dir);
void write_scheduler_record(const std::string& run_dir, const SchedulerRecord& r);  // atomic
nlohmann::json to_json(const SchedulerRecord& r);

// One line of scheduler-events.jsonl: the batch script appends "start" when a task begins (its
// own job id, node, restart count) and "end" with the trainer's exit code.
struct TaskEvent {
  std::string event;  // start | end
  std::string job_id;
  std::string node;
  int restarts = 0;
  int exit_code = 0;  // end only
  std::string time;
};
std::string task_events_path(const std::string& run_dir);
// The events in order; lines that do not parse (a torn write) are skipped.
std::vector<TaskEvent> read_task_events(const std::string& run_dir);

// The last `max_lines` lines of a log file ("" when it cannot be read), at most 64 KiB read.
std::string log_tail(const std::string& path, int max_lines = 12);

}  // namespace gllm
