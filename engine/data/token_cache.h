// Token cache: every document tokenized once into a memory-mapped binary shard (uint16 ids +
// document offsets) with a JSON sidecar; rebuilt only when the corpus or the tokenizer changes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

struct Corpus;
class Tokenizer;

// tokens.bin, little-endian:
//   char[8] "GLLMTOK1" | uint64 n_docs | uint64 n_tokens | uint64 offsets[n_docs+1] |
//   uint16 ids[n_tokens]
// Document i is ids[offsets[i] .. offsets[i+1]) without BOS (the loader adds it).
// tokens.json: {"format":1, "tokenizer_hash", "corpus_hash", "vocab_size", "documents",
//   "tokens", "bytes", "words", "bin_bytes", "bin_sha512", "names":[…]}
class TokenShard {
 public:
  struct View {
    const uint16_t* data = nullptr;
    size_t size = 0;
  };
  // Memory-maps tokens.bin; throws gllm::Error (naming the file) if missing or malformed.
  static std::shared_ptr<TokenShard> open(const std::string& bin_path);
  // A store over documents that lie elsewhere (e.g. the memory-mapped llm.c shards of a prepared
  // dataset, kept alive by `owners`): document i is views[i], without its BOS.
  static std::shared_ptr<TokenShard> over_views(std::vector<View> views,
                                                std::vector<std::shared_ptr<const void>> owners,
                                                std::string label);
  ~TokenShard();
  TokenShard(const TokenShard&) = delete;
  TokenShard& operator=(const TokenShard&) = delete;

  size_t num_documents() const { return n_docs_; }
  size_t num_tokens() const { return n_tokens_; }
  uint16_t max_id() const { return max_id_; }  // largest token id stored (0 when empty)
  View document(size_t i) const;               // i < num_documents()
  const std::string& path() const { return path_; }

 private:
  TokenShard() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  size_t n_docs_ = 0, n_tokens_ = 0;
  const uint64_t* offsets_ = nullptr;
  const uint16_t* ids_ = nullptr;
  uint16_t max_id_ = 0;
  std::vector<View> views_;  // over_views: the documents (else empty)
  std::vector<std::shared_ptr<const void>> owners_;
};

// Layout of a tokens.bin image, checked without trusting any count in it: every size is
// compared with the image's length before it is used, so no count can overflow or point past
// the end. Throws gllm::Error "<label>: … malformed (<why>) …".
struct TokenShardLayout {
  uint64_t n_docs = 0, n_tokens = 0;
  size_t ids_offset = 0;  // bytes from the start to ids[0]
};
TokenShardLayout check_token_shard(const unsigned char* data, size_t size,
                                   const std::string& label);

// Writes tokens.bin and tokens.json atomically for `corpus` under `tokenizer`.
nlohmann::json write_token_cache(const Corpus& corpus, const Tokenizer& tokenizer,
                                 const std::string& bin_path, const std::string& json_path,
                                 int threads = 0);

// True when the sidecar exists and names this corpus hash and tokenizer hash.
bool token_cache_current(const std::string& json_path, const std::string& corpus_hash,
                         const std::string& tokenizer_hash);
// Empty when tokens.bin matches the size and SHA-512 its sidecar records, else why not.
std::string token_cache_mismatch(const std::string& bin_path, const std::string& json_path);

}  // namespace gllm
