// Route 2 of the certificate: a checkpoint's own token embedding W_e·G as the reference the
// profiles are read in (every arm then forks from that checkpoint, engine/train/fork.h).
#pragma once
#include <string>

#include "engine/grading/reference_table.h"

namespace gllm {

// W_e (V, d) of a run folder's newest checkpoint or a checkpoint file, times G = P diag(λ^q) Pᵀ
// where the model has MLGE grades (mlge.proj, mlge.level_grades, λ from the checkpoint's config;
// where every grade is 0, G = I exactly and W_e is read as stored). The meta records the
// checkpoint, its step and whether G was applied. Refuses non-finite weights.
grading::TokenReference checkpoint_reference(const std::string& run_or_checkpoint,
                                             const std::string& wte_name = "");

}  // namespace gllm
