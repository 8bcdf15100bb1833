// `gllm bench data`: prepares a generated Zipfian corpus with `gllm data prepare` and encodes the
// same text with sentencepiece's own spm_encode on the same threads, then trains tiny-cpu from the
// dataset. Result JSON (bench/results/data-<stamp>.json):
//   kind "data", corpus {bytes, files, seed, words, exponent}, threads, vocab,
//   prepare {wall_s, stage_s {scan, sample, tokenizer, encode, finish}, encode_s,
//            encode_mb_per_s, total_mb_per_s, peak_rss_mib, rss_over_input},
//   spm_encode {wall_s, mb_per_s, peak_rss_mib, processes},
//   encode_ratio = prepare.encode_mb_per_s / spm_encode.mb_per_s,
//   same_tokens {documents, identical}: the first documents encoded by both, compared id for id,
//   splits {train|val|heldout: {documents, tokens}}, disjoint (every document in exactly one),
//   loader {steps, loader_s, train_s, share = loader_s / train_s, tokens_per_s, val_bpb},
//   machine (bench_report.h machine_info()). MB = 10^6 bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace gllm::bench {

struct DataBenchOptions {
  std::string dir;                     // workspace: corpus/, dataset/, spm logs, the run
  uint64_t bytes = uint64_t(2) << 30;  // generated text (≥ 2 GiB for the table)
  uint64_t seed = 1;
  int threads = 0;  // both sides; 0 = every core
  int vocab = 8192;
  uint64_t tokenizer_sample = 10000000;  // characters
  int train_steps = 40;                  // tiny-cpu steps for the loader's share (0: skip)
  std::string preset = "tiny-cpu";
  std::function<void(const std::string&)> log;  // one line per phase
};

// Runs the benchmark; throws gllm::Error naming what failed (spm_encode missing, a child's exit
// status with its last lines of output).
nlohmann::json run_data_bench(const DataBenchOptions& o);

// The side-by-side table a person reads.
std::string format_data_bench(const nlohmann::json& result);

}  // namespace gllm::bench
