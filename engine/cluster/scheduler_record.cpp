// scheduler.json (atomic, written by submit) and scheduler-events.jsonl (appended by the batch
// script) read and written; the tail of a task's log for a failed run.
#include "engine/cluster/scheduler_record.h"

#include <fstream>
#include <sstream>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

namespace gllm {

std::string scheduler_record_path(const std::string& run_dir) {
  return join_path(run_dir, "scheduler.json");
}

bool has_scheduler_record(const std::string& run_dir) {
  return file_exists(scheduler_record_path(run_dir));
}

nlohmann::json to_json(const SchedulerRecord& r) {
  return {{"scheduler", r.scheduler},
          {"submission", r.submission},
          {"job_id", r.job_id},
          {"array_task", r.array_task},
          {"profile", r.profile},
          {"script", r.script},
          {"log", r.log},
          {"sweep", r.sweep},
          {"submitted_at", r.submitted_at},
          {"message", r.message},
          {"cancelled_at", r.cancelled_at}};
}

SchedulerRecord read_scheduler_record(const std::string& run_dir) {
  const std::string path = scheduler_record_path(run_dir);
  const nlohmann::json j = read_json_file(
      path, "it is written by gllm submit; restore it, or remove it to treat the run as local",
      JsonLimits{1u << 20, 8});
  SchedulerRecord r;
  if (!j.is_object()) throw Error(path + ": expected a JSON object");
  r.scheduler = json_string_or(j, "scheduler", "slurm");
  r.submission = json_string_at(j, "submission", path);
  r.job_id = json_string_or(j, "job_id", "");
  r.array_task = static_cast<int>(json_int_or(j, "array_task", 0));
  r.profile = json_string_or(j, "profile", "");
  r.script = json_string_or(j, "script", "");
  r.log = json_string_or(j, "log", "");
  r.sweep = json_string_or(j, "sweep", "");
  r.submitted_at = json_string_or(j, "submitted_at", "");
  r.message = json_string_or(j, "message", "");
  r.cancelled_at = json_string_or(j, "cancelled_at", "");
  if (r.scheduler != "slurm")
    throw Error(path + ": scheduler '" + brief_text(r.scheduler, 40) +
                "' is not one this workbench knows (slurm)");
  if (r.submission == "submitted" && r.job_id.empty())
    throw Error(path + ": says submitted but has no job_id; restore the file");
  for (char ch : r.job_id)
    if (ch < '0' || ch > '9')
      throw Error(path + ": job_id '" + brief_text(r.job_id, 40) +
                  "' is not a SLURM job id (digits)");
  return r;
}

void write_scheduler_record(const std::string& run_dir, const SchedulerRecord& r) {
  write_file_atomic(scheduler_record_path(run_dir), to_json(r).dump(2) + "\n");
}

std::string task_events_path(const std::string& run_dir) {
  return join_path(run_dir, "scheduler-events.jsonl");
}

std::vector<TaskEvent> read_task_events(const std::string& run_dir) {
  std::vector<TaskEvent> out;
  std::ifstream in(task_events_path(run_dir));
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      continue;
    }
    if (!j.is_object()) continue;
    TaskEvent e;
    e.event = json_string_or(j, "event", "");
    e.job_id = json_string_or(j, "job_id", "");
    e.node = json_string_or(j, "node", "");
    e.restarts = static_cast<int>(json_int_or(j, "restarts", 0));
    e.exit_code = static_cast<int>(json_int_or(j, "exit_code", 0));
    e.time = json_string_or(j, "time", "");
    if (e.event == "start" || e.event == "end") out.push_back(e);
  }
  return out;
}

std::string log_tail(const std::string& path, int max_lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > 65536 ? size - 65536 : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Progress bars redraw with '\r': keep what a terminal would show.
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto cr = line.find_last_of('\r', line.size() >= 2 ? line.size() - 2 : 0);
    if (cr != std::string::npos && cr + 1 < line.size()) line = line.substr(cr + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // a partial first line
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  const size_t from = lines.size() > static_cast<size_t>(max_lines) ? lines.size() - max_lines : 0;
  for (size_t i = from; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return out;
}

}  // namespace gllm
