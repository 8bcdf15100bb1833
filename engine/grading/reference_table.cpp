// Token reference tables (reference_table.h): digest of the float32 table and its safetensors file
// with metadata, checked on read.
#include "engine/grading/reference_table.h"

#include <cmath>
#include <vector>

#include "engine/io/error.h"
#include "engine/io/safetensors.h"
#include "engine/io/sha512.h"

namespace gllm::grading {

namespace {

std::vector<float> float_rows(const Eigen::MatrixXd& m) {
  std::vector<float> out(static_cast<size_t>(m.rows() * m.cols()));
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t j = 0; j < m.cols(); ++j)
      out[static_cast<size_t>(i * m.cols() + j)] = static_cast<float>(m(i, j));
  return out;
}

}  // namespace

std::string table_digest(const float* data, size_t count) {
  const auto h =
      sha512(std::string_view(reinterpret_cast<const char*>(data), count * sizeof(float)));
  return to_hex(h.data(), 16);
}

std::string TokenReference::digest() const {
  const std::vector<float> f = float_rows(vectors);
  return table_digest(f.data(), f.size());
}

void save_token_reference(const std::string& path, const TokenReference& r) {
  const std::vector<float> f = float_rows(r.vectors);
  StTensorIn t{"reference",
               StDtype::F32,
               {r.vectors.rows(), r.vectors.cols()},
               f.data(),
               f.size() * sizeof(float)};
  write_safetensors(path, {t},
                    {{"format", "gllm-token-reference/1"},
                     {"kind", r.kind},
                     {"digest", r.digest()},
                     {"tokenizer_hash", r.tokenizer_hash},
                     {"scale", std::to_string(r.scale)},
                     {"kept_tokens", std::to_string(r.kept_tokens)},
                     {"meta", r.meta.dump()}});
}

TokenReference load_token_reference(const std::string& path) {
  auto file = SafetensorsFile::open(path);
  const auto& meta = file.metadata();
  auto get = [&](const char* k) {
    auto it = meta.find(k);
    return it == meta.end() ? std::string() : it->second;
  };
  if (get("format") != "gllm-token-reference/1" || !file.has("reference"))
    throw Error(path +
                " is not a token reference file (format gllm-token-reference/1 with a tensor "
                "\"reference\"); write it with `gllm profiles --reference token_ppmi`");
  const auto& info = file.info("reference");
  if (info.dtype != StDtype::F32 || info.shape.size() != 2 || info.shape[0] < 1 ||
      info.shape[1] < 1)
    throw Error(path +
                ": tensor \"reference\" must be a non-empty F32 matrix (V, d); regenerate "
                "it with `gllm profiles --reference token_ppmi`");
  const int64_t V = info.shape[0], d = info.shape[1];
  const std::vector<float> f = file.to_float("reference");
  TokenReference r;
  r.kind = get("kind");
  r.tokenizer_hash = get("tokenizer_hash");
  r.vectors.resize(V, d);
  for (int64_t i = 0; i < V; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const float x = f[static_cast<size_t>(i * d + j)];
      if (!std::isfinite(x))
        throw Error(path + ": the reference has a non-finite value at row " + std::to_string(i) +
                    "; regenerate it");
      r.vectors(i, j) = x;
    }
  try {
    r.scale = std::stod(get("scale"));
    r.kept_tokens = std::stoll(get("kept_tokens"));
    if (!get("meta").empty()) r.meta = nlohmann::json::parse(get("meta"));
  } catch (const std::exception&) {
    throw Error(path + ": damaged metadata (scale, kept_tokens or meta); regenerate the file");
  }
  if (get("digest") != r.digest())
    throw Error(path + ": the reference's bytes do not match the digest recorded in the file (" +
                get("digest") + "); the file was altered — regenerate it with `gllm profiles`");
  return r;
}

}  // namespace gllm::grading
