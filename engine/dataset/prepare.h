// `gllm data prepare`: inputs → documents → split by content hash → BPE tokenizer trained on a
// sample of train documents → parallel encoding → llm.c shards → manifest.json; resumable.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/dataset/document_reader.h"

namespace gllm {

struct PrepareOptions {
  std::vector<std::string> inputs;  // files and folders
  std::string out_dir;              // the dataset folder
  std::string format = "auto";      // auto | text | jsonl
  DocumentReadOptions read;
  int vocab = 8192;                      // BPE vocabulary (≤ 65535: shards hold uint16)
  uint64_t tokenizer_sample = 10000000;  // characters of train documents the tokenizer sees
  uint64_t val_tokens = 1000000;         // validation split, tokens (BOS included)
  uint64_t heldout_tokens = 1000000;     // held-out split, tokens (BOS included)
  // When above 0, the evaluation splits are these fractions of all the inputs' tokens (BOS
  // included) instead of val_tokens / heldout_tokens; their sum is at most 0.5.
  double val_fraction = 0, heldout_fraction = 0;
  bool evaluation_by_fraction() const { return val_fraction > 0 || heldout_fraction > 0; }
  uint64_t shard_tokens = 100000000;  // tokens per shard (llm.c and modded-nanogpt: 1e8)
  int threads = 0;                    // encoder threads; 0 = the machine's cores
};

// One progress report: `stage` is "scan", "sample", "tokenizer", "encode" or "finish"; `done` and
// `total` count input bytes (scan) or documents (sample, encode); total 0 when unknown.
struct PrepareProgress {
  std::string stage;
  uint64_t done = 0, total = 0;
};

struct PrepareHooks {
  std::function<void(const std::string&)> log;           // one line of news
  std::function<void(const PrepareProgress&)> progress;  // often; keep it cheap
  const std::atomic<bool>* stop = nullptr;  // set: stop at the next document (resumable)
  // Tests: called after each train shard's journal entry is written (stop there to test resume).
  std::function<void(size_t shards_committed)> after_shard;
};

struct PrepareResult {
  nlohmann::json manifest;
  bool already_complete = false;  // the folder held this very dataset already; nothing written
  bool resumed = false;           // an unfinished prepare was continued
};

// Prepares (or continues preparing) `o.out_dir`. A folder with a manifest of the same inputs and
// options is left as it is (already_complete); one of other inputs or options is refused, never
// rewritten. Throws gllm::Error naming the problem and the fix; whatever a throw or a kill leaves
// behind is continued by the next call with the same arguments.
PrepareResult prepare_dataset(const PrepareOptions& o, const PrepareHooks& hooks = {});

// The options that decide a dataset's content, as the manifest records them.
nlohmann::json prepare_options_json(const PrepareOptions& o);

// Which part of the content-hash space a document falls in: the first 16 bits of its split hash.
inline uint32_t split_bucket(uint64_t split_hash) {
  return static_cast<uint32_t>(split_hash >> 48);
}

}  // namespace gllm
