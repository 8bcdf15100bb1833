// `gllm probe RUN...`: the task endpoint — a linear probe of the POS tags of held-out documents (or
// a task file) on every checkpoint's frozen hidden states, written to each run's probe.jsonl.
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"
#include "engine/runtime/runtime.h"
#include "engine/train/probe.h"
#include "engine/train/run_store.h"

namespace {

struct ProbeArgs {
  std::vector<std::string> runs;
  gllm::ProbeOptions options;
  int threads = 0;
  bool json = false;
};

gllm::cli::RegisterCommand reg_probe("probe", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "probe",
      "Task endpoint: a linear probe on each checkpoint's frozen hidden states (POS of the "
      "held-out documents, or a task file), fitted on probe-train and scored on probe-test "
      "words; written to the run's probe.jsonl");
  auto a = std::make_shared<ProbeArgs>();
  cmd->add_option("runs", a->runs,
                  "Run folders, or a folder of runs (a sweep's); every committed checkpoint is "
                  "probed once (already probed ones are kept)")
      ->required();
  cmd->add_option("--task", a->options.task_file,
                  "Token-labelled task file (docs/probe-tasks.md); default: brown-pos, the coarse "
                  "POS classes of the run's held-out Brown documents");
  cmd->add_option("--layer", a->options.layer,
                  "Hidden state after this many blocks (0 = the embedding); default: the last")
      ->check(CLI::Range(0, 1000));
  gllm::cli::add_count_option(cmd, "--max-words", a->options.max_words,
                              "Words per split (probe-train, probe-test), first in passage order",
                              20, 10000000);
  cmd->add_option("--l2", a->options.l2, "Ridge on the probe's weights")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--iterations", a->options.iterations, "L-BFGS iterations")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--corpus-path", a->options.corpus_path,
                  "Brown folder (default: the run's data section)");
  cmd->add_option("--threads", a->threads, "Threads (0 = all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] {
    gllm::configure_threads(a->threads);
    std::vector<std::string> dirs;
    for (const auto& r : a->runs) {
      std::vector<std::string> errors;
      for (const auto& info : gllm::list_runs(r, &errors)) dirs.push_back(info.dir);
      for (const auto& e : errors) std::cerr << "warning: " << e << "\n";
    }
    if (dirs.empty()) throw gllm::Error("no run folders found in the paths given");
    nlohmann::json out = nlohmann::json::array();
    for (const auto& dir : dirs) {
      const auto scores = gllm::probe_run(dir, a->options, [&](const std::string& s) {
        if (!a->json) std::cerr << s << "\n";
      });
      if (a->json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : scores) list.push_back(s.to_json());
        out.push_back({{"run", dir}, {"scores", list}});
        continue;
      }
      if (scores.empty()) continue;
      std::cout << dir << ": " << scores.front().task << ", layer " << scores.front().layer << ", "
                << scores.front().classes << " classes, " << scores.front().train_words
                << " probe-train / " << scores.front().test_words << " probe-test words\n";
      gllm::TextTable t({"step", "tokens", "task error", "train error", "majority"},
                        {gllm::Align::Right, gllm::Align::Right, gllm::Align::Right,
                         gllm::Align::Right, gllm::Align::Right});
      for (const auto& s : scores)
        t.add_row({std::to_string(s.step), std::to_string(s.tokens),
                   gllm::cli::number_text("%.4f", s.task_error),
                   gllm::cli::number_text("%.4f", s.train_error),
                   gllm::cli::number_text("%.4f", s.majority_error)});
      std::cout << t.render();
    }
    if (a->json) gllm::cli::print_json(out);
    std::cout << std::flush;
  });
});

}  // namespace
