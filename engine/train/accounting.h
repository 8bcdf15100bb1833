// Analytic cost accounting of a training run: FLOPs per token (6·matmul params + attention) and an
// estimate of training memory (weights, gradients, optimizer state, activations). Torch-free.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/config/run_config.h"

namespace gllm {

struct CostEstimate {
  int64_t params = 0;              // every parameter
  int64_t matmul_params = 0;       // parameters used as matmul weights per token (not lookups)
  double flops_per_token = 0;      // forward + backward: 6·matmul_params + 12·Σ_l d·w_l
  int64_t tokens_per_step = 0;     // device_batch · grad_accum · sequence_len
  double flops_per_step = 0;
  double weights_mib = 0, grads_mib = 0, optimizer_mib = 0, activations_mib = 0;
  double total_mib = 0;            // the analytic peak estimate reported beside the measured one
};

CostEstimate estimate_cost(const RunConfig& config, int64_t vocab_size);
nlohmann::json to_json(const CostEstimate& c);

// Measured peak memory of this process in MiB: CUDA caching-allocator peak when `cuda`, else
// the process peak resident set size (getrusage).
double measured_peak_mib(bool cuda);

}  // namespace gllm
