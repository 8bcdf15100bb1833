// Comparisons across run folders: arms matched by seed against a baseline arm (paired deltas,
// difference of differences for 2×2 designs), and token efficiency (seed 000 §8.2.2). Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/train/run_store.h"

namespace gllm {

// Runs grouped by arm (config "name"), each arm's runs by seed.
struct ArmRuns {
  std::string arm;
  std::vector<RunInfo> runs;  // sorted by seed
};
std::vector<ArmRuns> group_by_arm(const std::vector<RunInfo>& runs);

// Paired comparison of every arm against `baseline_arm` on `metric` ("heldout_bpb" | "val_bpb"),
// matching seeds present in both. With `two_by_two` and exactly four arms — baseline (00) then,
// in order of appearance, 01, 10, 11 — adds DoD = (11 − 10) − (01 − 00) over seeds in all four.
nlohmann::json compare_runs(const std::vector<RunInfo>& runs, const std::string& baseline_arm,
                            const std::string& metric, bool two_by_two);

// The arm runs are compared against by default: "uniform" when there is one, else the first arm
// whose name holds "uniform" (the ladder's "ladder-uniform"); empty when none does.
std::string uniform_arm(const std::vector<std::string>& arms);

// Token efficiency: for each run, the tokens at which `metric` first reaches `target` (from
// metrics.jsonl), and the ratio to the uniform arm's tokens (matched by seed when it has that
// seed, else its mean over seeds). Seed 000 Prop. 7(ii) predicts ratio ≈ Λ(g) < 1 in the cone.
nlohmann::json token_efficiency(const std::vector<RunInfo>& runs, const std::string& metric,
                                double target, const std::string& uniform_arm);

}  // namespace gllm
