// Byte-level BPE tokenizer (sentencepiece BPE, byte fallback, identity normalisation) with four
// reserved special ids, a per-token UTF-8 byte-length table for BPB, and exact round trips.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gllm {

struct Corpus;

// Vocabulary layout (fixed):
//   0 <unk>  (never produced: byte fallback covers every byte)   — special, 0 bytes
//   1 <bos>  (BOS: starts every packed document)                 — special, 0 bytes
//   2 <eos>  (reserved)                                          — special, 0 bytes
//   3 <pad>  (pads the tail of a finite evaluation batch)        — special, 0 bytes
//   4 … 259  the 256 byte pieces <0x00> … <0xFF>                 — 1 byte each
//   260 …    characters and merges                               — raw UTF-8 length
// Normalisation is the identity; whitespace is kept exactly, so decode(encode(s)) == s for any
// valid UTF-8 s (sentencepiece's internal ▁ maps back to one space byte).
// Encodings of whole words (a run of spaces and what follows it up to the next space), one per
// encoding thread: BPE never merges across such a boundary, so a text's ids are its words' ids.
struct EncodeCache {
  std::unordered_map<std::string, std::vector<int32_t>> words;
  size_t max_entries = size_t(1) << 18;  // cleared when full (memory stays bounded)
  size_t max_word_bytes = 64;            // longer words are encoded, not kept
};

class Tokenizer {
 public:
  static constexpr int32_t kUnk = 0, kBos = 1, kEos = 2, kPad = 3, kNumSpecial = 4;

  Tokenizer();
  // Loads a saved model (tokenizer.model) of the layout above; throws gllm::Error naming the file.
  static Tokenizer load(const std::string& model_path);
  // Loads any sentencepiece model that has a BOS piece (a model made elsewhere, whose shards are
  // imported): its own specials (control and unknown pieces, 0 bytes), BOS and pad ids (pad: its
  // <pad>, else </s>, else BOS; padding is never scored), byte pieces wherever they are. Encoding
  // goes through sentencepiece as the model was made (its normalisation, its dummy prefix).
  static Tokenizer load_sentencepiece(const std::string& model_path);
  // Trains on the corpus texts and writes the model atomically to `model_path`.
  static Tokenizer train(const Corpus& corpus, int vocab_size, const std::string& model_path,
                         int threads = 0);

  std::vector<int32_t> encode(std::string_view text) const;
  // The same ids as encode(text), each word's encoding looked up in `cache` first.
  void encode_cached(std::string_view text, EncodeCache& cache, std::vector<int32_t>& out) const;
  std::string decode(const std::vector<int32_t>& ids) const;

  int vocab_size() const;
  int bos_id() const;
  int pad_id() const;
  bool is_special(int32_t id) const;    // control and unknown pieces (the layout's 0–3)
  bool workbench_layout() const;        // the layout above (false: a model made elsewhere)
  std::string piece(int32_t id) const;  // sentencepiece piece text ("▁the", "<0x0A>")
  // Raw UTF-8 byte length of each token when decoded inside a text (specials 0, byte pieces 1).
  const std::vector<int32_t>& token_bytes() const;
  const std::string& hash() const;  // sha512 hex of the serialized model
  const std::string& model_bytes() const;

  struct Impl;  // sentencepiece processor and tables (tokenizer.cpp)

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace gllm
