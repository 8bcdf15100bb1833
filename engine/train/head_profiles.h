// Profiles of every attention head of a checkpoint in the head's own coordinates: the Brown
// validation text read through the model's query/key projections (after RoPE and QK-norm).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "engine/grading/certify.h"

namespace gllm {

struct HeadProfileOptions {
  std::string checkpoint;          // run folder or checkpoint .safetensors
  std::string features = "keys";   // keys | queries: which side of the scores is read
  std::string target = "mixture";  // noun | verb_distance | negation | document_position | mixture
  int bootstrap = 100;             // resamples over validation sentences
  uint64_t seed = 0;
  double ridge = 1e-3;          // ridge, relative to the mean coordinate variance
  int64_t max_tokens = 200000;  // validation tokens read (the first documents of the split)
  std::string corpus_path;      // Brown folder; empty = the data cache (as the run's data section)
};

// For every layer and head: the validation tokens inside words are run through the checkpoint's
// model; each token's key (or query) vector z ∈ R^Dh of the head, after RoPE and QK-norm, is a row.
// τ̂ is the variance of each coordinate, α̂ the squared ridge-probe weights of the word's level
// targets on z (as `gllm profiles` does on the embedding); both are summed over the two
// coordinates of each RoPE plane (the head grades are per plane; RoPE rotates within a plane, so
// a plane's energy does not depend on the position), giving α̂, τ̂ over Dh/2 planes. The bootstrap
// resamples sentences and refits. `log` gets progress lines.
grading::HeadProfiles estimate_head_profiles(
    const HeadProfileOptions& options, const std::function<void(const std::string&)>& log = {});

}  // namespace gllm
