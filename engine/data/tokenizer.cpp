// sentencepiece-backed BPE tokenizer: training with identity normalisation and byte fallback,
// loading, encode/decode, the per-token byte-length table and the model fingerprint.
#include "engine/data/tokenizer.h"

#include <dlfcn.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "engine/data/corpus.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/sha512.h"

// Debian's libsentencepiece carries its own protobuf 3.14 and exports its symbols; LibTorch loads
// the system protobuf 3.21. Linked together, the two clash while the program starts. So the
// sentencepiece libraries are opened at first use with RTLD_LOCAL | RTLD_DEEPBIND (each binds to
// its own protobuf, none enters the global scope). Processor methods are virtual and need no
// symbol; the constructor and the trainer are looked up by name; util::Status's few out-of-line
// members are defined below exactly as sentencepiece defines them (util.cc), so values it returns
// are destroyed and printed here without its symbols.
namespace sentencepiece {
namespace util {
struct Status::Rep {
  StatusCode code;
  std::string error_message;
};
Status::Status() {}
Status::~Status() {}
Status::Status(StatusCode code, absl::string_view error_message) : rep_(new Rep) {
  rep_->code = code;
  rep_->error_message = std::string(error_message);
}
Status::Status(const Status& s) : rep_((s.rep_ == nullptr) ? nullptr : new Rep(*s.rep_)) {}
StatusCode Status::code() const {
  return rep_ == nullptr ? StatusCode::kOk : rep_->code;
}
std::string Status::ToString() const {
  if (rep_ == nullptr) return "OK";
  return "sentencepiece error " + std::to_string(static_cast<int>(rep_->code)) + ": " +
         rep_->error_message;
}
}  // namespace util
}  // namespace sentencepiece

namespace gllm {

namespace {

struct SpmLibrary {
  using Ctor = void (*)(void*);
  using Train = sentencepiece::util::Status (*)(const std::unordered_map<std::string, std::string>&,
                                                sentencepiece::SentenceIterator*, std::string*);
  Ctor ctor = nullptr;
  Train train = nullptr;
  std::string error;
};

const SpmLibrary& spm_library() {
  static SpmLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
    void* core = dlopen("libsentencepiece.so.0", flags);
    if (!core) core = dlopen("libsentencepiece.so", flags);
    void* train = dlopen("libsentencepiece_train.so.0", flags);
    if (!train) train = dlopen("libsentencepiece_train.so", flags);
    if (!core || !train) {
      const char* e = dlerror();
      lib.error = std::string("cannot load the sentencepiece libraries (") + (e ? e : "not found") +
                  "); install libsentencepiece0 (scripts/setup does)";
      return;
    }
    lib.ctor = reinterpret_cast<SpmLibrary::Ctor>(
        dlsym(core, "_ZN13sentencepiece22SentencePieceProcessorC1Ev"));
    lib.train = reinterpret_cast<SpmLibrary::Train>(
        dlsym(train,
              "_ZN13sentencepiece20SentencePieceTrainer5TrainERKSt13unordered_mapINSt7__"
              "cxx1112basic_stringIcSt11char_"
              "traitsIcESaIcEEES7_St4hashIS7_ESt8equal_toIS7_ESaISt4pairIKS7_S7_EEEPNS_"
              "16SentenceIteratorEPS7_"));
    if (!lib.ctor || !lib.train)
      lib.error =
          "the sentencepiece library lacks the expected entry points; install libsentencepiece0 "
          "0.1.9x";
  });
  if (!lib.error.empty()) throw Error(lib.error);
  return lib;
}

struct ProcessorDeleter {
  void operator()(sentencepiece::SentencePieceProcessor* p) const {
    delete p;
  }  // virtual destructor
};
using ProcessorPtr = std::unique_ptr<sentencepiece::SentencePieceProcessor, ProcessorDeleter>;

ProcessorPtr new_processor() {
  const auto& lib = spm_library();
  void* raw = ::operator new(sizeof(sentencepiece::SentencePieceProcessor));
  lib.ctor(raw);
  return ProcessorPtr(static_cast<sentencepiece::SentencePieceProcessor*>(raw));
}

}  // namespace

struct Tokenizer::Impl {
  ProcessorPtr sp_owner = new_processor();
  sentencepiece::SentencePieceProcessor& sp = *sp_owner;
  std::string model;
  std::string hash;
  std::vector<int32_t> token_bytes;
  std::vector<std::string> token_text;  // raw bytes each token stands for (specials: empty)
  std::vector<uint8_t> special;         // control and unknown pieces
  int32_t bos = Tokenizer::kBos, pad = Tokenizer::kPad;
  bool workbench = true;  // the workbench's layout (specials 0–3, bytes from 4, identity)
};

namespace {

const std::string kSpace = "\xE2\x96\x81";  // U+2581, sentencepiece's whitespace marker

std::shared_ptr<const Tokenizer::Impl> make_impl(std::string model, const std::string& origin,
                                                 bool any_layout = false);

// Feeds the corpus to the trainer line by line (newlines are encoded through byte fallback).
class CorpusLines : public sentencepiece::SentenceIterator {
 public:
  explicit CorpusLines(const Corpus& c) : c_(c) { advance_to_valid(); }
  bool done() const override { return doc_ >= c_.documents.size(); }
  void Next() override {
    pos_ = next_ + 1;
    advance_to_valid();
  }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  void advance_to_valid() {
    while (doc_ < c_.documents.size()) {
      const std::string& t = c_.documents[doc_].text;
      if (pos_ > t.size()) {
        ++doc_;
        pos_ = 0;
        continue;
      }
      next_ = t.find('\n', pos_);
      if (next_ == std::string::npos) next_ = t.size();
      value_.assign(t, pos_, next_ - pos_);
      if (value_.empty()) {
        pos_ = next_ + 1;
        continue;
      }
      return;
    }
  }
  const Corpus& c_;
  size_t doc_ = 0, pos_ = 0, next_ = 0;
  std::string value_;
};

}  // namespace

Tokenizer::Tokenizer() = default;

namespace {
std::shared_ptr<const Tokenizer::Impl> make_impl(std::string model, const std::string& origin,
                                                 bool any_layout) {
  auto impl = std::make_shared<Tokenizer::Impl>();
  auto st = impl->sp.LoadFromSerializedProto(model);
  if (!st.ok())
    throw Error("cannot load tokenizer model " + origin + ": " + st.ToString() +
                "; delete it so that it is retrained");
  int n = impl->sp.GetPieceSize();
  impl->workbench = n > Tokenizer::kNumSpecial && impl->sp.unk_id() == Tokenizer::kUnk &&
                    impl->sp.bos_id() == Tokenizer::kBos && impl->sp.eos_id() == Tokenizer::kEos &&
                    impl->sp.pad_id() == Tokenizer::kPad && impl->sp.IsByte(Tokenizer::kNumSpecial);
  if (!impl->workbench && !any_layout)
    throw Error("tokenizer model " + origin +
                " does not have the workbench's layout (specials 0–3, bytes from 4); "
                "delete it so that it is retrained");
  if (!impl->workbench) {
    if (impl->sp.bos_id() < 0 || impl->sp.bos_id() >= n)
      throw Error("sentencepiece model " + origin +
                  " has no BOS piece (it was trained with --bos_id=-1); shards need a BOS before "
                  "each document so that their documents can be found");
    impl->bos = impl->sp.bos_id();
    impl->pad = impl->sp.pad_id() >= 0 ? impl->sp.pad_id()
                                       : (impl->sp.eos_id() >= 0 ? impl->sp.eos_id() : impl->bos);
  }
  impl->special.assign(size_t(n), 0);
  impl->token_bytes.resize(n);
  impl->token_text.resize(n);
  for (int id = 0; id < n; ++id) {
    std::string raw;
    if (impl->sp.IsControl(id) || impl->sp.IsUnknown(id) || impl->sp.IsUnused(id)) {
      raw.clear();
      impl->special[size_t(id)] = !impl->sp.IsUnused(id);
    } else if (impl->sp.IsByte(id)) {
      // "<0xNN>": its byte (the workbench's layout puts <0x00> … <0xFF> at 4 … 259).
      const std::string p = impl->sp.IdToPiece(id);
      const int value = p.size() == 6 ? int(std::strtol(p.substr(3, 2).c_str(), nullptr, 16)) : -1;
      if (value < 0 || value > 255 || (impl->workbench && value != id - Tokenizer::kNumSpecial))
        throw Error("tokenizer model " + origin + " has a byte piece '" + p + "' at id " +
                    std::to_string(id) + " that is not one of <0x00> … <0xFF> in order" +
                    (impl->workbench ? "; delete it so that it is retrained" : ""));
      raw.assign(1, static_cast<char>(value));
    } else {
      std::string p = impl->sp.IdToPiece(id);
      for (size_t i = 0; i < p.size();) {
        if (p.compare(i, kSpace.size(), kSpace) == 0) {
          raw += ' ';
          i += kSpace.size();
        } else {
          raw += p[i++];
        }
      }
    }
    impl->token_bytes[id] = static_cast<int32_t>(raw.size());
    impl->token_text[id] = std::move(raw);
  }
  auto digest = sha512(model);
  impl->hash = to_hex(digest.data(), digest.size());
  impl->model = std::move(model);
  return impl;
}

// The model file's bytes as a processor; `what` names the file in the message when it is not
// readable ("tokenizer model", "sentencepiece model").
std::shared_ptr<const Tokenizer::Impl> load_impl(const std::string& model_path, const char* what,
                                                 bool any_layout) {
  std::string bytes;
  try {
    bytes = read_file(model_path);
  } catch (const Error& e) {
    throw Error(std::string("cannot read ") + what + " " + model_path + " (" + e.what() + ")");
  }
  return make_impl(std::move(bytes), model_path, any_layout);
}
}  // namespace

Tokenizer Tokenizer::load(const std::string& model_path) {
  Tokenizer t;
  t.impl_ = load_impl(model_path, "tokenizer model", /*any_layout=*/false);
  return t;
}

Tokenizer Tokenizer::load_sentencepiece(const std::string& model_path) {
  Tokenizer t;
  t.impl_ = load_impl(model_path, "sentencepiece model", /*any_layout=*/true);
  return t;
}

Tokenizer Tokenizer::train(const Corpus& corpus, int vocab_size, const std::string& model_path,
                           int threads) {
  if (vocab_size < kNumSpecial + 256 + 1)
    throw Error("vocab_size " + std::to_string(vocab_size) +
                " is too small: byte fallback needs at least " + std::to_string(kNumSpecial + 257) +
                " (4 specials + 256 bytes + 1)");
  if (vocab_size > 65535)
    throw Error("vocab_size " + std::to_string(vocab_size) +
                " does not fit the uint16 token cache; use at most 65535");
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unordered_map<std::string, std::string> args = {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocab_size)},
      {"byte_fallback", "true"},
      {"character_coverage", "0.9999"},
      {"normalization_rule_name", "identity"},
      {"add_dummy_prefix", "false"},
      {"remove_extra_whitespaces", "false"},
      {"allow_whitespace_only_pieces", "true"},
      {"split_digits", "false"},
      {"max_sentence_length", "1048576"},
      {"max_sentencepiece_length", "16"},
      {"hard_vocab_limit", "false"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "3"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<bos>"},
      {"eos_piece", "<eos>"},
      {"pad_piece", "<pad>"},
      {"num_threads", std::to_string(threads)},
      {"minloglevel", "2"},
      {"model_prefix", ""},
  };
  CorpusLines lines(corpus);
  std::string model;
  auto st = spm_library().train(args, &lines, &model);
  if (!st.ok())
    throw Error("tokenizer training failed: " + st.ToString() +
                "; check that the corpus has enough text for vocab_size " +
                std::to_string(vocab_size));
  Tokenizer t;
  t.impl_ = make_impl(model, "(just trained)");
  write_file_atomic(model_path, t.impl_->model);
  return t;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  if (!impl_) throw Error("tokenizer used before it was loaded or trained");
  // sentencepiece reads a literal U+2581 as its whitespace marker; such characters are cut out
  // and encoded as their three byte pieces so that the round trip stays exact.
  std::vector<int32_t> out;
  std::vector<int> ids;
  if (!impl_->workbench) {  // a model made elsewhere: sentencepiece as it was made
    auto st = impl_->sp.Encode(text, &ids);
    if (!st.ok()) throw Error("tokenizer encode failed: " + st.ToString());
    return std::vector<int32_t>(ids.begin(), ids.end());
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t hit = text.find(kSpace, start);
    std::string_view part =
        text.substr(start, hit == std::string_view::npos ? std::string_view::npos : hit - start);
    if (!part.empty()) {
      auto st = impl_->sp.Encode(part, &ids);
      if (!st.ok()) throw Error("tokenizer encode failed: " + st.ToString());
      out.insert(out.end(), ids.begin(), ids.end());
    }
    if (hit == std::string_view::npos) break;
    for (unsigned char c : kSpace) out.push_back(kNumSpecial + c);
    start = hit + kSpace.size();
  }
  return out;
}

void Tokenizer::encode_cached(std::string_view text, EncodeCache& cache,
                              std::vector<int32_t>& out) const {
  // Words as sentencepiece splits them (allow_whitespace_only_pieces, no dummy prefix): a new one
  // starts at a space that follows something other than a space. No piece of the vocabulary
  // holds a space after another character, so no merge crosses that boundary.
  out.clear();
  if (!impl_ || !impl_->workbench) {  // words are the layout's: a model made elsewhere may merge
    out = encode(text);
    return;
  }
  std::string key;
  size_t start = 0;
  const size_t n = text.size();
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && !(text[i] == ' ' && text[i - 1] != ' ')) continue;
    const std::string_view word = text.substr(start, i - start);
    start = i;
    if (word.size() > cache.max_word_bytes) {
      const auto ids = encode(word);
      out.insert(out.end(), ids.begin(), ids.end());
      continue;
    }
    key.assign(word.data(), word.size());
    auto it = cache.words.find(key);
    if (it == cache.words.end()) {
      if (cache.words.size() >= cache.max_entries) cache.words.clear();
      it = cache.words.emplace(key, encode(word)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  if (!impl_) throw Error("tokenizer used before it was loaded or trained");
  // Concatenates each token's raw bytes (the same table token_bytes() measures); specials are
  // empty.
  std::string out;
  int n = vocab_size();
  for (int32_t id : ids) {
    if (id < 0 || id >= n)
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(n) + ")");
    out += impl_->token_text[id];
  }
  return out;
}

int Tokenizer::bos_id() const {
  return impl_ ? impl_->bos : kBos;
}
int Tokenizer::pad_id() const {
  return impl_ ? impl_->pad : kPad;
}
bool Tokenizer::is_special(int32_t id) const {
  if (!impl_) return id >= 0 && id < kNumSpecial;
  return id >= 0 && size_t(id) < impl_->special.size() && impl_->special[size_t(id)] != 0;
}
bool Tokenizer::workbench_layout() const {
  return !impl_ || impl_->workbench;
}

int Tokenizer::vocab_size() const {
  return impl_ ? impl_->sp.GetPieceSize() : 0;
}
std::string Tokenizer::piece(int32_t id) const {
  return impl_ ? impl_->sp.IdToPiece(id) : std::string();
}
const std::vector<int32_t>& Tokenizer::token_bytes() const {
  static const std::vector<int32_t> empty;
  return impl_ ? impl_->token_bytes : empty;
}
const std::string& Tokenizer::hash() const {
  static const std::string empty;
  return impl_ ? impl_->hash : empty;
}
const std::string& Tokenizer::model_bytes() const {
  static const std::string empty;
  return impl_ ? impl_->model : empty;
}

}  // namespace gllm
