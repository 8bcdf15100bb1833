// compile_checkpoint: load → checks (output path, finite tensors, grades in the clip, probe size)
// → compile_to_standard → both models' eval logits on one random probe batch → save when they
// agree.
#include "engine/train/standard_compile.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

namespace gllm {
namespace {

int64_t state_elements(const GPT& m) {
  int64_t n = 0;
  for (auto& [name, t] : m->state_tensors()) n += t.numel();
  return n;
}

// Every floating tensor of the model finite; names the first few that are not.
void require_finite(const GPT& m, const std::string& path) {
  std::string bad;
  int n = 0;
  for (auto& [name, t] : m->state_tensors()) {
    if (!t.is_floating_point() || torch::isfinite(t).all().item<bool>()) continue;
    if (++n <= 4) bad += (bad.empty() ? "" : ", ") + name;
  }
  if (n > 0)
    throw Error(path + ": " + std::to_string(n) + " tensor(s) hold NaN or infinite values (" + bad +
                (n > 4 ? ", …" : "") +
                "); the checkpoint is damaged or diverged — compile an earlier one");
}

// The output must not replace the input or any committed checkpoint of a run.
void check_output_path(const std::string& input, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
    throw Error("--out " + output +
                " is the checkpoint being compiled; write the standard model to another file");
  std::error_code ec_in, ec_out;
  const fs::path in = fs::weakly_canonical(input, ec_in);
  const fs::path out = fs::weakly_canonical(output, ec_out);
  if (!ec_in && !ec_out && in == out)
    throw Error("--out " + output +
                " is the checkpoint being compiled; write the standard model to another file");
  const std::string suffix = ".safetensors";
  if (output.size() > suffix.size() &&
      output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0 &&
      file_exists(output.substr(0, output.size() - suffix.size()) + ".json"))
    throw Error("--out " + output +
                " is a run's checkpoint (it has a sidecar); write the standard model to a file "
                "outside the run's checkpoints folder");
}

// Largest probe: the logits of one model on the probe batch, in bytes (both models and their
// difference are held at once), and one layer's attention scores.
constexpr double kMaxProbeBytes = 2.0 * (1 << 30);

}  // namespace

StandardCompileResult compile_checkpoint(const StandardCompileOptions& o) {
  check_output_path(o.input, o.output);
  const std::string weights = resolve_weights_path(o.input);  // verifies a sidecar if any
  torch::NoGradGuard no_grad;
  GPT graded = load_model(weights);
  graded->eval();
  require_finite(graded, weights);
  // Grades outside [0, q_max] would compile into weights scaled by λ^q far out of range.
  grading::check_grades_within_clip(model_grades_from_checkpoint(weights));
  const auto& model = graded->config().model;
  const int64_t T = o.probe_len > 0 ? o.probe_len : model.sequence_len;
  if (T > model.sequence_len && model.positional != "rope")
    throw Error("--probe-len " + std::to_string(T) + " exceeds sequence_len " +
                std::to_string(model.sequence_len) + "; use a shorter probe");
  const std::string shape = std::to_string(o.probe_batch) + "x" + std::to_string(T);
  const double logit_bytes = static_cast<double>(o.probe_batch) * static_cast<double>(T) *
                             static_cast<double>(graded->vocab_size()) * 4.0;
  if (logit_bytes > kMaxProbeBytes)
    throw Error("a " + shape + " probe batch needs " +
                std::to_string(static_cast<int64_t>(logit_bytes / (1 << 20))) +
                " MiB of logits per model (vocabulary " + std::to_string(graded->vocab_size()) +
                "), more than the 2048 MiB allowed; lower --probe-batch or --probe-len");
  // Attention scores of one layer, (B, H, T, T) in fp32: bounded too, so a long probe is refused
  // with the option named instead of failing an allocation.
  const double score_bytes = static_cast<double>(o.probe_batch) *
                             static_cast<double>(model.n_head) * static_cast<double>(T) *
                             static_cast<double>(T) * 4.0;
  if (score_bytes > kMaxProbeBytes)
    throw Error("a " + shape + " probe batch needs " +
                std::to_string(static_cast<int64_t>(score_bytes / (1 << 20))) +
                " MiB of attention scores per layer, more than the 2048 MiB allowed; lower "
                "--probe-len (sequence_len is " +
                std::to_string(model.sequence_len) + ") or --probe-batch");
  GPT standard = compile_to_standard(graded);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(o.seed));
  auto idx = torch::randint(graded->vocab_size(), {o.probe_batch, T}, gen, torch::kLong);  // (B, T)
  const auto before = graded->eval_logits(idx);   // (B, T, V)
  const auto after = standard->eval_logits(idx);  // (B, T, V)
  StandardCompileResult r;
  r.max_abs_delta_logits = (before - after).abs().max().item<double>();
  r.probe_len = T;
  const auto out_names = standard->state_tensors();
  for (auto& [name, t] : graded->state_tensors())
    if (!out_names.count(name)) r.removed_tensors.push_back(name);
  r.state_elements_before = state_elements(graded);
  r.state_elements_after = state_elements(standard);
  r.ok = std::isfinite(r.max_abs_delta_logits) && r.max_abs_delta_logits <= o.tolerance;
  if (r.ok) save_model(standard, o.output);
  return r;
}

}  // namespace gllm
