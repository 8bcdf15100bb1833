// Analytic FLOPs and memory of a run from the parameter counts (engine/model/param_count.h) and the
// window pattern; measured peaks from getrusage or the CUDA caching allocator.
#include "engine/train/accounting.h"

#include <sys/resource.h>

#include <algorithm>

#include "engine/model/param_count.h"

#if __has_include(<c10/cuda/CUDACachingAllocator.h>) && defined(GLLM_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define GLLM_HAVE_CUDA_ALLOCATOR 1
#endif

namespace gllm {

CostEstimate estimate_cost(const RunConfig& c, int64_t vocab) {
  CostEstimate e;
  ParamCounts pc = count_params(c, vocab);
  const int L = c.model.layers(), d = c.model.width();
  const int64_t T = c.model.sequence_len;
  e.params = pc.total_params;
  e.matmul_params = pc.transformer_matrices + pc.lm_head + pc.level_proj;
  // Attention: QKᵀ and AV, forward + backward = 12·d per attended key; window w sees ≤ w+1 keys,
  // on average about min(w, T/2) of them under the causal mask.
  int short_w = c.model.short_window > 0 ? c.model.short_window : static_cast<int>(T / 2);
  const std::string& pat = c.model.window_pattern.empty() ? std::string("L") : c.model.window_pattern;
  double attn = 0;
  for (int l = 0; l < L; ++l) {
    char kind = (l == L - 1) ? 'L' : pat[l % pat.size()];
    double w = kind == 'S' ? std::min<double>(short_w, T) : static_cast<double>(T);
    double mean_keys = w >= T ? T / 2.0 : w - w * w / (2.0 * T);  // average over positions
    attn += 12.0 * d * mean_keys;
  }
  e.flops_per_token = 6.0 * static_cast<double>(e.matmul_params) + attn;
  e.tokens_per_step = static_cast<int64_t>(c.train.device_batch) * c.train.grad_accum * T;
  e.flops_per_step = e.flops_per_token * static_cast<double>(e.tokens_per_step);
  const double mib = 1024.0 * 1024.0;
  // Persistent state as the engine allocates it (engine/model/gpt.cpp, engine/optim/muon_adamw.cpp):
  // the lookup tables (wte, value_embeds, hashed tables) in model.storage's dtype, everything else
  // fp32; a gradient like each weight; AdamW two moments in the weight's dtype, or fp32 moments plus
  // an fp32 master for bf16 embedding tables with optim.embedding_state "fp32"; Muon one fp32
  // momentum per matrix (and the NorMuon vector, small); the moment-free tables one fp32 count per row.
  const bool bf16_tables = c.model.storage == "bf16";
  const double table_bytes = bf16_tables ? 2 : 4;
  const bool fp32_master = bf16_tables && c.optim.embedding_state == "fp32";
  const bool moment_free = c.optim.oe_update == "moment_free";
  const double embeddings = static_cast<double>(pc.wte + pc.value_embeds);
  const double oe = static_cast<double>(pc.oe_params);
  const double tables = embeddings + oe;
  const double other = static_cast<double>(pc.total_params) - tables;
  e.weights_mib = (other * 4 + tables * table_bytes) / mib;
  e.grads_mib = e.weights_mib;
  const double embedding_like = embeddings + (moment_free ? 0.0 : oe);  // AdamW tables
  const double table_state = fp32_master ? 2 * 4 + 4 : 2 * table_bytes;   // moments (+ master) per element
  const double adam_other = static_cast<double>(pc.total_params - pc.transformer_matrices) - tables;
  double optimizer = embedding_like * table_state + adam_other * 2 * 4 +
                     static_cast<double>(pc.transformer_matrices) * 4;
  if (moment_free) optimizer += static_cast<double>(pc.oe_rows) * 4;
  e.optimizer_mib = optimizer / mib;
  // Activations kept for backward per token: about 20·d per layer (norms, q/k/v, attention
  // output, the 4d MLP hidden twice, residuals), attention probabilities H·w per layer, and the
  // logits (softcap and softmax) 3·V; fp32.
  double per_token = 0;
  for (int l = 0; l < L; ++l) {
    char kind = (l == L - 1) ? 'L' : pat[l % pat.size()];
    double w = kind == 'S' ? std::min<double>(short_w + 1, T) : static_cast<double>(T);
    per_token += (12.0 + 2.0 * c.model.mlp_ratio) * d + c.model.heads() * w * 2.0;
  }
  per_token += 3.0 * static_cast<double>(vocab > 0 ? vocab : c.data.vocab_size);
  e.activations_mib = per_token * 4.0 * static_cast<double>(c.train.device_batch) * T / mib;
  e.total_mib = e.weights_mib + e.grads_mib + e.optimizer_mib + e.activations_mib;
  return e;
}

nlohmann::json to_json(const CostEstimate& c) {
  return {{"params", c.params},
          {"matmul_params", c.matmul_params},
          {"flops_per_token", c.flops_per_token},
          {"tokens_per_step", c.tokens_per_step},
          {"flops_per_step", c.flops_per_step},
          {"weights_mib", c.weights_mib},
          {"grads_mib", c.grads_mib},
          {"optimizer_mib", c.optimizer_mib},
          {"activations_mib", c.activations_mib},
          {"total_mib", c.total_mib}};
}

double measured_peak_mib(bool cuda) {
#ifdef GLLM_HAVE_CUDA_ALLOCATOR
  if (cuda) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
    return static_cast<double>(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);
  }
#else
  (void)cuda;
#endif
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace gllm
