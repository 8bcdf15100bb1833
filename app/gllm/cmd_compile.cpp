// `gllm compile CKPT --out FILE`: folds every grade of a graded checkpoint into standard weights
// (seed 000 Cor. 1) and checks the result on a probe batch (max |Δ eval logits| ≤ tolerance).
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>

#include "app/gllm/command_registry.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/runtime/runtime.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

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

// Every floating tensor of the model finite; names the first few that are not.
void require_finite(const gllm::GPT& m, const std::string& path) {
  std::string bad;
  int n = 0;
  for (auto& [name, t] : m->state_tensors()) {
    if (!t.is_floating_point() || torch::isfinite(t).all().item<bool>()) continue;
    if (++n <= 4) bad += (bad.empty() ? "" : ", ") + name;
  }
  if (n > 0)
    throw gllm::Error(path + ": " + std::to_string(n) + " tensor(s) hold NaN or infinite values (" +
                      bad + (n > 4 ? ", …" : "") +
                      "); the checkpoint is damaged or diverged — compile an earlier one");
}

// The output must not replace the input or any committed checkpoint of a run.
void check_output_path(const std::string& input, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
    throw gllm::Error(
        "--out " + output +
        " is the checkpoint being compiled; write the standard model to another file");
  std::error_code ec_in, ec_out;
  const fs::path in = fs::weakly_canonical(input, ec_in);
  const fs::path out = fs::weakly_canonical(output, ec_out);
  if (!ec_in && !ec_out && in == out)
    throw gllm::Error(
        "--out " + output +
        " is the checkpoint being compiled; write the standard model to another file");
  const std::string suffix = ".safetensors";
  if (output.size() > suffix.size() &&
      output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0 &&
      gllm::file_exists(output.substr(0, output.size() - suffix.size()) + ".json"))
    throw gllm::Error("--out " + output +
                      " is a run's checkpoint (it has a sidecar); write the standard model to "
                      "a file outside the run's checkpoints folder");
}

// Largest probe: the logits of one model on the probe batch, in bytes (both models and their
// difference are held at once).
constexpr double kMaxProbeLogitBytes = 2.0 * (1 << 30);

void run(const CompileArgs& a) {
  gllm::configure_threads(a.threads);
  check_output_path(a.input, a.output);
  const std::string weights = gllm::resolve_weights_path(a.input);  // verifies a sidecar if any
  torch::NoGradGuard no_grad;
  gllm::GPT graded = gllm::load_model(weights);
  graded->eval();
  require_finite(graded, weights);
  // Grades outside [0, q_max] would compile into weights scaled by λ^q far out of range.
  gllm::grading::check_grades_within_clip(gllm::model_grades_from_checkpoint(weights));
  const int64_t T = a.length > 0 ? a.length : graded->config().model.sequence_len;
  if (T > graded->config().model.sequence_len && graded->config().model.positional != "rope")
    throw gllm::Error("--probe-len " + std::to_string(T) + " exceeds sequence_len " +
                      std::to_string(graded->config().model.sequence_len) +
                      "; use a shorter probe");
  const double logit_bytes = static_cast<double>(a.batch) * static_cast<double>(T) *
                             static_cast<double>(graded->vocab_size()) * 4.0;
  if (logit_bytes > kMaxProbeLogitBytes)
    throw gllm::Error(
        "a " + std::to_string(a.batch) + "x" + std::to_string(T) + " probe batch needs " +
        std::to_string(static_cast<int64_t>(logit_bytes / (1 << 20))) +
        " MiB of logits per model (vocabulary " + std::to_string(graded->vocab_size()) +
        "), more than the 2048 MiB allowed; lower --probe-batch or --probe-len");
  // Attention scores of one layer, (B, H, T, T) in fp32: bounded too, so a long probe is refused
  // with the option named instead of failing an allocation.
  const double score_bytes = static_cast<double>(a.batch) *
                             static_cast<double>(graded->config().model.n_head) *
                             static_cast<double>(T) * static_cast<double>(T) * 4.0;
  if (score_bytes > kMaxProbeLogitBytes)
    throw gllm::Error("a " + std::to_string(a.batch) + "x" + std::to_string(T) +
                      " probe batch needs " +
                      std::to_string(static_cast<int64_t>(score_bytes / (1 << 20))) +
                      " MiB of attention scores per layer, more than the 2048 MiB allowed; lower "
                      "--probe-len (sequence_len is " +
                      std::to_string(graded->config().model.sequence_len) + ") or --probe-batch");
  gllm::GPT standard = gllm::compile_to_standard(graded);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(a.seed));
  auto idx = torch::randint(graded->vocab_size(), {a.batch, T}, gen, torch::kLong);  // (B, T)
  const auto before = graded->eval_logits(idx);
  const auto after = standard->eval_logits(idx);
  const double delta = (before - after).abs().max().item<double>();
  std::vector<std::string> removed;
  auto out_names = standard->state_tensors();
  for (auto& [name, t] : graded->state_tensors())
    if (!out_names.count(name)) removed.push_back(name);
  const bool ok = std::isfinite(delta) && delta <= a.tolerance;
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
    std::cout << "compiled " << a.input << " -> " << (ok ? a.output : std::string("(not written)"))
              << "\n"
              << "removed: ";
    for (size_t i = 0; i < removed.size(); ++i) std::cout << (i ? ", " : "") << removed[i];
    std::cout << (removed.empty() ? "(no grade tensors)" : "") << "\n"
              << "max |delta logits| on a " << a.batch << "x" << T << " probe batch: " << delta
              << " (tolerance " << a.tolerance << ")" << std::endl;
  }
  if (!ok)
    throw gllm::Error("the compiled model differs from the graded one by " + std::to_string(delta) +
                      " > " + std::to_string(a.tolerance) +
                      "; nothing was written — report this checkpoint");
}

gllm::cli::RegisterCommand reg("compile", [](CLI::App& root) {
  auto a = std::make_shared<CompileArgs>();
  auto* cmd = root.add_subcommand("compile",
                                  "Fold every grade into standard weights (seed 000 Cor. 1) and "
                                  "check the logits on a probe batch");
  cmd->add_option("checkpoint", a->input, "Graded model checkpoint (.safetensors)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->output, "Where to write the standard checkpoint")->required();
  cmd->add_option("--probe-batch", a->batch, "Rows of the random probe batch")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--probe-len", a->length, "Tokens per probe row (0 = sequence_len)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--seed", a->seed, "Seed of the probe batch")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 62));
  cmd->add_option("--tolerance", a->tolerance, "Largest accepted max |Δ logits|")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", a->threads, "CPU threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run(*a); });
});

}  // namespace
