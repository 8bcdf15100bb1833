// `gllm bench train`: training throughput of the engine against the equivalent PyTorch eager script
// (tests/python/bench_train_reference.py), alternating in one invocation, with GFLOP/s, a GEMM peak
// measured in the same run, and where the time goes. Torch-free header (results are plain JSON).
//
// Result JSON (bench/results/train-<preset>-<stamp>.json; keys the GUI and README read):
//   kind "train", preset, config {n_layer, n_embd, n_head, sequence_len, device_batch, vocab_size},
//   step: "forward + loss + backward + zero_grad" (the part both sides do identically),
//   steps, warmup, rounds, threads,
//   rounds_detail: [{engine_tokens_per_s, python_tokens_per_s, ratio}, ...] in run order,
//   engine_tokens_per_s, python_tokens_per_s   medians over rounds,
//   ratio = engine_tokens_per_s / python_tokens_per_s (of the two medians),
//   flops_per_token (engine/model/cost.h), engine_gflops = engine_tokens_per_s·flops_per_token/1e9,
//   python_gflops, gemm_peak_gflops (the best round's fp32 N×N torch::mm; gemm_median_gflops beside
//   it), peak_fraction = engine_gflops/peak, python_peak_fraction, loss_engine, loss_python,
//   loss_reference (model_reference.py), loss_abs_diff, python_implementation ("eager" |
//   "reference"), gemm_bound: {products_per_step, shapes [{op, a, b, count, ms, gflops}], gemm_ms,
//   gemm_gflops, step_ms,
//               fraction = gemm_ms / step_ms}: the step's own matrix products (recorded with their
//               shapes, each timed alone on contiguous operands); fraction is how close the step
//               is to doing nothing but its GEMMs (1 = every non-GEMM cost gone),
//   full_step: {tokens_per_s, optimizer_ms} (engine with its MuonAdamW step; no Python twin),
//   phases_ms: {forward, backward, zero_grad, optimizer} engine medians per step,
//   profile: {engine: [{op, self_ms, calls}], python: [...]} per step, when profiled,
//   machine: bench_report.h machine_info().
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/run_config.h"

namespace gllm::bench {

struct TrainBenchOptions {
  RunConfig config;        // the preset's config (train.device_batch, model shape)
  std::string preset;      // as the user named it (recorded)
  int64_t vocab_size = 0;  // 0 = config.data.vocab_size (random tokens: no corpus needed)
  int steps = 10;          // timed steps per side per round
  int warmup = 2;          // untimed steps before each side's timed steps
  int rounds = 3;          // engine, Python, engine, Python, ...
  int threads = 0;         // 0 = configure_threads() default (GLLM_THREADS or all cores)
  bool vs_python = true;
  std::string python;       // empty = default_python()
  std::string script;       // empty = reference_script("bench_train_reference.py")
  bool full_step = true;    // also time the engine's full step with MuonAdamW
  bool profile = false;     // op-level profile of both sides (after the timed rounds)
  int gemm_n = 1024;        // GEMM peak matrix size (0 = skip)
  bool gemm_bound = true;   // time the step's own matrix products alone (gemm_bound in the result)
  bool vs_unfused = false;  // also time the engine with its fused CPU ops off, each round
};

// One round's measurements (tokens per second of each side; python 0 when not run).
struct TrainRound {
  double engine_tokens_per_s = 0;
  double python_tokens_per_s = 0;
  double unfused_tokens_per_s = 0;  // 0 when not run
};

// The figures derived from the rounds: medians, ratio, GFLOP/s and peak fractions.
struct TrainSummary {
  double engine_tokens_per_s = 0, python_tokens_per_s = 0, ratio = 0;
  double engine_gflops = 0, python_gflops = 0, peak_fraction = 0, python_peak_fraction = 0;
  double unfused_tokens_per_s = 0, fusion_speedup = 0;  // 0 when not run
};
TrainSummary summarize_rounds(const std::vector<TrainRound>& rounds, double flops_per_token,
                              double gemm_peak_gflops);

// Runs the benchmark; progress lines go to `log` (may be empty). Throws gllm::Error when the
// Python side fails (its output is quoted).
nlohmann::json run_train_bench(const TrainBenchOptions& options,
                               const std::function<void(const std::string&)>& log = {});

// Median GFLOP/s of fp32 N×N matrix products with LibTorch (the BLAS the engine uses).
double measure_gemm_gflops(int n, int repeats = 5);

}  // namespace gllm::bench
