// sbatch, squeue, sacct, scancel and scontrol through run_process (no shell, bounded time), with
// parsers for squeue's and sacct's pipe-separated output and errors passed on in SLURM's words.
#include "engine/cluster/slurm_client.h"

#include <sstream>

#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/subprocess.h"

namespace gllm {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int to_int(const std::string& s, int fallback) {
  return all_digits(s) && s.size() < 9 ? std::stoi(s) : fallback;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

// "12_3" → ("12", 3); "12" → ("", -1) with job id 12.
void split_job_id(const std::string& id, SlurmJob& j) {
  const auto us = id.find('_');
  if (us == std::string::npos) {
    j.job_id = id;
    return;
  }
  j.array_job_id = id.substr(0, us);
  j.array_task = to_int(id.substr(us + 1), -1);
}

}  // namespace

void require_slurm_program(const std::string& program) {
  if (!program_available(program))
    throw Error(program +
                " is not on PATH: this machine cannot reach a SLURM cluster. Install the SLURM "
                "client (Debian and Ubuntu: apt-get install slurm-client; scripts/setup.sh "
                "installs it with a local one-node cluster, scripts/slurm-local.sh start), or "
                "run the command on the cluster's login node");
}

std::string slurm_error_line(const std::string& output) {
  std::stringstream ss(output);
  std::string line, fallback;
  while (std::getline(ss, line)) {
    line = trim(line);
    if (line.empty()) continue;
    // sacct -c warns about array fields the completion log has and it does not know.
    if (line.find("Unknown type ArrayJobId") != std::string::npos ||
        line.find("Unknown type ArrayTaskId") != std::string::npos)
      continue;
    if (line.find("error") != std::string::npos || line.find("fatal") != std::string::npos)
      return brief_text(line, 300);
    if (fallback.empty()) fallback = brief_text(line, 300);
  }
  return fallback;
}

std::string sbatch_submit(const std::string& script, const std::string& workdir) {
  require_slurm_program("sbatch");
  const ProcessResult r = run_process({"sbatch", "--parsable", script}, workdir, 120);
  if (r.timed_out)
    throw Error(
        "sbatch did not answer within 120 s (is the SLURM controller up? sinfo tells); "
        "nothing was submitted");
  // --parsable prints "JOBID" or "JOBID;CLUSTER" on success.
  std::string id;
  std::stringstream ss(r.output);
  std::string line;
  while (std::getline(ss, line)) {
    line = trim(line);
    const std::string first = line.substr(0, line.find(';'));
    if (all_digits(first)) id = first;
  }
  if (r.exit_code != 0 || id.empty()) {
    std::string msg = trim(r.output);
    throw Error("sbatch refused the job: " +
                (msg.empty() ? "exit " + std::to_string(r.exit_code) : brief_text(msg, 600)));
  }
  return id;
}

std::vector<SlurmJob> parse_squeue(const std::string& text) {
  // %F|%K|%A|%T|%r|%N|restarts: array job id, array task id (N/A), own job id, state, reason,
  // nodes, restart count.
  std::vector<SlurmJob> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto f = split(trim(line), '|');
    if (f.size() < 6 || !all_digits(f[0]) || !all_digits(f[2])) continue;
    SlurmJob j;
    j.job_id = f[2];
    if (all_digits(f[1])) {
      j.array_job_id = f[0];
      j.array_task = to_int(f[1], -1);
    }
    j.state = f[3];
    j.reason = f[4];
    j.node = f[5];
    if (f.size() > 6) j.restarts = to_int(f[6], 0);
    out.push_back(j);
  }
  return out;
}

SlurmPoll squeue_jobs(const std::vector<std::string>& job_ids, double timeout_s) {
  SlurmPoll p;
  p.source = "squeue";
  if (job_ids.empty()) {
    p.ok = true;
    return p;
  }
  if (!program_available("squeue")) {
    p.error = "squeue is not on PATH (install slurm-client)";
    return p;
  }
  const ProcessResult r = run_process(
      {"squeue", "--noheader", "--array", "--states=all", "--jobs=" + join(job_ids, ","),
       "--Format=ArrayJobID:|,ArrayTaskID:|,JobID:|,State:|,Reason:|,NodeList:|,"
       "RestartCnt:"},
      "", timeout_s);
  if (r.timed_out) {
    p.error = "squeue did not answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
    return p;
  }
  if (r.exit_code != 0) {
    // Every id has aged out of the controller's memory: not an error, an empty answer.
    if (r.output.find("Invalid job id specified") != std::string::npos) {
      p.ok = true;
      return p;
    }
    p.error = slurm_error_line(r.output);
    if (p.error.empty()) p.error = "squeue exited " + std::to_string(r.exit_code);
    return p;
  }
  p.ok = true;
  p.jobs = parse_squeue(r.output);
  return p;
}

std::vector<SlurmJob> parse_sacct(const std::string& text) {
  // JobID|State|ExitCode|NodeList; a state may read "CANCELLED by 0".
  std::vector<SlurmJob> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto f = split(trim(line), '|');
    if (f.size() < 4) continue;
    const std::string id = f[0];
    if (id.find('.') != std::string::npos) continue;  // job steps (12.batch, 12.0)
    SlurmJob j;
    split_job_id(id, j);
    if (j.array_job_id.empty() && !all_digits(j.job_id)) continue;
    if (!j.array_job_id.empty() && (!all_digits(j.array_job_id) || j.array_task < 0)) continue;
    j.state = f[1].substr(0, f[1].find(' '));
    j.exit_code = f[2];
    j.node = f[3];
    j.reason = "None";
    out.push_back(j);
  }
  return out;
}

SlurmPoll sacct_jobs(const std::vector<std::string>& job_ids, double timeout_s) {
  SlurmPoll p;
  p.source = "sacct";
  if (job_ids.empty()) {
    p.ok = true;
    return p;
  }
  if (!program_available("sacct")) {
    p.error = "sacct is not on PATH (install slurm-client)";
    return p;
  }
  const std::string ids = "--jobs=" + join(job_ids, ",");
  const std::string fields = "--format=JobID,State,ExitCode,NodeList";
  ProcessResult r = run_process(
      {"sacct", "--noheader", "--parsable2", "--allocations", ids, fields}, "", timeout_s);
  if (!r.timed_out && r.output.find("accounting storage is disabled") != std::string::npos) {
    // No accounting database: the job completion log, where the cluster keeps one.
    p.source = "sacct -c (job completion log)";
    r = run_process({"sacct", "--completion", "--noheader", "--parsable2", ids, fields}, "",
                    timeout_s);
  }
  if (r.timed_out) {
    p.error = "sacct did not answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
    return p;
  }
  p.jobs = parse_sacct(r.output);
  if (r.exit_code != 0 && p.jobs.empty()) {
    p.error = slurm_error_line(r.output);
    if (p.error.empty()) p.error = "sacct exited " + std::to_string(r.exit_code);
    return p;
  }
  p.ok = true;
  return p;
}

namespace {
void run_checked(const std::string& program, std::vector<std::string> argv) {
  require_slurm_program(program);
  const ProcessResult r = run_process(argv, "", 60);
  if (r.timed_out)
    throw Error(program + " did not answer within 60 s (is the SLURM controller up? sinfo tells)");
  if (r.exit_code != 0)
    throw Error(join(argv, " ") + " failed: " +
                (slurm_error_line(r.output).empty() ? "exit " + std::to_string(r.exit_code)
                                                    : slurm_error_line(r.output)));
}
}  // namespace

void scancel_jobs(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  run_checked("scancel", argv);
}

void requeue_jobs(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  run_checked("scontrol", {"scontrol", "requeue", join(ids, ",")});
}

}  // namespace gllm
