// The generated corpus of `gllm bench data`: Zipf-distributed words in log-normal-length
// documents, each file from its own seeded generator so the text does not depend on the threads.
#include "engine/bench/zipf_corpus.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"

namespace gllm::bench {
namespace {

nlohmann::json spec_json(const ZipfCorpusSpec& s) {
  return {{"bytes", s.bytes},   {"seed", s.seed},         {"files", s.files},
          {"words", s.words},   {"exponent", s.exponent}, {"mean_log_words", s.mean_log_words},
          {"format", "zipf-v1"}};
}

// The word list: lengths 1 … 12 letters, shorter words at the frequent ranks (as in text).
std::vector<std::string> make_words(const ZipfCorpusSpec& s) {
  std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + 17);
  std::uniform_int_distribution<int> letter(0, 25);
  std::vector<std::string> words(static_cast<size_t>(s.words));
  for (size_t r = 0; r < words.size(); ++r) {
    const double typical = 2.0 + std::log2(double(r) + 2.0) * 0.6;
    std::normal_distribution<double> len(typical, 1.5);
    const int n = std::clamp(static_cast<int>(std::lround(len(rng))), 1, 12);
    for (int i = 0; i < n; ++i) words[r].push_back(static_cast<char>('a' + letter(rng)));
  }
  return words;
}

// Cumulative Zipf–Mandelbrot probabilities over the ranks, for sampling by binary search.
std::vector<double> make_cdf(const ZipfCorpusSpec& s) {
  std::vector<double> cdf(static_cast<size_t>(s.words));
  double total = 0;
  for (size_t r = 0; r < cdf.size(); ++r) {
    total += std::pow(double(r) + 2.7, -s.exponent);
    cdf[r] = total;
  }
  for (double& c : cdf) c /= total;
  return cdf;
}

// One file of `bytes` bytes (its last document cut at a word to fit, then ended): documents of
// words, a sentence end every 8-24 words, one document per line, a blank line after each.
uint64_t write_file(const std::string& path, uint64_t bytes, uint64_t seed,
                    const std::vector<std::string>& words, const std::vector<double>& cdf,
                    double mean_log_words) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::lognormal_distribution<double> doc_words(mean_log_words, 0.8);
  std::uniform_int_distribution<int> sentence(8, 24);
  AtomicFileWriter out(path);
  std::string buf;
  buf.reserve(size_t(4) << 20);
  uint64_t written = 0, documents = 0;
  while (written < bytes) {
    const int n = std::clamp(static_cast<int>(doc_words(rng)), 20, 20000);
    std::string doc;
    int until_stop = sentence(rng);
    for (int i = 0; i < n; ++i) {
      const size_t r = std::min<size_t>(
          std::upper_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin(), words.size() - 1);
      if (i) doc.push_back(' ');
      doc += words[r];
      if (--until_stop == 0) {
        doc.push_back('.');
        until_stop = sentence(rng);
      }
    }
    doc += ".\n\n";
    const uint64_t room = bytes - written;
    if (doc.size() > room) {  // the file's last document: cut at a word, ended like the others
      if (room < 4) {
        doc.assign(room, '\n');
      } else {
        doc.resize(room - 3);
        const auto space = doc.find_last_of(' ');
        doc.resize(space == std::string::npos || space == 0 ? doc.size() : space);
        doc += ".\n\n";
        doc.resize(room, '\n');  // pad with newlines (blank lines) to the exact size
      }
    }
    if (doc.find_first_not_of('\n') != std::string::npos) ++documents;
    buf += doc;
    written += doc.size();
    if (buf.size() >= (size_t(4) << 20)) {
      out.write(buf.data(), buf.size());
      buf.clear();
    }
  }
  out.write(buf.data(), buf.size());
  out.commit();
  return documents;
}

}  // namespace

ZipfCorpus write_zipf_corpus(const std::string& dir, const ZipfCorpusSpec& spec, int threads) {
  if (spec.files < 1 || spec.bytes < uint64_t(spec.files) * 4096)
    throw Error("the generated corpus needs at least 4 KiB per file; raise its size");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create the benchmark folder " + dir + ": " + ec.message());
  std::vector<std::string> paths;
  std::vector<uint64_t> sizes;
  for (int f = 0; f < spec.files; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "corpus_%03d.txt", f);
    paths.push_back(dir + "/" + name);
    sizes.push_back(spec.bytes / spec.files + (uint64_t(f) < spec.bytes % spec.files ? 1 : 0));
  }
  // Reuse: the stamp names this spec and every file has its size.
  const std::string stamp = dir + "/corpus.json";
  if (std::filesystem::exists(stamp)) {
    try {
      const auto j = nlohmann::json::parse(read_file(stamp));
      bool same = j.value("spec", nlohmann::json()) == spec_json(spec);
      for (size_t i = 0; same && i < paths.size(); ++i)
        same = std::filesystem::file_size(paths[i], ec) == sizes[i] && !ec;
      if (same) return {paths, j.at("documents").get<uint64_t>()};
    } catch (const std::exception&) {
      // an unreadable stamp: write the corpus again
    }
    std::filesystem::remove(stamp, ec);
  }
  const auto words = make_words(spec);
  const auto cdf = make_cdf(spec);
  std::vector<uint64_t> documents(paths.size(), 0);
  std::atomic<int> next{0};
  std::string first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (int f; (f = next.fetch_add(1)) < spec.files;) {
      try {
        documents[f] = write_file(paths[f], sizes[f], spec.seed * 1000003ull + uint64_t(f) + 1,
                                  words, cdf, spec.mean_log_words);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (first_error.empty()) first_error = e.what();
        next.store(spec.files);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, std::min(threads, spec.files)); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (!first_error.empty())
    throw Error("cannot write the generated corpus in " + dir + ": " + first_error);
  ZipfCorpus corpus{paths, 0};
  for (uint64_t d : documents) corpus.documents += d;
  write_file_atomic(
      stamp,
      nlohmann::json({{"spec", spec_json(spec)}, {"files", sizes}, {"documents", corpus.documents}})
          .dump(2));
  return corpus;
}

}  // namespace gllm::bench
