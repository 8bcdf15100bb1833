// Cluster run states: scheduler.json names the job, squeue (one call) and sacct (one call, for
// jobs gone from the queue) give SLURM's word, scheduler-events.jsonl and summary.json the rest.
#include "engine/cluster/cluster_state.h"

#include <map>
#include <set>

#include "engine/cluster/scheduler_record.h"
#include "engine/cluster/slurm_client.h"
#include "engine/io/error.h"

namespace gllm {

nlohmann::json to_json(const ClusterRunState& s) {
  return {{"state", s.state},         {"detail", s.detail},
          {"reason", s.reason},       {"node", s.node},
          {"exit_code", s.exit_code}, {"restarts", s.restarts},
          {"task_id", s.task_id},     {"log", s.log},
          {"log_tail", s.log_tail},   {"source", s.source}};
}

std::string state_from_slurm(const std::string& st, int restarts) {
  if (st == "PENDING" || st == "CONFIGURING") return restarts > 0 ? "requeued" : "pending";
  if (st == "RUNNING" || st == "COMPLETING" || st == "RESIZING" || st == "SIGNALING" ||
      st == "STAGE_OUT")
    return "running";
  if (st == "SUSPENDED" || st == "STOPPED") return "suspended";
  if (st == "COMPLETED") return "completed";
  if (st == "CANCELLED") return "cancelled";
  if (st == "TIMEOUT" || st == "DEADLINE") return "timeout";
  if (st == "PREEMPTED") return "preempted";
  if (st == "REQUEUED" || st == "REQUEUE_HOLD" || st == "REQUEUE_FED") return "requeued";
  if (st == "FAILED" || st == "NODE_FAIL" || st == "BOOT_FAIL" || st == "OUT_OF_MEMORY" ||
      st == "SPECIAL_EXIT")
    return "failed";
  return "unknown";
}

bool cluster_state_final(const std::string& s) {
  return s == "completed" || s == "failed" || s == "cancelled" || s == "timeout" || s == "lost" ||
         s == "never_submitted";
}

namespace {

void describe(ClusterRunState& s, const std::string& slurm_state) {
  if (s.state == "pending" || s.state == "requeued") {
    s.detail = s.reason.empty() || s.reason == "None" ? "waiting" : s.reason;
    if (s.restarts > 0) s.detail += ", requeued " + std::to_string(s.restarts) + "×";
  } else if (s.state == "running") {
    s.detail = "on " + (s.node.empty() ? std::string("?") : s.node);
    if (s.restarts > 0) s.detail += ", requeued " + std::to_string(s.restarts) + "×";
  } else if (s.state == "failed") {
    s.detail = slurm_state == "OUT_OF_MEMORY" ? "out of memory"
               : slurm_state == "NODE_FAIL"   ? "node failure"
                                              : "exit " + (s.exit_code.empty() ? "?" : s.exit_code);
    s.log_tail = log_tail(s.log);
  } else if (s.state == "timeout") {
    s.detail = "time limit reached";
  }
}

}  // namespace

std::vector<ClusterRunState> cluster_run_states(const std::vector<ClusterRunQuery>& runs) {
  struct Entry {
    ClusterRunState state;
    SchedulerRecord record;
    std::vector<TaskEvent> events;
    std::string run_status;
    bool resolved = false;
  };
  std::vector<Entry> entries;
  std::set<std::string> job_ids;
  for (const auto& q : runs) {
    if (!has_scheduler_record(q.run_dir)) continue;
    Entry e;
    e.state.run_dir = q.run_dir;
    e.run_status = q.run_status;
    try {
      e.record = read_scheduler_record(q.run_dir);
    } catch (const Error& err) {
      e.state.state = "unknown";
      e.state.detail = err.what();
      e.state.source = "run folder";
      e.resolved = true;
      entries.push_back(e);
      continue;
    }
    e.state.log = e.record.log;
    if (e.record.submission != "submitted") {
      e.state.state = e.record.submission == "submitting" ? "submitting" : "never_submitted";
      e.state.detail = e.record.message;
      e.state.source = "run folder";
      e.resolved = true;
    } else {
      e.state.task_id = e.record.task_id();
      e.events = read_task_events(q.run_dir);
      job_ids.insert(e.record.job_id);
    }
    entries.push_back(e);
  }
  if (job_ids.empty()) {
    std::vector<ClusterRunState> out;
    for (auto& e : entries) out.push_back(e.state);
    return out;
  }

  auto apply = [](Entry& e, const SlurmJob& j, const std::string& source) {
    e.state.restarts = std::max(j.restarts, e.events.empty() ? 0 : e.events.back().restarts);
    e.state.state = state_from_slurm(j.state, e.state.restarts);
    e.state.reason = j.reason;
    e.state.node = j.node;
    e.state.exit_code = j.exit_code;
    if (e.state.exit_code.empty() && !e.events.empty() && e.events.back().event == "end")
      e.state.exit_code = std::to_string(e.events.back().exit_code);
    e.state.source = source;
    describe(e.state, j.state);
    e.resolved = true;
  };

  const SlurmPoll queue = squeue_jobs({job_ids.begin(), job_ids.end()});
  if (!queue.ok) {
    for (auto& e : entries)
      if (!e.resolved) {
        e.state.state = "unknown";
        e.state.detail = "the scheduler could not be asked: " + queue.error;
        e.state.source = "squeue";
        e.resolved = true;
      }
  } else {
    std::map<std::pair<std::string, int>, const SlurmJob*> by_task;
    for (const auto& j : queue.jobs)
      by_task[{j.array_job_id.empty() ? j.job_id : j.array_job_id,
               j.array_job_id.empty() ? 0 : j.array_task}] = &j;
    for (auto& e : entries)
      if (!e.resolved) {
        auto it = by_task.find({e.record.job_id, e.record.array_task});
        if (it != by_task.end()) apply(e, *it->second, queue.source);
      }
  }

  // Gone from the queue: ask sacct once, by array id and by each task's own id.
  std::set<std::string> missing;
  for (const auto& e : entries)
    if (!e.resolved) {
      missing.insert(e.record.job_id);
      for (const auto& ev : e.events)
        if (!ev.job_id.empty()) missing.insert(ev.job_id);
    }
  if (!missing.empty()) {
    const SlurmPoll acct = sacct_jobs({missing.begin(), missing.end()});
    if (acct.ok) {
      for (auto& e : entries) {
        if (e.resolved) continue;
        const SlurmJob* found = nullptr;
        for (const auto& j : acct.jobs) {
          if (!j.array_job_id.empty() && j.array_job_id == e.record.job_id &&
              j.array_task == e.record.array_task)
            found = &j;
          // The completion log lists a task by its own id: the latest start record names it.
          if (j.array_job_id.empty() && !e.events.empty())
            for (const auto& ev : e.events)
              if (ev.event == "start" && ev.job_id == j.job_id) found = &j;
        }
        if (found) apply(e, *found, acct.source);
      }
    }
  }

  // Neither knows the task: what the run folder says.
  for (auto& e : entries) {
    if (e.resolved) continue;
    auto& s = e.state;
    s.source = "run folder";
    const TaskEvent* last = e.events.empty() ? nullptr : &e.events.back();
    if (last) s.restarts = last->restarts;
    if (last && last->event == "end") {
      s.exit_code = std::to_string(last->exit_code);
      s.node = last->node;
      if (last->exit_code == 0 && e.run_status == "completed") {
        s.state = "completed";
      } else if (last->exit_code == 0 && e.run_status == "cancelled" &&
                 !e.record.cancelled_at.empty()) {
        s.state = "cancelled";
        s.detail = "cancelled at " + e.record.cancelled_at;
      } else {
        s.state = "failed";
        s.detail = "exit " + s.exit_code;
        s.log_tail = log_tail(s.log);
      }
    } else if (!e.record.cancelled_at.empty()) {
      s.state = "cancelled";
      s.detail = "cancelled at " + e.record.cancelled_at;
    } else if (e.run_status == "completed") {
      s.state = "completed";
    } else {
      s.state = "lost";
      s.detail = last ? "lost by the scheduler: the task started on " + last->node +
                            " and is gone from SLURM with no summary"
                      : "lost by the scheduler: the job is gone from SLURM and never started";
      s.log_tail = log_tail(s.log);
    }
  }
  std::vector<ClusterRunState> out;
  for (auto& e : entries) out.push_back(e.state);
  return out;
}

}  // namespace gllm
