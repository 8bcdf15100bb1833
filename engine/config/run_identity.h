// What makes a run what it is: the settings in which its config differs from its preset, a short
// readable name from them ("tiny-cpu+mlge.pos"), and a hash of the keys that change results.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

// One leaf setting that differs: its dotted path and both values (null when absent).
struct ConfigChange {
  std::string path;
  nlohmann::json from, to;
};

// Leaf settings in which `config` differs from `preset` (both RunConfig JSON), in path order.
// The name, the description and train.seed (a seed is not a different run) are left out.
std::vector<ConfigChange> config_changes(const nlohmann::json& config,
                                         const nlohmann::json& preset);

// Dotted paths of the settings `config` cannot use because the component that reads them is off
// (grading.level_grades while grading.mlge is false, …). A run label names none of them, and the
// effective-config hash counts them at their defaults.
std::vector<std::string> inert_settings(const nlohmann::json& config);

// One line per change, "grading.mlge: false → true"; "" when nothing differs.
std::string describe_changes(const std::vector<ConfigChange>& changes);

// The preset's name followed by what differs, e.g. "tiny-cpu+mlge.pos+steps=150": booleans by
// their key ("mlge", "no-qk_norm"), other leaves as key=value (a file by its name), a ladder arm
// chosen with MLGE as "mlge.ARM" (the ladder, profiles and frozen-grade keys it sets are implied),
// at most `max_parts` parts then "+Nmore-DIGEST" (a digest of the folded parts, so labels that
// differ only there differ). Settings the run cannot use (inert_settings) are not named. Safe as
// a folder name (no '/', no spaces).
std::string run_label(const nlohmann::json& config, const nlohmann::json& preset,
                      int max_parts = 4);

// The label of a run read back from its folder: its config against the preset its "name" names
// (found with resolve_preset_path); a name that is no preset (an arm, a label already) stays as
// it is.
std::string run_label_of(const nlohmann::json& run_config);

// 12 hex digits over the keys that change a run's results: everything but the name, the
// description, train.seed, and the checkpoint cadence, retention and thread count. Two runs
// with the same hash are seeds of one configuration, whatever they are named.
std::string effective_config_hash(const nlohmann::json& config);

// The hash of the arm a run belongs to: effective_config_hash with the run's seed written as
// "{seed}" in its string settings, so the runs of one arm across seeds, whose per-seed files
// (a sweep's "trunk-s{seed}-ladder.json") differ only by the seed, share it.
std::string arm_config_hash(const nlohmann::json& config);

}  // namespace gllm
