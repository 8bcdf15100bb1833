// Token cache: parallel tokenization of all documents into tokens.bin (uint16 ids + offsets,
// written atomically) with its tokens.json sidecar, and a read-only memory map for batching.
#include "engine/data/token_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "engine/data/corpus.h"
#include "engine/data/tokenizer.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/sha512.h"

namespace gllm {

namespace {
constexpr char kMagic[8] = {'G', 'L', 'L', 'M', 'T', 'O', 'K', '1'};
}

TokenShardLayout check_token_shard(const unsigned char* p, size_t size, const std::string& label) {
  auto bad = [&](const std::string& why) {
    return Error("token cache " + label + " is malformed (" + why +
                 "); delete it so that it is rebuilt");
  };
  if (size < 32) throw bad("too short");
  if (std::memcmp(p, kMagic, 8) != 0) throw bad("wrong magic");
  TokenShardLayout l;
  std::memcpy(&l.n_docs, p + 8, 8);
  std::memcpy(&l.n_tokens, p + 16, 8);
  // (n_docs + 1) offsets of 8 bytes after the 24-byte head must fit; compared by division so
  // that no count can overflow.
  if (l.n_docs > (size - 24) / 8 - 1) throw bad("document count larger than the file");
  l.ids_offset = 24 + (static_cast<size_t>(l.n_docs) + 1) * 8;
  const size_t id_bytes = size - l.ids_offset;
  if (id_bytes % 2 != 0 || l.n_tokens != id_bytes / 2)
    throw bad("sizes do not match the file length");
  uint64_t prev = 0;
  for (uint64_t i = 0; i <= l.n_docs; ++i) {
    uint64_t o = 0;
    std::memcpy(&o, p + 24 + i * 8, 8);
    if (i == 0 && o != 0) throw bad("offsets do not start at 0");
    if (o < prev) throw bad("offsets decrease");
    prev = o;
  }
  if (prev != l.n_tokens) throw bad("offsets do not span the tokens");
  return l;
}

std::shared_ptr<TokenShard> TokenShard::open(const std::string& bin_path) {
  int fd = ::open(bin_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO: no wait
  if (fd < 0)
    throw Error("cannot open token cache " + bin_path + ": " + std::strerror(errno) +
                "; run `gllm data info` to rebuild it");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("token cache " + bin_path +
                " is not a regular file; delete it so that it is rebuilt");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < 32) {
    ::close(fd);
    throw Error("token cache " + bin_path +
                " is malformed (too short); delete it so that it is rebuilt");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED)
    throw Error("cannot memory-map token cache " + bin_path + ": " + std::strerror(errno));
  std::shared_ptr<TokenShard> s(new TokenShard());
  s->path_ = bin_path;
  s->map_ = map;
  s->map_size_ = size;
  const auto* p = static_cast<const unsigned char*>(map);
  const TokenShardLayout l = check_token_shard(p, size, bin_path);
  s->n_docs_ = l.n_docs;
  s->n_tokens_ = l.n_tokens;
  s->offsets_ = reinterpret_cast<const uint64_t*>(p + 24);
  s->ids_ = reinterpret_cast<const uint16_t*>(p + l.ids_offset);
  for (size_t i = 0; i < s->n_tokens_; ++i) s->max_id_ = std::max(s->max_id_, s->ids_[i]);
  return s;
}

TokenShard::~TokenShard() {
  if (map_) munmap(map_, map_size_);
}

std::shared_ptr<TokenShard> TokenShard::over_views(std::vector<View> views,
                                                   std::vector<std::shared_ptr<const void>> owners,
                                                   std::string label) {
  std::shared_ptr<TokenShard> s(new TokenShard());
  s->path_ = std::move(label);
  s->n_docs_ = views.size();
  for (const auto& v : views) {
    s->n_tokens_ += v.size;
    for (size_t i = 0; i < v.size; ++i) s->max_id_ = std::max(s->max_id_, v.data[i]);
  }
  s->views_ = std::move(views);
  s->owners_ = std::move(owners);
  return s;
}

TokenShard::View TokenShard::document(size_t i) const {
  if (i >= n_docs_) throw Error("document index " + std::to_string(i) + " out of range");
  if (!views_.empty()) return views_[i];
  return View{ids_ + offsets_[i], static_cast<size_t>(offsets_[i + 1] - offsets_[i])};
}

nlohmann::json write_token_cache(const Corpus& corpus, const Tokenizer& tokenizer,
                                 const std::string& bin_path, const std::string& json_path,
                                 int threads) {
  size_t nd = corpus.documents.size();
  std::vector<std::vector<uint16_t>> ids(nd);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<size_t>(threads, std::max<size_t>(1, nd)));
  std::vector<std::string> errors(threads);
  auto work = [&](int w) {
    try {
      for (size_t i = w; i < nd; i += threads) {
        auto v = tokenizer.encode(corpus.documents[i].text);
        ids[i].assign(v.begin(), v.end());
      }
    } catch (const std::exception& e) {
      errors[w] = e.what();
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (!e.empty()) throw Error("tokenizing the corpus failed: " + e);

  std::vector<uint64_t> offsets(nd + 1, 0);
  for (size_t i = 0; i < nd; ++i) offsets[i + 1] = offsets[i] + ids[i].size();
  uint64_t nt = offsets[nd];
  Sha512 digest;
  uint64_t bin_bytes = 0;
  {
    AtomicFileWriter w(bin_path);
    auto put = [&](const void* data, size_t bytes) {
      w.write(data, bytes);
      digest.update(data, bytes);
      bin_bytes += bytes;
    };
    put(kMagic, 8);
    uint64_t n = nd;
    put(&n, 8);
    put(&nt, 8);
    put(offsets.data(), offsets.size() * 8);
    for (const auto& v : ids) put(v.data(), v.size() * 2);
    w.commit();
  }
  const auto bin_digest = digest.finish();
  nlohmann::json names = nlohmann::json::array();
  for (const auto& d : corpus.documents) names.push_back(d.name);
  nlohmann::json j = {
      {"format", 1},
      {"corpus", corpus.kind},
      {"corpus_source", corpus.source},
      {"corpus_hash", corpus.hash()},
      {"tokenizer_hash", tokenizer.hash()},
      {"vocab_size", tokenizer.vocab_size()},
      {"documents", nd},
      {"sentences", corpus.sentences()},
      {"words", corpus.words()},
      {"bytes", corpus.bytes()},
      {"tokens", nt},
      {"bin_bytes", bin_bytes},
      {"bin_sha512", to_hex(bin_digest.data(), bin_digest.size())},
      {"tokens_per_byte", corpus.bytes() ? double(nt) / double(corpus.bytes()) : 0.0},
      {"names", names}};
  write_file_atomic(json_path, j.dump(1) + "\n");
  return j;
}

bool token_cache_current(const std::string& json_path, const std::string& corpus_hash,
                         const std::string& tokenizer_hash) {
  if (!file_exists(json_path)) return false;
  try {
    auto j = read_json_file(json_path, "", JsonLimits{64ull << 20, 8});
    return json_int_or(j, "format", 0) == 1 &&
           json_string_or(j, "corpus_hash", "") == corpus_hash &&
           json_string_or(j, "tokenizer_hash", "") == tokenizer_hash;
  } catch (const Error&) {
    return false;
  }
}

std::string token_cache_mismatch(const std::string& bin_path, const std::string& json_path) {
  nlohmann::json j;
  try {
    j = read_json_file(json_path, "", JsonLimits{64ull << 20, 8});
  } catch (const Error& e) {
    return e.what();
  }
  const std::string want = json_string_or(j, "bin_sha512", "");
  if (want.empty())
    return json_path + " records no SHA-512 of tokens.bin (written by an older version)";
  std::error_code ec;
  const auto size = std::filesystem::file_size(bin_path, ec);
  if (ec || static_cast<int64_t>(size) != json_int_or(j, "bin_bytes", -1))
    return bin_path + " does not have the size its sidecar records";
  const auto d = sha512_file(bin_path);
  if (to_hex(d.data(), d.size()) != want)
    return bin_path + " does not match the SHA-512 its sidecar records";
  return "";
}

}  // namespace gllm
