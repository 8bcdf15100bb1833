// Building reference representations over the model's own vocabulary (seed 000 §7): PPMI/SVD on
// the training split's BPE tokens (the table's file and digest: grading/reference_table.h).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/corpus.h"
#include "engine/data/splits.h"
#include "engine/grading/reference_table.h"

namespace gllm {

class Tokenizer;
class TokenShard;

using grading::TokenReference;

struct TokenPpmiOptions {
  int d = 128;
  int min_count = 3;    // tokens seen fewer times in the training split get a zero row
  int contexts = 2000;  // context vocabulary: the most frequent tokens
  int window = 2;       // ± tokens within a document
  uint64_t seed = 0;    // SVD sketch
};

// PPMI (context smoothing 0.75) of co-occurrences within ± window inside each sequence (entries are
// row indices in [0, rows), or −1 for a unit without a row), contexts = rows [0, contexts), then a
// randomized truncated SVD (range finder, 3 power iterations) to width d: rows U·S^½ (rows × d).
// Deterministic from `seed`. Shared by the word-type and the token references.
Eigen::MatrixXd ppmi_svd(const std::vector<std::vector<int>>& sequences, int rows, int contexts,
                         int window, int d, uint64_t seed);

// PPMI (context smoothing 0.75) over token co-occurrence in the training documents (ids from the
// token cache), randomized truncated SVD to width d (rows U·S^½), then one scalar so the whole
// (V, d) table has RMS 1 (the N(0, 1) initialisation's scale, which leaves τ̂ and α̂ unchanged),
// rounded to float32 so a model initialised from it holds exactly these numbers.
TokenReference token_ppmi_reference(const std::vector<uint32_t>& train_documents,
                                    const TokenShard& shard, const Tokenizer& tokenizer,
                                    const TokenPpmiOptions& opt);

}  // namespace gllm
