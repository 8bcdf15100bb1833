// Reads grade tensors back from a freshly built model or from a checkpoint file (model_grades.h),
// so every certificate is computed from what the model holds rather than from its config.
#include "engine/train/model_grades.h"

#include <torch/torch.h>

#include "engine/grading/grade_sources.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/safetensors.h"
#include "engine/model/gpt.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace {

std::vector<double> to_doubles(const torch::Tensor& t) {
  if (!t.defined()) return {};
  auto c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::vector<double> to_doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

void fill_bounds(grading::ModelGrades& m, const RunConfig& c) {
  const auto b = grading::grade_bounds(c);
  m.lambda = b.lambda;
  m.clip = c.grading.clip;
  m.q_max = b.q_max;
  m.width = c.model.width();
  m.layers = c.model.layers();
  m.heads = c.model.heads();
  m.planes = c.model.head_dim() / 2;
}

}  // namespace

grading::ModelGrades model_grades_from_config(const RunConfig& config, const std::string& label) {
  const int64_t vocab =
      config.model.vocab_size > 0 ? config.model.vocab_size : config.data.vocab_size;
  GPTOptions o;
  static_cast<grading::ResolvedGrades&>(o) = grading::resolve_grade_sources(config, vocab);
  o.vocab_size = vocab;
  o.seed = config.train.seed;
  GPT model(config, o);
  auto& P = model->parts();
  grading::ModelGrades m;
  fill_bounds(m, config);
  m.source = "model built from " + label + " (tensors read back after initialisation)";
  if (config.grading.mlge) m.level_grades = to_doubles(P.level_grades);
  m.level_basis = to_doubles(P.level_proj);
  m.attn_grades = to_doubles(P.attn_grades);
  m.has_output_grades = P.output_grades.defined();
  m.sources = o.sources;
  return m;
}

grading::ModelGrades model_grades_from_checkpoint(const std::string& path) {
  const std::string weights = resolve_weights_path(path);
  auto file = SafetensorsFile::open(weights);
  const auto& meta = file.metadata();
  nlohmann::json cj;
  if (meta.count("config"))
    cj = parse_json(meta.at("config"), weights + " (its stored config)",
                    "the checkpoint is damaged; use another one");
  if (cj.is_null())
    throw Error(weights +
                " has no config in its metadata; certify checkpoints written by `gllm train` or "
                "`gllm compile`");
  RunConfig c = RunConfig::from_json(cj);
  grading::ModelGrades m;
  fill_bounds(m, c);
  m.source = "checkpoint " + weights +
             (meta.count("step") ? " (step " + meta.at("step") + ")" : std::string());
  if (c.grading.mlge && file.has("mlge.level_grades"))
    m.level_grades = to_doubles(file.to_float("mlge.level_grades"));
  if (file.has("mlge.proj")) m.level_basis = to_doubles(file.to_float("mlge.proj"));
  if (file.has("attn_grades")) m.attn_grades = to_doubles(file.to_float("attn_grades"));
  m.has_output_grades = file.has("output_grades");
  const int d = m.width;
  if (!m.level_grades.empty() && static_cast<int>(m.level_grades.size()) != d)
    throw Error(weights + ": mlge.level_grades has " + std::to_string(m.level_grades.size()) +
                " values for width " + std::to_string(d) +
                "; the file is damaged or from another model");
  if (!m.attn_grades.empty() &&
      m.attn_grades.size() != static_cast<size_t>(m.layers) * m.heads * m.planes)
    throw Error(weights +
                ": attn_grades does not have layers × heads × planes values; the file is damaged");
  return m;
}

}  // namespace gllm
