// `gllm check gpu`: graded GPT forward/backward on CUDA against CPU, bf16 autocast against fp32,
// compile-to-standard on the GPU, SDPA against masked softmax, and CUDA peak memory; pass/fail +
// numbers.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::dist {

struct CheckResult {
  std::string name;
  std::string status;  // pass | fail | skipped
  std::string detail;  // one line with the figures and the bound they were held to
  nlohmann::json numbers = nlohmann::json::object();
};

struct GpuCheckReport {
  std::string device;   // "cuda:0 (<name>)" or "cpu" for a self-test
  std::string skipped;  // non-empty: nothing ran (e.g. "no CUDA device")
  std::vector<CheckResult> checks;
  bool passed() const;  // no check failed
  nlohmann::json to_json() const;
};

struct GpuCheckOptions {
  // "cuda" (default; skipped without a CUDA device) or "cpu": run every check with the CPU as the
  // target device — a self-test of the checks themselves (differences are then ~0 by construction).
  std::string device = "cuda";
  int64_t batch = 4;  // rows of the graded forward/backward check
  int64_t seq_len = 64;
};

GpuCheckReport run_gpu_checks(const GpuCheckOptions& options = {});

}  // namespace gllm::dist
