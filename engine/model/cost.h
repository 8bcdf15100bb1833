// What a model costs, analytically and torch-free: the run's FLOPs per token and training-memory
// estimate (reported beside the measured peak), and seed 001's Table 1b per-component accounting.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/model/param_count.h"

namespace gllm {

// ----- the run's cost: FLOPs per token and the analytic memory of training -----

struct CostEstimate {
  int64_t params = 0;           // every parameter
  int64_t matmul_params = 0;    // parameters used as matmul weights per token (not lookups)
  double flops_per_token = 0;   // forward + backward: 6·matmul_params + 12·Σ_l d·w_l
  int64_t tokens_per_step = 0;  // device_batch · grad_accum · sequence_len
  double flops_per_step = 0;
  double weights_mib = 0, grads_mib = 0, optimizer_mib = 0, activations_mib = 0;
  double total_mib = 0;  // the analytic peak estimate reported beside the measured one
};

// `fused_cpu_logits`: the output layer runs the fused CPU loss, whose one (N, V) workspace holds
// the logits and then, in place, their gradient (else the logits, capped logits and softmax are
// kept: three (N, V) copies).
CostEstimate estimate_cost(const RunConfig& config, int64_t vocab_size,
                           bool fused_cpu_logits = false);
nlohmann::json to_json(const CostEstimate& c);

// ----- seed 001 Table 1b: parameters, persistent memory deltas and FLOPs per step per component
// -----

// Persistent memory that a component adds over the dense baseline, in MiB (2^20 bytes).
struct MemoryMiB {
  double oe_tables = 0;  // rows·(d/4)·(weight + grad: 2 + 2 B in bf16 storage, 4 + 4 B in
                         // fp32) + rows·4 B fp32 counts
  double fp32_embedding_state =
      0;  // (wte + value_embeds)·8 B: fp32 master (4 B) + widening both moments bf16→fp32 (2+2 B)
  double query_scale = 0;  // q_τ·16 B: fp32 weight, grad and two Adam moments
  double delta = 0;        // the sum over the components this config enables
};

// FLOPs per optimizer step. Each component's cost is given for the model shape whether or not it
// is enabled; `extra` sums those the config enables.
struct StepFlops {
  int64_t tokens_per_step = 0;
  double model = 0;         // AR estimate_flops per token × tokens (6·N_dense + attention)
  double oe_lookup = 0;     // 8·d per token: hash arithmetic, 4-table gather/scatter-add, x0 add
  double oe_update = 0;     // 5·rows·d/4: count division, squares, RMS, scale, subtract
  double bieq = 0;          // 16 per matrix element (2 passes × row + column RMS and scaling)
  double neumann_gram = 0;  // Σ over wte, lm_head, VE tables: 4Vd² + 14Vd + 3d² + 3d
  double table_neumann =
      0;  // the same formula on each hashed table (m+2j, d/4), all rows (upper bound)
  double query_scale = 0;  // 4·L·d per token (scale q in forward and backward)
  double extra = 0;        // enabled components beyond the dense baseline
  std::vector<std::string> enabled;
};

struct Accounting {
  ParamCounts params;
  int64_t result_json_params = 0;  // what the seed's result.json records: scaling + q_τ
  int neumann_tables = 0;
  MemoryMiB memory;
  StepFlops flops;
};

// tokens_per_step 0 = train.device_batch · model.sequence_len · train.grad_accum.
Accounting account(const RunConfig& config, int64_t vocab_size = 0, int64_t tokens_per_step = 0);
nlohmann::json to_json(const Accounting& a);

// Neumann-Gram FLOPs of one (rows, d) table: 4·rows·d² + 14·rows·d + 3d² + 3d.
double neumann_gram_flops(int64_t rows, int64_t d);

// Key window of each layer, as the model attends (GPT) and the cost counts: the pattern tiled
// over layers, the last layer forced to the full sequence; each at most sequence_len.
std::vector<int64_t> layer_windows(const ModelConfig& m);

}  // namespace gllm
