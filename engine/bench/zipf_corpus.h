// The generated corpus of `gllm bench data`: documents of Zipf-distributed words from a fixed seed,
// one document per line with a blank line between, written in equal files (the same for any
// threads).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gllm::bench {

struct ZipfCorpusSpec {
  uint64_t bytes = uint64_t(2) << 30;  // total size of the text files
  uint64_t seed = 1;
  int files = 16;               // the text is split into this many files of equal size
  int words = 50000;            // distinct words (ranks of the Zipf law)
  double exponent = 1.1;        // Zipf–Mandelbrot: P(rank r) ∝ (r + 2.7)^-exponent
  double mean_log_words = 5.5;  // words per document: log-normal(mean_log_words, 0.8), 20 … 20000
};

struct ZipfCorpus {
  std::vector<std::string> files;  // in order
  uint64_t documents = 0;          // non-blank paragraphs over all files
};

// Writes the corpus into `dir` (corpus_000.txt …, each atomically, then corpus.json recording the
// spec, the files' sizes and document counts) with up to `threads` writers; a folder that already
// holds the corpus of this spec is reused. Throws gllm::Error naming the folder when it cannot
// write.
ZipfCorpus write_zipf_corpus(const std::string& dir, const ZipfCorpusSpec& spec, int threads);

}  // namespace gllm::bench
