// The trainer's entry point to data: reads the corpus a DataConfig names, trains or reuses the
// tokenizer and token cache in the data cache, and splits documents into train / val / held-out.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/data/packing_loader.h"
#include "engine/data/splits.h"
#include "engine/data/token_cache.h"
#include "engine/data/tokenizer.h"

namespace gllm {

struct DataConfig;
struct Corpus;

struct Dataset {
  Tokenizer tokenizer;
  std::shared_ptr<const TokenShard> shard;
  Splits splits;
  std::string cache_dir;  // <data cache>/tokens/<kind>-<corpus hash[:16]>-v<vocab>
  nlohmann::json info;    // the sidecar: documents, tokens, bytes, words, hashes
  bool rebuilt = false;   // true when this call trained/tokenized (false: reused the cache)

  // A loader over one split ("train" | "val" | "heldout"); contiguous windows train only.
  PackingLoader loader(const std::string& split, int64_t batch_rows, int64_t T,
                       PackingLoader::Mode mode, uint64_t seed = 0,
                       PackingLoader::Windows windows = PackingLoader::Windows::Documents) const;
  // Σ UTF-8 bytes of a split's documents (the BPB denominator of a full eval pass).
  int64_t split_bytes(const std::string& split) const;
};

// Reads the corpus, then reuses <cache>/tokenizer.model and tokens.{bin,json} when they match the
// corpus hash and vocab size, or trains / tokenizes and writes them atomically. `log` gets
// progress lines. Throws gllm::Error with the next step (e.g. "run `gllm data fetch`").
Dataset open_dataset(const DataConfig& cfg,
                     const std::function<void(const std::string&)>& log = {});
// The same for a corpus already read with read_corpus(cfg).
Dataset open_dataset(const DataConfig& cfg, const Corpus& corpus,
                     const std::function<void(const std::string&)>& log = {});

// Where the cache for a corpus hash and vocab size lives.
std::string token_cache_dir(const std::string& corpus_kind, const std::string& corpus_hash,
                            int vocab_size);

}  // namespace gllm
