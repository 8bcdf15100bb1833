// Batch loader: BOS-aligned best-fit packing of documents into rows of T+1 tokens (baseline.md
// §3.1), deterministic from a seed, with a JSON-serialisable state for exact resumption.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/data/token_cache.h"

namespace gllm {

// One batch: B rows of T+1 token ids, row-major. inputs = row[:, :-1], targets = row[:, 1:].
struct Batch {
  int64_t rows = 0;  // B (an evaluation batch may have fewer rows at the end)
  int64_t T = 0;
  std::vector<int32_t> tokens;                 // (rows, T+1)
  std::vector<int64_t> inputs_int64() const;   // (rows, T)
  std::vector<int64_t> targets_int64() const;  // (rows, T)
};

// Packing units: each document becomes BOS + its tokens; a document longer than T tokens is first
// cut into consecutive BOS-led pieces of at most T+1 tokens, so no text is lost to cropping
// (Brown's documents, ~2.9k tokens, would otherwise keep only their first row). Each row is filled
// by repeatedly placing the longest unit in the buffer that fits; when none fits, training crops
// the shortest unit to fill the row (its rest is dropped, as the baseline does), evaluation instead
// pads the row with <pad> (0 bytes, so BPB ignores it) so that every token is scored exactly once.
// Contiguous windows (training only, the way llm.c and modded-nanogpt read their shards): the
// epoch's shuffled documents, each BOS + its tokens, as one stream cut into consecutive windows of
// T+1 tokens that cross document boundaries; a window starts with the last token of the one
// before, so every token is a target exactly once.
class PackingLoader {
 public:
  enum class Mode { Train, Eval };
  enum class Windows { Documents, Contiguous };
  // Train: endless, units shuffled per epoch from `seed`; buffer of `buffer_units` units.
  // Eval: one pass in document order, finite, deterministic.
  PackingLoader(std::shared_ptr<const TokenShard> shard, std::vector<uint32_t> documents,
                int64_t batch_rows, int64_t T, Mode mode, uint64_t seed = 0, int32_t bos_id = 1,
                int32_t pad_id = 3, size_t buffer_units = 1000,
                Windows windows = Windows::Documents);

  // Fills `out`; false when an Eval pass is exhausted (never false in Train mode).
  bool next(Batch& out);

  // Cursor state: epoch, position in the epoch's order, buffer contents, rows produced.
  nlohmann::json state() const;
  // Restores a state() taken from a loader built with the same shard, documents, B, T, mode and
  // seed; throws gllm::Error if the state does not belong to this loader.
  void restore(const nlohmann::json& state);
  void reset();  // back to the start (Eval: a new pass)

  size_t num_units() const { return units_.size(); }
  size_t unit_tokens() const;  // Σ unit lengths (tokens incl. BOS) in one epoch
  int64_t batches_produced() const { return batches_; }
  int64_t epoch() const { return epoch_; }

 private:
  struct Unit {
    uint32_t doc;
    uint32_t begin, end;  // token range inside the document (BOS not included)
    uint32_t length() const { return end - begin + 1; }
  };
  void refill();
  void start_epoch();
  bool next_contiguous(Batch& out);
  uint64_t fingerprint() const;

  std::shared_ptr<const TokenShard> shard_;
  std::vector<uint32_t> documents_;
  int64_t B_, T_;
  Mode mode_;
  uint64_t seed_;
  int32_t bos_, pad_;
  size_t buffer_units_;
  std::vector<Unit> units_;
  std::vector<uint32_t> order_;   // unit indices of the current epoch
  size_t cursor_ = 0;             // next position in order_
  std::vector<uint32_t> buffer_;  // unit indices waiting to be packed
  int64_t epoch_ = 0;
  int64_t batches_ = 0;
  // Contiguous windows: order_ is over documents_, cursor_ the document being read, offset_ the
  // next position in BOS + its tokens (0 = its BOS), carry_ the token that starts the next window.
  Windows windows_;
  size_t offset_ = 0;
  int32_t carry_ = -1;
};

}  // namespace gllm
