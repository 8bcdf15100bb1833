// A sweep file turned into the runs it trains: arms × seeds with their resolved configs and run
// folders. One plan for `gllm train --sweep` (runs them here) and `gllm submit` (one array task
// each).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/train/run_store.h"

namespace gllm {

// Command-line overrides applied to every run (negative / empty: keep the config's).
struct RunOverrides {
  int64_t steps = 0;
  int eval_every = -1;
  int checkpoint_every = -1;
  int seed = -1;
  int threads = -1;
  std::string device;
};
// Applies `o` and re-validates the config (gllm::Error naming the bad value).
void apply_overrides(RunConfig& c, const RunOverrides& o);

struct SweepRequest {
  std::string sweep_file;
  std::string out;    // empty: the file's "out", else <runs>/<name>
  std::string seeds;  // empty: the file's; "41,42"; or "auto" (the ladder plan's number, --pilot)
  std::string pilot;  // pilot runs folder for seeds = "auto"
  int max_seeds = 10;
  RunOverrides overrides;
};

struct SweepJob {
  std::string arm;  // the run's name (the arm's "name", else its preset's)
  std::string dir;  // <out>/<folder_name(arm-sSEED)>
  RunConfig config;
  std::string fork;  // checkpoint the run forks from; empty when none
};

struct SweepPlan {
  std::string name;  // the file's "name", else its stem
  std::string out;
  std::vector<int> seeds;
  std::vector<SweepJob> jobs;  // seed by seed: every arm of a seed, then the next seed
  std::string seeds_note;      // with seeds = "auto": the plan's recommendation
};

// Reads the sweep file and plans its runs. Throws gllm::Error naming the file, arm and fix (an
// arm's setting that does not apply, two arms sharing a folder, --seeds that are not seeds).
SweepPlan plan_sweep(const SweepRequest& request);

// The run already in a job's folder (which must hold config.json), when it is this arm's: its
// config equals the job's up to portable paths. Another run there throws gllm::Error naming
// both and the fix (a sweep never takes another run as its own).
RunInfo existing_arm_run(const SweepJob& job);

}  // namespace gllm
