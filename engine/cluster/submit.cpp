// Submission: checks every folder, locks the sweep folder, makes the run folders config-first,
// writes the script, calls sbatch once and records the job id and array index in each run.
#include "engine/cluster/submit.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>

#include "engine/cluster/batch_script.h"
#include "engine/cluster/cluster_state.h"
#include "engine/cluster/scheduler_record.h"
#include "engine/cluster/slurm_client.h"
#include "engine/config/run_paths.h"
#include "engine/dist/batch_plan.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/fork.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"

namespace gllm {

namespace {

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, format, &tm);
  return b;
}

std::string absolute(const std::string& p) {
  return std::filesystem::absolute(p).lexically_normal().string();
}

// An exclusive lock on <sweep>/.submit.lock for the whole submission: a second workbench waits
// for nothing and is told who holds it.
class SubmitLock {
 public:
  explicit SubmitLock(const std::string& sweep_dir) {
    const std::string path = join_path(sweep_dir, ".submit.lock");
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error("cannot open " + path + " to lock the sweep for submission");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw Error(sweep_dir +
                  " is being submitted by another process right now; wait for it, then look "
                  "with `gllm runs " +
                  sweep_dir + "` (a sweep is never submitted twice)");
    }
  }
  ~SubmitLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  SubmitLock(const SubmitLock&) = delete;
  SubmitLock& operator=(const SubmitLock&) = delete;

 private:
  int fd_ = -1;
};

std::vector<std::string> submitted_task_ids(const std::vector<std::string>& run_dirs,
                                            std::vector<SchedulerRecord>* records) {
  std::vector<std::string> ids;
  for (const auto& d : run_dirs) {
    if (!has_scheduler_record(d))
      throw Error(d +
                  " is not a cluster run (no scheduler.json); a local run stops with Ctrl-C "
                  "or the Runs panel's Cancel");
    SchedulerRecord r = read_scheduler_record(d);
    if (r.submission != "submitted")
      throw Error(d + " was never submitted (" + r.submission + "); there is no job to steer");
    ids.push_back(r.task_id());
    if (records) records->push_back(r);
  }
  return ids;
}

}  // namespace

std::string gllm_program_path() {
  const std::filesystem::path self = this_program_path();
  if (self.filename() == "gllm") return self.string();
  // The workbench (or a test) beside the CLI it was built with.
  const std::filesystem::path beside = self.parent_path() / "gllm";
  if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  throw Error("the batch script runs the gllm program, and there is none beside " + self.string() +
              ": give the cluster profile its path (gllm cluster set NAME --gllm /path/to/gllm)");
}

std::vector<std::string> run_folders_of(const std::string& path) {
  if (file_exists(join_path(path, "config.json"))) return {path};
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    if (e.is_directory() && file_exists(join_path(e.path().string(), "config.json")))
      out.push_back(e.path().string());
  if (ec) throw Error("cannot read " + path + ": " + ec.message());
  std::sort(out.begin(), out.end());
  if (out.empty()) throw Error(path + " holds no run folder (no config.json in it or below it)");
  return out;
}

SubmitRequest plan_seed_submission(const RunConfig& config, const std::vector<int>& seeds,
                                   const ClusterProfile& profile, const std::string& root,
                                   const std::string& out) {
  if (seeds.empty()) throw Error("give at least one seed to submit");
  SubmitRequest rq;
  rq.profile = profile;
  rq.name = config.name;
  rq.sweep_dir = out.empty() ? new_run_dir(root, config.name) : out;
  for (int seed : seeds) {
    RunConfig c = config;
    set_config_value(c, "train.seed", seed);  // validates: ConfigError with the range
    // One seed: the run is the folder (it keeps its script and log); several: one folder each.
    const std::string dir =
        seeds.size() == 1
            ? rq.sweep_dir
            : join_path(rq.sweep_dir, folder_name(config.name + "-s" + std::to_string(seed)));
    rq.jobs.push_back({config.name, dir, c, ""});
  }
  return rq;
}

SubmitOutcome submit_to_slurm(const SubmitRequest& rq) {
  if (rq.jobs.empty()) throw Error("nothing to submit: the plan holds no run");
  const ClusterProfile& p = rq.profile;
  // Every run must split over the task's ranks (a refusal here, not in the queue hours later).
  if (p.ranks() > 1)
    for (const auto& j : rq.jobs) try {
        dist::plan_batch(j.config.train.device_batch, j.config.train.grad_accum, p.ranks(), 0);
      } catch (const Error& e) {
        throw Error("run " + j.arm + " cannot run on the " + std::to_string(p.ranks()) +
                    " ranks of cluster profile '" + p.name +
                    "' (nodes × tasks_per_node): " + e.what());
      }
  // A forked arm starts from its parent's checkpoint, which must exist now (on the shared
  // filesystem, where the task's node reads it): checked and recorded here as parent.json, which
  // the task's `gllm resume` of a folder without checkpoints forks from.
  std::map<std::string, nlohmann::json> fork_records;  // by the job's folder
  for (const auto& j : rq.jobs) {
    if (j.fork.empty()) continue;
    try {
      fork_records[j.dir] = resolve_fork(j.fork, j.config).record;
    } catch (const Error& e) {
      throw Error("run " + j.arm + " forks from " + j.fork + ", which cannot be used: " + e.what() +
                  ". Train (or wait for) the parent run first; its checkpoint must lie where the "
                  "cluster's nodes read it");
    }
  }
  if (!rq.dry_run) require_slurm_program("sbatch");
  const std::string sweep_dir = absolute(rq.sweep_dir);
  const std::string log_dir = join_path(sweep_dir, "logs");

  std::unique_ptr<SubmitLock> lock;
  if (!rq.dry_run) {
    make_directories(log_dir);
    lock = std::make_unique<SubmitLock>(sweep_dir);
  }

  // Which folders to submit: new ones, and earlier ones that are not completed and whose job is
  // over (a run already queued or running is never submitted again).
  SubmitOutcome out;
  std::vector<const SweepJob*> todo;
  std::vector<ClusterRunQuery> queries;
  for (const auto& j : rq.jobs) {
    const std::string dir = absolute(j.dir);
    if (file_exists(join_path(dir, "config.json"))) {
      const RunInfo info = existing_arm_run(j);
      if (info.status == "completed") {
        out.completed.push_back(dir);
        continue;
      }
      if (has_scheduler_record(dir)) queries.push_back({dir, info.status});
    }
    todo.push_back(&j);
  }
  if (!queries.empty()) {
    for (const auto& s : cluster_run_states(queries)) {
      if (s.state == "submitting" || s.state == "never_submitted" || cluster_state_final(s.state))
        continue;
      throw Error(s.run_dir + " is already on the cluster as task " + s.task_id + " (" + s.state +
                  (s.detail.empty() ? "" : ": " + s.detail) +
                  "); it is not submitted twice. Wait for it, or cancel it with `gllm cancel " +
                  s.run_dir + "`");
    }
  }
  if (todo.empty())
    throw Error("every run of " + rq.name + " is completed (" +
                std::to_string(out.completed.size()) + " in " + sweep_dir + "); nothing to submit");

  BatchScriptRequest b;
  b.name = rq.name;
  for (const auto* j : todo) b.run_dirs.push_back(absolute(j->dir));
  b.log_dir = log_dir;
  b.profile = p;
  b.throttle = rq.throttle >= 0 ? rq.throttle : p.max_parallel;
  b.gllm = !rq.gllm.empty() ? rq.gllm : !p.gllm.empty() ? p.gllm : gllm_program_path();
  b.written_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  out.script = batch_script(b);
  out.run_dirs = b.run_dirs;
  if (rq.dry_run) return out;

  // Folders first (config.json and an empty checkpoint store: a run that shows as pending at
  // once), then the script, then one sbatch.
  std::vector<std::string> created;
  SchedulerRecord rec;
  rec.profile = p.name;
  rec.sweep = rq.name;
  rec.submission = "submitting";
  try {
    for (size_t i = 0; i < todo.size(); ++i) {
      const std::string& dir = b.run_dirs[i];
      if (!file_exists(join_path(dir, "config.json"))) {
        make_directories(dir);
        RunStore(dir).create(portable_config(todo[i]->config.to_json()));
        created.push_back(dir);
        const auto fork = fork_records.find(todo[i]->dir);
        if (fork != fork_records.end())
          write_file_atomic(join_path(dir, "parent.json"),
                            portable_fork_record(fork->second, dir).dump(2) + "\n");
      }
    }
    out.script_path = join_path(sweep_dir, "submit-" + utc_now("%Y%m%d-%H%M%S") + ".sbatch");
    for (int k = 2; file_exists(out.script_path); ++k)
      out.script_path = join_path(
          sweep_dir, "submit-" + utc_now("%Y%m%d-%H%M%S") + "-" + std::to_string(k) + ".sbatch");
    write_file_atomic(out.script_path, out.script);
    rec.script = out.script_path;
    for (size_t i = 0; i < todo.size(); ++i) {
      rec.array_task = static_cast<int>(i);
      write_scheduler_record(b.run_dirs[i], rec);
    }
    out.job_id = sbatch_submit(out.script_path, sweep_dir);
  } catch (const Error& e) {
    // Nothing half-made is left as if queued: folders made here go, earlier ones say why.
    std::error_code ec;
    for (const auto& d : created) std::filesystem::remove_all(d, ec);
    rec.submission = "never_submitted";
    rec.message = e.what();
    for (const auto& d : b.run_dirs)
      if (file_exists(join_path(d, "config.json"))) {
        rec.array_task = 0;
        write_scheduler_record(d, rec);
      }
    if (!out.script_path.empty()) std::filesystem::remove(out.script_path, ec);
    throw;
  }
  rec.submission = "submitted";
  rec.job_id = out.job_id;
  rec.submitted_at = b.written_at;
  for (size_t i = 0; i < todo.size(); ++i) {
    rec.array_task = static_cast<int>(i);
    rec.log = task_log_path(log_dir, out.job_id, static_cast<int>(i));
    write_scheduler_record(b.run_dirs[i], rec);
  }
  nlohmann::json entry = {{"job_id", out.job_id}, {"script", out.script_path},
                          {"profile", p.name},    {"submitted_at", b.written_at},
                          {"runs", out.run_dirs}, {"completed_before", out.completed}};
  append_line(join_path(sweep_dir, "submissions.jsonl"), entry.dump());
  return out;
}

std::vector<std::string> cancel_cluster_runs(const std::vector<std::string>& run_dirs) {
  std::vector<SchedulerRecord> records;
  const auto ids = submitted_task_ids(run_dirs, &records);
  // Tasks that have ended are left alone (scancel would call them an error).
  std::vector<ClusterRunQuery> queries;
  for (const auto& d : run_dirs) queries.push_back({d, ""});
  const auto states = cluster_run_states(queries);
  std::vector<std::string> live;
  std::vector<size_t> which;
  for (size_t i = 0; i < states.size(); ++i)
    if (!cluster_state_final(states[i].state)) {
      live.push_back(ids[i]);
      which.push_back(i);
    }
  scancel_jobs(live);
  const std::string now = utc_now("%Y-%m-%dT%H:%M:%SZ");
  for (size_t i : which) {
    records[i].cancelled_at = now;
    write_scheduler_record(run_dirs[i], records[i]);
  }
  return live;
}

std::vector<std::string> requeue_cluster_runs(const std::vector<std::string>& run_dirs) {
  const auto ids = submitted_task_ids(run_dirs, nullptr);
  requeue_jobs(ids);
  return ids;
}

}  // namespace gllm
