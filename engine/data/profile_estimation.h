// Profile estimation (seed 000 §7.1–§7.3) on the Brown corpus: a reference representation (PPMI +
// truncated SVD over word types or BPE tokens, or a checkpoint's W_e·G), the graded basis P, τ̂, α̂
// from ridge probes, per-level targets and BC, bootstrap over sentences, held-out profiles and
// part-of-speech grades.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/data/corpus.h"
#include "engine/data/splits.h"
#include "engine/data/token_reference.h"
#include "engine/grading/profiles.h"

namespace gllm {

class Tokenizer;
class TokenShard;

struct ProfileOptions {
  int d = 128;     // width of the reference representation
  int levels = 4;  // L ≤ 4 (Brown levels 0 … L−1); d_l = d / L (+1 for the first d mod L)
  // ppmi: PPMI/SVD over lower-cased word types (coordinates no model has); token_ppmi: PPMI/SVD
  // over the run's BPE tokens (route 1, a model can start from it); wte: a checkpoint's W_e·G
  // (route 2), given as token_reference.
  std::string reference = "ppmi";
  std::string checkpoint;  // wte: the run folder or weights file (provenance)
  std::string wte_name;  // wte: tensor name (empty = "wte", "wte.weight", "transformer.wte.weight")
  // token_ppmi / wte: the token reference to estimate in (not owned); token_ppmi builds one from
  // the training split when null.
  const TokenReference* token_reference = nullptr;
  std::string target = "mixture";  // noun | verb_distance | negation | document_position | mixture
  int bootstrap = 100;             // resamples over sentences (0 = none)
  uint64_t seed = 0;
  double ridge = 1e-3;  // ridge, relative to the mean coordinate variance
  int min_count = 3;    // PPMI: word types seen at least this often (lower-cased)
  int max_types = 12000;
  int contexts = 2000;  // PPMI context vocabulary (most frequent types)
  int window = 2;       // PPMI: ± window within a sentence
  int threads = 0;
};

// Static type embeddings: lower-cased word type → row of `vectors` (types × d).
struct TypeEmbeddings {
  std::vector<std::string> types;
  Eigen::MatrixXd vectors;
  std::unordered_map<std::string, int> rows;       // type → row
  int index(const std::string& lower_word) const;  // −1 when unknown
};

// PPMI co-occurrence (context smoothing 0.75) over the given documents + randomized truncated SVD
// to width d (embedding = U·S^½). Deterministic from `seed`.
TypeEmbeddings ppmi_embeddings(const Corpus& corpus, const std::vector<uint32_t>& documents,
                               const ProfileOptions& opt);

// Graded basis (§7.1): for each level, the cross-covariance S_l between the centred representation
// and the standardised features (the fitted directions of the regression of φ_l onto the
// representation, mapped to R^d: Σ_X W_l W_lᵀ Σ_X = S_l S_lᵀ), projected off the directions already
// chosen, leading d_l eigenvectors; Gram–Schmidt across levels. Returns d × d with orthonormal
// columns, level 0's first.
Eigen::MatrixXd graded_basis(const std::vector<Eigen::MatrixXd>& level_cross_cov,
                             const std::vector<int>& level_dims);

struct ProfileResult {
  grading::ProfilesFile file;  // everything `gllm profiles` writes
  nlohmann::json report;       // sizes, timings, BC per target, bootstrap summaries
  TokenReference reference;    // token_ppmi: the reference built (save it beside the profiles)
};

// The whole pipeline on a Brown corpus (needs sentences and tags). `tokenizer` + `shard` (optional)
// add per-token output grades from part-of-speech statistics to meta.output_grades.
ProfileResult estimate_profiles(const Corpus& corpus, const Splits& splits,
                                const ProfileOptions& opt, const Tokenizer* tokenizer = nullptr,
                                const TokenShard* shard = nullptr,
                                const std::function<void(const std::string&)>& log = {});

// For each token of `doc` (ids from the token cache, byte lengths from the tokenizer) the index of
// the word it starts inside, counting the document's words in order (sentence by sentence), or −1
// for tokens that are only spacing or specials.
std::vector<int> align_tokens_to_words(const Document& doc, const uint16_t* ids, size_t n,
                                       const std::vector<int32_t>& token_bytes);

// Weighted ridge probes sharing one Gram matrix: columns of Y are targets; α̂ per target.
std::vector<std::vector<double>> probe_alphas(const Eigen::MatrixXd& Z, const Eigen::MatrixXd& Y,
                                              const Eigen::VectorXd& weights, double ridge_rel);

// Ridge probe in the basis: α̂_j = ŵ_j² / ‖ŵ‖² with ŵ = (ZᵀWZ + r·I)⁻¹ ZᵀW y on centred Z, y.
std::vector<double> probe_alpha(const Eigen::MatrixXd& Z, const Eigen::VectorXd& y,
                                const Eigen::VectorXd& weights, double ridge_rel);
// The same probes and τ̂ when row i of Z is row type[i] of Zt (static type embeddings): the
// weighted Gram matrix and cross moments are summed per type first, so a bootstrap resample costs
// O(types · d²) instead of O(tokens · d²). Returns the α̂ of each column of Y, then τ̂ last.
std::vector<std::vector<double>> probe_by_type(const Eigen::MatrixXd& Zt,
                                               const std::vector<int>& type,
                                               const Eigen::MatrixXd& Y,
                                               const Eigen::VectorXd& weights, double ridge_rel);
// τ̂_j = σ̂_j² / Σσ̂_k² of the columns of Z (weighted).
std::vector<double> variance_tau(const Eigen::MatrixXd& Z, const Eigen::VectorXd& weights);

}  // namespace gllm
