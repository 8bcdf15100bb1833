// Forking a run from another run's checkpoint (route 2 of the certificate): the child keeps the
// parent's weights, optimizer state, RNG and data position, and takes its own grade tensors.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/config/run_config.h"
#include "engine/train/run_store.h"

namespace gllm {

struct ForkPoint {
  CheckpointInfo checkpoint;  // the parent's checkpoint (verified)
  std::string parent_run;     // the parent's run folder
  RunConfig parent;           // the config the checkpoint was trained with
  nlohmann::json record;      // what the child's parent.json holds
};

// Finds and verifies the checkpoint `spec` names (see resolve_fork) and reads its config.
ForkPoint locate_fork(const std::string& spec);

// Resolves `spec` — a run folder (its newest valid checkpoint), "RUN_FOLDER@STEP", or a
// checkpoint's .safetensors inside a run's checkpoints/ — and checks that `child` may fork from
// it: every result-changing key other than the grading section (and model.wte_init, which a fork
// does not use) must equal the parent's. Throws gllm::Error naming the keys and the fix.
ForkPoint resolve_fork(const std::string& spec, const RunConfig& child);

// Leaves of a RunConfig's JSON by dotted key ("optim.matrix_lr" → value), for comparing configs
// (a fork against its parent, a resume against its checkpoint).
void flatten_config(const nlohmann::json& j, const std::string& prefix,
                    std::map<std::string, nlohmann::json>& out);

// Tensors a fork takes from the child's own model instead of the parent's checkpoint: the grades
// and the graded basis.
const std::set<std::string>& fork_own_tensors();

// The record as the child's parent.json stores it: the parent's folder and checkpoint relative to
// the child's folder, so a results tree moved as a whole still names its parents.
nlohmann::json portable_fork_record(const nlohmann::json& record, const std::string& child_dir);

// The tokens a run had when its own training began: its parent checkpoint's for a fork
// (parent.json), else 0. Token-efficiency curves count from there.
double run_start_tokens(const std::string& run_dir);

// parent.json of a run folder (null when the run was not forked).
nlohmann::json read_parent_record(const std::string& run_dir);

}  // namespace gllm
