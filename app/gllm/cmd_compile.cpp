// `gllm compile CKPT --out FILE`: folds every grade of a graded checkpoint into standard weights
// (seed 000 Cor. 1) and checks the result on a probe batch (max |Δ eval logits| ≤ tolerance).
#include <iostream>
#include <memory>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/runtime/runtime.h"
#include "engine/train/standard_compile.h"

namespace {

struct CompileArgs {
  gllm::StandardCompileOptions compile;
  bool json = false;
  int threads = 0;
};

void run_compile(const CompileArgs& a) {
  gllm::configure_threads(a.threads);
  const gllm::StandardCompileOptions& o = a.compile;
  const gllm::StandardCompileResult r = gllm::compile_checkpoint(o);
  if (a.json) {
    gllm::cli::print_json({{"input", o.input},
                           {"output", r.ok ? o.output : ""},
                           {"max_abs_delta_logits", r.max_abs_delta_logits},
                           {"tolerance", o.tolerance},
                           {"ok", r.ok},
                           {"probe_batch", o.probe_batch},
                           {"probe_len", r.probe_len},
                           {"removed_tensors", r.removed_tensors},
                           {"tensors_before", r.state_elements_before},
                           {"tensors_after", r.state_elements_after}});
  } else {
    std::cout << "compiled " << o.input << " -> "
              << (r.ok ? o.output : std::string("(not written)")) << "\n"
              << "removed: ";
    for (size_t i = 0; i < r.removed_tensors.size(); ++i)
      std::cout << (i ? ", " : "") << r.removed_tensors[i];
    std::cout << (r.removed_tensors.empty() ? "(no grade tensors)" : "") << "\n"
              << "max |delta logits| on a " << o.probe_batch << "x" << r.probe_len
              << " probe batch: " << r.max_abs_delta_logits << " (tolerance " << o.tolerance << ")"
              << std::endl;
  }
  if (!r.ok)
    throw gllm::Error("the compiled model differs from the graded one by " +
                      std::to_string(r.max_abs_delta_logits) + " > " + std::to_string(o.tolerance) +
                      "; nothing was written — report this checkpoint");
}

gllm::cli::RegisterCommand reg_compile("compile", [](CLI::App& root) {
  auto a = std::make_shared<CompileArgs>();
  auto* cmd = root.add_subcommand("compile",
                                  "Fold every grade into standard weights (seed 000 Cor. 1) and "
                                  "check the logits on a probe batch");
  cmd->add_option("checkpoint", a->compile.input, "Graded model checkpoint (.safetensors)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->compile.output, "Where to write the standard checkpoint")
      ->required();
  cmd->add_option("--probe-batch", a->compile.probe_batch, "Rows of the random probe batch")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--probe-len", a->compile.probe_len, "Tokens per probe row (0 = sequence_len)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", a->compile.seed, "Seed of the probe batch")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 62));
  cmd->add_option("--tolerance", a->compile.tolerance, "Largest accepted max |Δ logits|")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", a->threads, "CPU threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_compile(*a); });
});

}  // namespace
