// The checks a resume makes before it loads anything: the run fits this machine's memory, what the
// config changed since the checkpoint, signs of a lost checkpoint, and the sidecar's resume state.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/train/run_store.h"

namespace gllm {

// The analytic memory estimate against this machine's memory, for runs on the CPU: a preset far
// too large is refused before anything is allocated.
void check_memory(const RunConfig& c);

// The result-changing differences between the config a checkpoint was trained with (its weights'
// metadata) and `now`: [{key, from, to}]; null when the checkpoint carries no readable config.
nlohmann::json checkpoint_config_changes(const CheckpointInfo& ck, const RunConfig& now,
                                         std::vector<std::string>& notes);

// Those differences in one line for a message ("key from → to, …"), cut after about 600 characters.
std::string list_changes(const nlohmann::json& changes);

// Why a run folder without a committed checkpoint must have written one (empty when nothing
// says so): metrics past the first checkpoint step, a final held-out evaluation or a divergence
// (each followed by a checkpoint), or a summary that the trainer writes only after a checkpoint.
// Such a folder lost its sidecars; it is not restarted over its weights.
std::string checkpoint_evidence(const RunStore& store, const RunConfig& c,
                                const std::string& status);

// Range checks of the resume state a checkpoint's sidecar and optimizer file carry, before
// anything is loaded: a tampered or corrupted value is refused, never trained on.
void check_resume_state(const CheckpointInfo& ck);

}  // namespace gllm
