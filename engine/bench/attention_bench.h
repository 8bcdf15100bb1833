// `gllm bench attention`: graded (EG-MHSA) vs standard attention, forward + backward, over sequence
// lengths and widths (Prop. 4: the grades add O(n·d) work to O(n²·d)), and the compiled model's
// cost.
//
// Result JSON, schema "gllm-bench-attention-1" (bench/results/attention-<stamp>.json; the GUI heat
// map reads widths × lengths from "overhead"):
//   kind "attention", schema, head_dim, batch, repeats, threads,
//   lengths: [n, ...] (columns), widths: [d, ...] (rows),
//   overhead: [[o(d, n) for n in lengths] for d in widths]   o = graded/standard − 1 (fraction,
//             median over alternating paired repetitions; may be slightly negative from noise),
//   standard_ms, graded_ms: same layout, median milliseconds of one forward + backward,
//   noise: same layout, the relative spread of the standard timings (IQR / median) for judging o,
//   target: {"length": 2048, "max_overhead": 0.03}, overhead_at_target: {"<d>": o, ...} (when 2048
//   is measured), meets_target: every o(d, 2048) ≤ 0.03,
//   compiled: {preset, batch, sequence_len, standard_ms, compiled_ms, graded_ms (forward, no grad),
//              ratio = compiled/standard (target 1.00), graded_ratio = graded/standard,
//              max_abs_logit_diff (compiled vs graded eval logits)} or null,
//   machine: bench_report.h machine_info().
// The attention block timed is the model's (engine/model/gpt.cpp GPTImpl::attention): q/k/v
// projections, half-split RoPE, QK-norm, [graded: q, k, v ⊙ λ^q per plane], causal softmax
// attention with an additive mask, output projection.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/run_config.h"

namespace gllm::bench {

struct AttentionBenchOptions {
  std::vector<int> lengths{128, 256, 512, 1024, 2048, 4096};
  std::vector<int> widths{128, 256, 512};
  int head_dim = 64;
  int batch = 1;
  int repeats = 11;  // paired (graded, standard) repetitions per cell after one warm-up
  int threads = 0;
  bool compiled = true;       // also time compile_to_standard's model against the standard one
  RunConfig compiled_config;  // graded config for the compiled check (grading.attention on)
  std::string preset;
  int compiled_batch = 4;
  int64_t compiled_vocab = 0;  // 0 = compiled_config.data.vocab_size
};

// Overhead of one cell from paired timings: median over i of graded[i]/standard[i] − 1.
double paired_overhead(const std::vector<double>& graded, const std::vector<double>& standard);

nlohmann::json run_attention_bench(const AttentionBenchOptions& options,
                                   const std::function<void(const std::string&)>& log = {});

}  // namespace gllm::bench
