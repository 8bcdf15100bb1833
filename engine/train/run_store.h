// Run folders (docs/design.md): config.json, metrics.jsonl,
// checkpoints/step_NNNNNN.{safetensors,json, optim.safetensors}, summary.json. Writing for the
// trainer, reading for the GUI, CLI and audits. Torch-free.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/train/run_lock.h"

namespace gllm {

// metrics.jsonl read back. A torn last line (a crash mid-append) is dropped and reported in
// `warning`; a bad line anywhere else throws gllm::Error naming the file and line.
struct MetricsFile {
  std::vector<nlohmann::json> records;
  bool torn_tail = false;
  std::string warning;
};
MetricsFile read_metrics(const std::string& path);

// One checkpoint: the sidecar (commit marker, written last) and the files it names.
struct CheckpointInfo {
  int64_t step = 0;
  std::string weights_path;    // checkpoints/step_NNNNNN.safetensors
  std::string sidecar_path;    // checkpoints/step_NNNNNN.json
  std::string optimizer_path;  // checkpoints/step_NNNNNN.optim.safetensors
  nlohmann::json sidecar;      // step, tokens, loader state, sizes and digests of both files
};

// Checkpoints of a run whose sidecar parses, sorted by step (files are not verified here).
// Sidecars that do not parse, or whose step does not fit in 64 bits, are left out and described
// in `problems` when given.
std::vector<CheckpointInfo> list_checkpoints(const std::string& run_dir,
                                             std::vector<std::string>* problems = nullptr);
// Throws gllm::Error saying what is wrong when the sidecar lacks a key the trainer needs or a
// file is missing, truncated or altered (sizes and SHA-512 digests recorded in the sidecar).
void verify_checkpoint(const CheckpointInfo& ckpt);
// Verifies the checkpoint whose weights are `weights_path` when a sidecar (same stem, .json)
// lies beside it; a weights file inside a run's checkpoints/ folder without a sidecar was never
// committed and is refused. Other files (exported models) pass unchecked.
void verify_weights_file(const std::string& weights_path);
// The newest checkpoint that verifies; the problems of newer ones are appended to `skipped`.
// Throws gllm::Error when none verifies.
CheckpointInfo last_valid_checkpoint(const std::string& run_dir,
                                     std::vector<std::string>* skipped = nullptr);
// Throws gllm::Error (what is wrong, how to fix it) unless run_dir/checkpoints is a readable
// folder inside the run folder: missing, a symbolic link (dangling or not), a file, a FIFO or an
// unreadable folder is refused, so a resume never mistakes a lost store for an empty one.
void check_checkpoint_store(const std::string& run_dir);
// Accepts a run folder, a checkpoint's .safetensors, its .json sidecar or a bare weights file;
// returns the weights path (the newest valid checkpoint for a run folder). A checkpoint with a
// sidecar is verified against it (sizes, SHA-512) before its path is returned.
std::string resolve_weights_path(const std::string& run_or_checkpoint);

// What `gllm runs` and the GUI's run list show about one run folder.
struct RunInfo {
  std::string dir;
  std::string name;  // config "name" (the preset or arm)
  std::string description;
  std::string status;  // completed | cancelled | diverged | failed | running | interrupted
  int seed = 0;
  int64_t step = 0;  // last step recorded in metrics.jsonl
  int64_t total_steps = 0;
  int64_t tokens = 0;
  double final_loss = -1;  // -1 when unknown
  double val_bpb = -1;
  int64_t val_bpb_step = -1;  // the step val_bpb was measured at (-1 when none)
  double heldout_bpb = -1;
  double tokens_per_s = 0;
  double peak_mem_mib = 0;
  double wall_s = 0;
  int64_t last_checkpoint = -1;
  std::vector<std::string> warnings;
  nlohmann::json config;   // config.json as written
  nlohmann::json summary;  // summary.json (empty when absent)
};
// Reads a run folder; throws gllm::Error when it is not one (no config.json).
RunInfo read_run(const std::string& run_dir);
// Every run folder directly under `parent` (or `parent` itself when it is one), sorted by name;
// folders that fail to read are reported in `errors`.
std::vector<RunInfo> list_runs(const std::string& parent,
                               std::vector<std::string>* errors = nullptr);
nlohmann::json to_json(const RunInfo& r);

// The first step and token count at which a run's `key` metric ("val_bpb" / "heldout_bpb")
// reaches `target` or lower; found = false when it never does.
struct FirstReach {
  bool found = false;
  int64_t step = 0;
  int64_t tokens = 0;
  double value = 0;
};
FirstReach first_reach(const std::vector<nlohmann::json>& records, const std::string& key,
                       double target);

// Writing side, used by the trainer (one writer per run).
class RunStore {
 public:
  explicit RunStore(std::string run_dir);
  // Creates the folder (it must not already contain config.json) and writes config.json.
  void create(const nlohmann::json& resolved_config);
  const std::string& dir() const { return dir_; }
  std::string config_path() const;
  std::string metrics_path() const;
  std::string summary_path() const;
  std::string checkpoints_dir() const;
  std::string weights_path(int64_t step) const;
  std::string sidecar_path(int64_t step) const;
  std::string optimizer_path(int64_t step) const;

  // Appends one JSON record to metrics.jsonl and flushes it.
  void append_metric(const nlohmann::json& record);
  // After a resume: rewrites metrics.jsonl atomically keeping records with step <= `step`
  // (drops what an interrupted segment logged after the checkpoint, and a torn last line).
  // Returns the warning of a torn line, if any.
  std::string truncate_metrics_after(int64_t step);
  // Writes the sidecar (atomic; the commit marker of a checkpoint), recording size and SHA-512
  // of the weights and optimizer files already written; then keeps only the newest `keep`.
  // `protect_step` (when >= 0) is never pruned: the final checkpoint of a completed run that
  // is being extended stays until the extension succeeds.
  void commit_checkpoint(int64_t step, nlohmann::json sidecar, int keep, int64_t protect_step = -1);
  void write_summary(const nlohmann::json& summary);

  // Removes temporary files that killed atomic writes left in the folder and in checkpoints/
  // (NAME.tmp.PID.N.R of a process that is gone). Returns how many files and bytes it removed.
  struct Removed {
    int files = 0;
    uint64_t bytes = 0;
  };
  Removed remove_temporaries();
  // For a run with no checkpoint: removes metrics.jsonl, summary.json and checkpoints/ so the
  // run starts again from step 0 in place; config.json stays. Refuses when a checkpoint exists.
  void reset_for_restart();

 private:
  std::string dir_;
};

}  // namespace gllm
