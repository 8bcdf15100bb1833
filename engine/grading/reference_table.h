// The token reference table a profiles file lives in (seed 000 §7: where a certificate lives): one
// row per BPE token (V × d), its digest, and its file; torch-free so the model can start from it.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace gllm::grading {

// One row per token id of the tokenizer (V × d). Rows of tokens the reference never saw are 0.
struct TokenReference {
  std::string kind;         // "token_ppmi" | "wte"
  Eigen::MatrixXd vectors;  // (V, d), float32-representable values
  double scale = 1;         // token_ppmi: the factor that brought the SVD rows to RMS 1
  int64_t kept_tokens = 0;  // rows with a vector (token_ppmi: seen ≥ min_count times)
  std::string tokenizer_hash;
  nlohmann::json meta = nlohmann::json::object();  // window, contexts, checkpoint, step, …
  // sha512 (hex, 32 chars) of the float32 bytes of `vectors`, row-major: what a model's W_e must
  // equal to be "in" this reference.
  std::string digest() const;
};

// Digest of a float32 table (row-major), as TokenReference::digest computes it.
std::string table_digest(const float* data, size_t count);

// Safetensors file with one F32 tensor "reference" (V, d) and metadata (kind, digest, tokenizer).
void save_token_reference(const std::string& path, const TokenReference& r);
// Reads and checks it (shape, finiteness, the digest recorded in the file).
TokenReference load_token_reference(const std::string& path);

}  // namespace gllm::grading
