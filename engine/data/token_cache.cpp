// Token cache: parallel tokenization of all documents into tokens.bin (uint16 ids + offsets,
// written atomically) with its tokens.json sidecar, and a read-only memory map for batching.
#include "engine/data/token_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "engine/data/corpus.h"
#include "engine/data/tokenizer.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

namespace gllm {

namespace {
constexpr char kMagic[8] = {'G', 'L', 'L', 'M', 'T', 'O', 'K', '1'};
}

std::shared_ptr<TokenShard> TokenShard::open(const std::string& bin_path) {
  int fd = ::open(bin_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open token cache " + bin_path + ": " + std::strerror(errno) +
                "; run `gllm data info` to rebuild it");
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error("cannot stat token cache " + bin_path);
  }
  size_t size = static_cast<size_t>(st.st_size);
  auto bad = [&](const std::string& why) {
    return Error("token cache " + bin_path + " is malformed (" + why + "); delete it so that it is rebuilt");
  };
  if (size < 32) {
    ::close(fd);
    throw bad("too short");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw Error("cannot memory-map token cache " + bin_path + ": " + std::strerror(errno));
  std::shared_ptr<TokenShard> s(new TokenShard());
  s->path_ = bin_path;
  s->map_ = map;
  s->map_size_ = size;
  const char* p = static_cast<const char*>(map);
  if (std::memcmp(p, kMagic, 8) != 0) throw bad("wrong magic");
  uint64_t nd = 0, nt = 0;
  std::memcpy(&nd, p + 8, 8);
  std::memcpy(&nt, p + 16, 8);
  size_t header = 24 + (nd + 1) * 8;
  if (nd > size || header + nt * 2 != size) throw bad("sizes do not match the file length");
  s->n_docs_ = nd;
  s->n_tokens_ = nt;
  s->offsets_ = reinterpret_cast<const uint64_t*>(p + 24);
  s->ids_ = reinterpret_cast<const uint16_t*>(p + header);
  if (s->offsets_[0] != 0 || s->offsets_[nd] != nt) throw bad("offsets do not span the tokens");
  for (size_t i = 0; i < nd; ++i)
    if (s->offsets_[i] > s->offsets_[i + 1]) throw bad("offsets decrease");
  return s;
}

TokenShard::~TokenShard() {
  if (map_) munmap(map_, map_size_);
}

TokenShard::View TokenShard::document(size_t i) const {
  if (i >= n_docs_) throw Error("document index " + std::to_string(i) + " out of range");
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
  {
    AtomicFileWriter w(bin_path);
    w.write(kMagic, 8);
    uint64_t n = nd;
    w.write(&n, 8);
    w.write(&nt, 8);
    w.write(offsets.data(), offsets.size() * 8);
    for (const auto& v : ids) w.write(v.data(), v.size() * 2);
    w.commit();
  }
  nlohmann::json names = nlohmann::json::array();
  for (const auto& d : corpus.documents) names.push_back(d.name);
  nlohmann::json j = {{"format", 1},
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
                      {"tokens_per_byte", corpus.bytes() ? double(nt) / double(corpus.bytes()) : 0.0},
                      {"names", names}};
  write_file_atomic(json_path, j.dump(1) + "\n");
  return j;
}

bool token_cache_current(const std::string& json_path, const std::string& corpus_hash,
                         const std::string& tokenizer_hash) {
  if (!file_exists(json_path)) return false;
  try {
    auto j = nlohmann::json::parse(read_file(json_path));
    return j.value("format", 0) == 1 && j.value("corpus_hash", "") == corpus_hash &&
           j.value("tokenizer_hash", "") == tokenizer_hash;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace gllm
