// BOS-aligned best-fit packing loader (baseline.md §3.1) over a memory-mapped token shard, with
// per-epoch seeded shuffles and a JSON state (epoch, cursor, buffer) for exact resumption.
#include "engine/data/packing_loader.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "engine/data/splits.h"
#include "engine/io/error.h"

namespace gllm {

std::vector<int64_t> Batch::inputs_int64() const {
  std::vector<int64_t> out(static_cast<size_t>(rows * T));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < T; ++t) out[r * T + t] = tokens[r * (T + 1) + t];
  return out;
}

std::vector<int64_t> Batch::targets_int64() const {
  std::vector<int64_t> out(static_cast<size_t>(rows * T));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < T; ++t) out[r * T + t] = tokens[r * (T + 1) + t + 1];
  return out;
}

PackingLoader::PackingLoader(std::shared_ptr<const TokenShard> shard,
                             std::vector<uint32_t> documents, int64_t batch_rows, int64_t T,
                             Mode mode, uint64_t seed, int32_t bos_id, int32_t pad_id,
                             size_t buffer_units, Windows windows)
    : shard_(std::move(shard)),
      documents_(std::move(documents)),
      B_(batch_rows),
      T_(T),
      mode_(mode),
      seed_(seed),
      bos_(bos_id),
      pad_(pad_id),
      buffer_units_(buffer_units),
      windows_(windows) {
  if (!shard_) throw Error("PackingLoader needs a token shard");
  if (windows_ == Windows::Contiguous && mode_ == Mode::Eval)
    throw Error("PackingLoader: contiguous windows are for training; evaluation packs documents");
  if (B_ < 1 || T_ < 1)
    throw Error("PackingLoader: batch rows and T must be ≥ 1 (got " + std::to_string(B_) + ", " +
                std::to_string(T_) + ")");
  if (buffer_units_ < 1) buffer_units_ = 1;
  for (uint32_t d : documents_) {
    if (d >= shard_->num_documents())
      throw Error("PackingLoader: document " + std::to_string(d) + " is not in the token cache (" +
                  std::to_string(shard_->num_documents()) + " documents)");
    size_t n = shard_->document(d).size;
    for (size_t b = 0; b < n; b += static_cast<size_t>(T_))
      units_.push_back(Unit{d, static_cast<uint32_t>(b),
                            static_cast<uint32_t>(std::min(n, b + static_cast<size_t>(T_)))});
  }
  if (units_.empty())
    throw Error("PackingLoader: the split has no tokens; check the corpus and the split fractions");
  if (mode_ == Mode::Train) buffer_units_ = std::min(buffer_units_, units_.size());
  reset();
}

size_t PackingLoader::unit_tokens() const {
  size_t n = 0;
  for (const auto& u : units_) n += u.length();
  return n;
}

void PackingLoader::start_epoch() {
  order_.resize(windows_ == Windows::Contiguous ? documents_.size() : units_.size());
  std::iota(order_.begin(), order_.end(), 0u);
  if (mode_ == Mode::Train) {
    SplitMix64 rng(seed_ * 0x9E3779B97F4A7C15ull +
                   static_cast<uint64_t>(epoch_) * 0xD1B54A32D192ED03ull + 0x10ADull);
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
  }
  cursor_ = 0;
  offset_ = 0;
}

void PackingLoader::reset() {
  epoch_ = 0;
  batches_ = 0;
  buffer_.clear();
  carry_ = -1;
  start_epoch();
}

void PackingLoader::refill() {
  while (buffer_.size() < buffer_units_) {
    if (cursor_ >= order_.size()) {
      if (mode_ == Mode::Eval) return;
      ++epoch_;
      start_epoch();
    }
    buffer_.push_back(order_[cursor_++]);
  }
}

bool PackingLoader::next_contiguous(Batch& out) {
  const int64_t W = T_ + 1;
  out.T = T_;
  out.rows = B_;
  out.tokens.resize(static_cast<size_t>(B_ * W));
  for (int64_t r = 0; r < B_; ++r) {
    int32_t* row = out.tokens.data() + r * W;
    int64_t pos = 0;
    if (carry_ >= 0) row[pos++] = carry_;
    while (pos < W) {
      if (cursor_ >= order_.size()) {
        ++epoch_;
        start_epoch();
      }
      const auto view = shard_->document(documents_[order_[cursor_]]);
      if (offset_ == 0) {
        row[pos++] = bos_;
        offset_ = 1;
        continue;
      }
      const size_t left = view.size + 1 - offset_;  // tokens of this document not yet read
      const size_t take = std::min<size_t>(left, static_cast<size_t>(W - pos));
      for (size_t k = 0; k < take; ++k) row[pos + k] = view.data[offset_ - 1 + k];
      pos += static_cast<int64_t>(take);
      offset_ += take;
      if (offset_ == view.size + 1) {
        ++cursor_;
        offset_ = 0;
      }
    }
    carry_ = row[W - 1];
  }
  ++batches_;
  return true;
}

bool PackingLoader::next(Batch& out) {
  if (windows_ == Windows::Contiguous) return next_contiguous(out);
  const int64_t W = T_ + 1;
  out.T = T_;
  out.rows = 0;
  out.tokens.assign(static_cast<size_t>(B_ * W), pad_);
  for (int64_t r = 0; r < B_; ++r) {
    int32_t* row = out.tokens.data() + r * W;
    int64_t pos = 0;
    while (pos < W) {
      refill();
      if (buffer_.empty()) break;  // Eval pass exhausted: the rest of the row stays <pad>
      int64_t remaining = W - pos;
      int best = -1;
      int64_t best_len = 0;
      for (size_t i = 0; i < buffer_.size(); ++i) {
        int64_t len = units_[buffer_[i]].length();
        if (len <= remaining && len > best_len) {
          best = static_cast<int>(i);
          best_len = len;
        }
      }
      int64_t take;
      size_t idx;
      if (best >= 0) {
        idx = static_cast<size_t>(best);
        take = best_len;
      } else if (mode_ == Mode::Eval) {
        break;  // nothing fits: pad the rest so every token is scored once
      } else {
        idx = 0;  // crop the shortest unit (first on ties)
        for (size_t i = 1; i < buffer_.size(); ++i)
          if (units_[buffer_[i]].length() < units_[buffer_[idx]].length()) idx = i;
        take = remaining;
      }
      const Unit& u = units_[buffer_[idx]];
      auto view = shard_->document(u.doc);
      row[pos] = bos_;
      for (int64_t k = 1; k < take; ++k) row[pos + k] = view.data[u.begin + k - 1];
      pos += take;
      buffer_.erase(buffer_.begin() + static_cast<std::ptrdiff_t>(idx));
    }
    if (pos == 0) break;  // no tokens left for this row (Eval only)
    ++out.rows;
  }
  if (out.rows == 0) return false;
  out.tokens.resize(static_cast<size_t>(out.rows * W));
  ++batches_;
  return true;
}

uint64_t PackingLoader::fingerprint() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<uint64_t>(B_));
  mix(static_cast<uint64_t>(T_));
  mix(mode_ == Mode::Train ? 1 : 2);
  if (windows_ == Windows::Contiguous) mix(3);  // (documents: the fingerprint of before)
  mix(seed_);
  mix(buffer_units_);
  mix(shard_->num_tokens());
  for (const auto& u : units_) {
    mix(u.doc);
    mix(u.begin);
    mix(u.end);
  }
  return h;
}

nlohmann::json PackingLoader::state() const {
  char fp[17];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(fingerprint()));
  nlohmann::json s = {{"format", 1},       {"fingerprint", fp}, {"epoch", epoch_},
                      {"cursor", cursor_}, {"buffer", buffer_}, {"batches", batches_}};
  if (windows_ == Windows::Contiguous) {
    s["offset"] = offset_;
    s["carry"] = carry_;
  }
  return s;
}

void PackingLoader::restore(const nlohmann::json& s) {
  char fp[17];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(fingerprint()));
  try {
    if (s.at("format").get<int>() != 1) throw Error("unknown loader state format");
    if (s.at("fingerprint").get<std::string>() != fp)
      throw Error(
          "the saved loader state belongs to different data, batch size, T, mode or seed "
          "(fingerprint " +
          s.at("fingerprint").get<std::string>() + " ≠ " + fp +
          "); resume with the run's own config and corpus, or start a new run");
    int64_t epoch = s.at("epoch").get<int64_t>();
    size_t cursor = s.at("cursor").get<size_t>();
    if (windows_ == Windows::Contiguous) {
      const size_t offset = s.at("offset").get<size_t>();
      const int32_t carry = s.at("carry").get<int32_t>();
      const int64_t batches = s.at("batches").get<int64_t>();
      if (epoch < 0) throw Error("loader state out of range");
      if (batches < 0) throw Error("loader state out of range (a negative batch count)");
      // The position is checked against the saved epoch's order before anything changes: a
      // refused state leaves the loader as it was.
      const int64_t kept_epoch = epoch_;
      const size_t kept_cursor = cursor_, kept_offset = offset_;
      std::vector<uint32_t> kept_order = order_;
      epoch_ = epoch;
      start_epoch();
      if (cursor > order_.size() ||
          (cursor < order_.size() && offset > shard_->document(documents_[order_[cursor]]).size)) {
        epoch_ = kept_epoch;
        order_ = std::move(kept_order);
        cursor_ = kept_cursor;
        offset_ = kept_offset;
        throw Error("loader state out of range (a position past its document)");
      }
      cursor_ = cursor;
      offset_ = offset;
      carry_ = carry;
      batches_ = batches;
      return;
    }
    auto buffer = s.at("buffer").get<std::vector<uint32_t>>();
    if (epoch < 0 || cursor > units_.size() || buffer.size() > buffer_units_)
      throw Error("loader state out of range");
    for (uint32_t u : buffer)
      if (u >= units_.size()) throw Error("loader state names a unit that does not exist");
    const int64_t batches = s.at("batches").get<int64_t>();
    if (batches < 0) throw Error("loader state out of range (a negative batch count)");
    // A training loader refills its buffer before every unit it takes, so after any batch it
    // holds exactly buffer_units − 1 units; a different count is not a state it was in, and
    // resuming from it would not reproduce the run.
    if (mode_ == Mode::Train && batches > 0 && buffer_units_ > 0 &&
        buffer.size() + 1 != buffer_units_)
      throw Error("loader state holds " + std::to_string(buffer.size()) +
                  " buffered units where a training loader after a batch holds " +
                  std::to_string(buffer_units_ - 1) +
                  "; the checkpoint's loader state is damaged — resume from an earlier checkpoint");
    epoch_ = epoch;
    start_epoch();
    cursor_ = cursor;
    buffer_ = std::move(buffer);
    batches_ = batches;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("loader state is not valid JSON of the expected shape (") + e.what() +
                "); the checkpoint's data_state may be damaged");
  }
}

}  // namespace gllm
