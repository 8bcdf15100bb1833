// compile_checkpoint: the work of `gllm compile` — a graded checkpoint folded into standard weights
// (seed 000 Cor. 1), checked on a random probe batch, written only when the logits agree.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gllm {

struct StandardCompileOptions {
  std::string input;   // the graded checkpoint (.safetensors, with or without a sidecar)
  std::string output;  // where the standard model goes
  int probe_batch = 4;
  int probe_len = 0;  // tokens per probe row; 0 = the model's sequence_len
  int64_t seed = 1234;
  double tolerance = 1e-4;  // largest accepted max |Δ eval logits|
};

struct StandardCompileResult {
  bool ok = false;  // max_abs_delta_logits finite and within the tolerance; output written
  double max_abs_delta_logits = 0;
  int64_t probe_len = 0;
  std::vector<std::string> removed_tensors;  // grade tensors the standard model no longer has
  int64_t state_elements_before = 0, state_elements_after = 0;  // Σ numel of the state tensors
};

// Refuses (gllm::Error naming the fix) an output that would replace the input or a run's
// checkpoint, a checkpoint with non-finite tensors or grades outside the clip, and a probe whose
// logits or attention scores would pass 2 GiB. A mismatch is returned (ok = false), not thrown.
StandardCompileResult compile_checkpoint(const StandardCompileOptions& o);

}  // namespace gllm
