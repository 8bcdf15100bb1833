// Torch-free parameter accounting of the GPT for a RunConfig (baseline.md §1.4, seed 001 §2.1):
// used by `gllm params`, the audit and the GUI without building the model.
#pragma once
#include <cstdint>

#include "engine/config/run_config.h"

namespace gllm {

struct ParamCounts {
  int64_t wte = 0;
  int64_t lm_head = 0;
  int64_t value_embeds = 0;
  int64_t transformer_matrices = 0;  // attention, MLP and ve_gate matrices of every block
  int64_t scalars = 0;               // resid_lambdas + x0_lambdas
  int64_t scaling_params = 0;        // the five above (AR num_scaling_params)
  int64_t oe_rows = 0;               // Σ_j (m + 2j) over the four hashed n-gram tables
  int64_t oe_params = 0;             // oe_rows · d/4
  int64_t query_scale = 0;           // n_layer · H · Dh/2 when on
  int64_t grades = 0;                // attention grades + level grades
  int64_t level_proj = 0;    // d² when any level component (MLGE, graded PE, level GeGLU) is on
  int64_t position = 0;      // absolute position table
  int64_t total_params = 0;  // everything above
};

// Counts for `config` at vocabulary `vocab_size` (0 = config.model.vocab_size).
ParamCounts count_params(const RunConfig& config, int64_t vocab_size = 0);

// Level subspace dimensions d_l (grading.level_dims, or an equal split of d, the first levels
// taking the remainder).
std::vector<int64_t> resolve_level_dims(const RunConfig& config);
// True when the model builds level projections (MLGE, graded sinusoidal PE or level GeGLU).
bool uses_levels(const RunConfig& config);

}  // namespace gllm
