// Sweep files: arms (presets, optionally renamed and edited) × seeds, run one after another by
// `gllm train --sweep FILE`. Read through the bounded JSON reader and checked key by key.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

// {"name": "...", "arms": ["preset", {"preset": "p", "name": "arm", "set": {"a.b": v}}],
//  "seeds": [41, 42, 47], "out": "runs/<name>" (optional), "steps": N (optional),
//  "fork": "trunk/uniform-s{seed}@200" (optional: every run forks from that checkpoint, {seed}
//          replaced by the run's seed; relative to the sweep file's folder; engine/train/fork.h)}
// A string value of an arm's "set" holding {seed} is replaced per seed the same way (route 2: each
// seed's arms read the profiles of their own trunk).
struct SweepArm {
  std::string preset;
  std::string name;                               // empty: the preset's own name
  nlohmann::json set = nlohmann::json::object();  // dotted config key → value
};

struct SweepFile {
  std::string name;            // empty: the file's stem
  std::vector<SweepArm> arms;  // at least one
  std::vector<int> seeds;      // at least one, each in [0, 2^31 − 1], no repeats
  std::string out;             // empty: runs/<name>
  int64_t steps = 0;           // > 0: replaces train.steps of every arm
  std::string fork;            // empty: runs start from initialisation
};

// Checks a parsed sweep; errors name `source`, the key and the fix.
SweepFile sweep_from_json(const nlohmann::json& j, const std::string& source);
// Reads and checks a sweep file (size and depth bounded before parsing).
SweepFile read_sweep_file(const std::string& path);

// The leaves in which two configs (RunConfig JSON) differ, as "key a → b", "description" left
// out; at most `max_items` listed (then "…"). Empty when they match.
std::vector<std::string> config_differences(const nlohmann::json& a, const nlohmann::json& b,
                                            size_t max_items = 8);

}  // namespace gllm
