// `gllm bench data`: the data path's benchmark (engine/bench/data_bench.h): a generated corpus of
// Zipfian documents prepared here and encoded by spm_encode on the same threads, side by side.
#include <cmath>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/bench/bench_report.h"
#include "engine/bench/data_bench.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"

namespace {

struct DataBenchArgs {
  double size_gib = 2.0;
  int64_t seed = 1;
  int threads = 0, vocab = 8192, train_steps = 40;
  int64_t tokenizer_sample = 10000000;
  std::string dir, preset = "tiny-cpu", out_dir;
  bool json = false, no_save = false;
};

gllm::cli::RegisterSubcommand reg_bench_data("bench", "data", [](CLI::App& group) {
  auto* cmd = group.add_subcommand(
      "data",
      "Prepare a generated Zipfian corpus (default 2 GiB) and print, side by side: MB/s against "
      "sentencepiece's spm_encode on the same threads and model, peak RSS against the input, "
      "and the loader's share of a tiny-cpu step trained from the dataset");
  auto a = std::make_shared<DataBenchArgs>();
  cmd->add_option("--size-gib", a->size_gib, "Size of the generated text in GiB")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1024.0));
  cmd->add_option("--seed", a->seed, "Seed of the generated corpus")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
  cmd->add_option("--threads", a->threads, "Threads of both sides (default: every core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--vocab", a->vocab, "BPE vocabulary")
      ->capture_default_str()
      ->check(CLI::Range(260, 65535));
  gllm::cli::add_count_option(cmd, "--tokenizer-sample", a->tokenizer_sample,
                              "Characters the tokenizer is trained on (default 10M)");
  cmd->add_option("--train-steps", a->train_steps,
                  "Steps of the preset trained from the dataset for the loader's share (0: skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--preset", a->preset, "Preset trained for the loader's share")
      ->capture_default_str();
  cmd->add_option("--dir", a->dir,
                  "Working folder: the corpus (kept and reused), the dataset, the run (default: "
                  "<data cache>/bench-data)");
  cmd->add_option("--out-dir", a->out_dir,
                  "Folder for the result file (default: the source tree's bench/results)");
  cmd->add_flag("--no-save", a->no_save, "Do not write a result file");
  cmd->add_flag("--json", a->json, "Print the result as JSON");
  cmd->callback([a] {
    gllm::bench::DataBenchOptions o;
    o.dir = a->dir.empty() ? gllm::data_cache_dir() + "/bench-data" : a->dir;
    o.bytes = static_cast<uint64_t>(std::llround(a->size_gib * double(uint64_t(1) << 30)));
    o.seed = static_cast<uint64_t>(a->seed);
    o.threads = a->threads;
    o.vocab = a->vocab;
    if (a->tokenizer_sample < 1000)
      throw gllm::Error("--tokenizer-sample must be ≥ 1000 characters");
    o.tokenizer_sample = static_cast<uint64_t>(a->tokenizer_sample);
    o.train_steps = a->train_steps;
    o.preset = a->preset;
    o.log = [&](const std::string& s) { (a->json ? std::cerr : std::cout) << s << std::endl; };
    auto j = gllm::bench::run_data_bench(o);
    if (!a->no_save) {
      j["saved"] = gllm::bench::write_result(
          a->out_dir.empty() ? gllm::bench::results_dir() : a->out_dir, "data", j);
    }
    if (a->json) {
      gllm::cli::print_json(j);
      return;
    }
    std::cout << "\n" << gllm::bench::format_data_bench(j);
    if (j.contains("saved")) std::cout << "saved: " << j["saved"].get<std::string>() << "\n";
  });
});

}  // namespace
