// `gllm compile CKPT --out FILE`: folds every grade of a graded checkpoint into standard weights
// (seed 000 Cor. 1) and checks the result on a probe batch (max |Δ eval logits| ≤ tolerance).
#include <ATen/CPUGeneratorImpl.h>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/runtime/runtime.h"

namespace {

struct CompileArgs {
  std::string input, output;
  int batch = 4, length = 0;
  int64_t seed = 1234;
  double tolerance = 1e-4;
  bool json = false;
  int threads = 0;
};

int64_t count(const gllm::GPT& m) {
  int64_t n = 0;
  for (auto& [name, t] : m->state_tensors()) n += t.numel();
  return n;
}

void run(const CompileArgs& a) {
  gllm::configure_threads(a.threads);
  torch::NoGradGuard no_grad;
  gllm::GPT graded = gllm::load_model(a.input);
  graded->eval();
  gllm::GPT standard = gllm::compile_to_standard(graded);
  const int64_t T = a.length > 0 ? a.length : graded->config().model.sequence_len;
  if (T > graded->config().model.sequence_len && graded->config().model.positional != "rope")
    throw gllm::Error("--probe-len " + std::to_string(T) + " exceeds sequence_len " +
                      std::to_string(graded->config().model.sequence_len) + "; use a shorter probe");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(a.seed));
  auto idx = torch::randint(graded->vocab_size(), {a.batch, T}, gen, torch::kLong);  // (B, T)
  const auto before = graded->eval_logits(idx);
  const auto after = standard->eval_logits(idx);
  const double delta = (before - after).abs().max().item<double>();
  std::vector<std::string> removed;
  auto out_names = standard->state_tensors();
  for (auto& [name, t] : graded->state_tensors())
    if (!out_names.count(name)) removed.push_back(name);
  const bool ok = delta <= a.tolerance;
  if (ok) gllm::save_model(standard, a.output);
  if (a.json) {
    gllm::cli::print_json({{"input", a.input},
                           {"output", ok ? a.output : ""},
                           {"max_abs_delta_logits", delta},
                           {"tolerance", a.tolerance},
                           {"ok", ok},
                           {"probe_batch", a.batch},
                           {"probe_len", T},
                           {"removed_tensors", removed},
                           {"tensors_before", count(graded)},
                           {"tensors_after", count(standard)}});
  } else {
    std::cout << "compiled " << a.input << " -> " << (ok ? a.output : std::string("(not written)")) << "\n"
              << "removed: ";
    for (size_t i = 0; i < removed.size(); ++i) std::cout << (i ? ", " : "") << removed[i];
    std::cout << (removed.empty() ? "(no grade tensors)" : "") << "\n"
              << "max |delta logits| on a " << a.batch << "x" << T << " probe batch: " << delta
              << " (tolerance " << a.tolerance << ")" << std::endl;
  }
  if (!ok)
    throw gllm::Error("the compiled model differs from the graded one by " + std::to_string(delta) +
                      " > " + std::to_string(a.tolerance) + "; nothing was written — report this checkpoint");
}

gllm::cli::RegisterCommand reg("compile", [](CLI::App& root) {
  auto a = std::make_shared<CompileArgs>();
  auto* cmd = root.add_subcommand(
      "compile", "Fold every grade into standard weights (seed 000 Cor. 1) and check the logits on a probe batch");
  cmd->add_option("checkpoint", a->input, "Graded model checkpoint (.safetensors)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->output, "Where to write the standard checkpoint")->required();
  cmd->add_option("--probe-batch", a->batch, "Rows of the random probe batch")->check(CLI::Range(1, 1024));
  cmd->add_option("--probe-len", a->length, "Tokens per probe row (0 = sequence_len)")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", a->seed, "Seed of the probe batch");
  cmd->add_option("--tolerance", a->tolerance, "Largest accepted max |Δ logits|")->check(CLI::PositiveNumber);
  cmd->add_option("--threads", a->threads, "CPU threads (0 = all cores)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run(*a); });
});

}  // namespace
