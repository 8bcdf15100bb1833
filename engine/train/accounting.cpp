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
  // Weights fp32 (bf16 for the embedding tables when their state is bf16: the fp32 master then
  // lives in the optimizer), gradients like the weights, AdamW two moments, Muon one momentum
  // plus the NorMuon second-moment vector (small).
  bool bf16_tables = c.optim.embedding_state == "bf16";
  double table_params = static_cast<double>(pc.wte + pc.value_embeds);
  double other = static_cast<double>(pc.total_params) - table_params;
  e.weights_mib = (other * 4 + table_params * (bf16_tables ? 2 : 4)) / mib;
  e.grads_mib = e.weights_mib;
  double adam_params = static_cast<double>(pc.total_params - pc.transformer_matrices);
  double adam_state = adam_params * 2 * (bf16_tables ? 2.5 : 4);  // bf16 tables: two bf16 moments + fp32 master
  double muon_state = static_cast<double>(pc.transformer_matrices) * 4;
  e.optimizer_mib = (adam_state + muon_state) / mib;
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
