// What the workbench's Cluster panel shows: every cluster run under a few folders, its own
// progress next to the scheduler's state, read in one pass (one squeue, at most one sacct).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/cluster/cluster_state.h"

namespace gllm {

struct ClusterRunRow {
  std::string dir;
  std::string sweep_dir;  // the folder holding the run's batch script (its sweep, or itself)
  std::string label;      // the config's name and what sets it apart (run_label_of)
  int seed = 0;
  std::string run_status;  // the run's own: running | completed | interrupted | … | "" (no steps)
  int64_t step = 0, total_steps = 0;
  double val_bpb = -1, heldout_bpb = -1;
  int64_t val_bpb_step = -1;  // the step val_bpb was measured at
  int64_t metrics_bytes = 0;  // size of metrics.jsonl: grows while the task trains
  ClusterRunState cluster;
};

struct ClusterSnapshot {
  std::vector<ClusterRunRow> runs;  // in folder order
  std::vector<std::string> errors;  // folders that did not read, with why
};

// The cluster runs (folders holding scheduler.json) in each root: the root itself, its children
// (a sweep's runs, or single runs under a runs root) and their children (runs root/sweep/run).
// Each run once, whatever roots overlap. Never throws for a folder: its error is listed.
ClusterSnapshot watch_cluster_runs(const std::vector<std::string>& roots);

}  // namespace gllm
