// The GPT's parameters and state as the optimizer and checkpoints see them: tagged parameter
// groups, grade projection, grade arrays, state tensors, and model files saved and loaded.
#include <cerrno>
#include <nlohmann/json.hpp>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"

namespace gllm {

std::vector<TaggedParameter> GPTImpl::tagged_parameters() const {
  std::vector<TaggedParameter> out;
  for (const auto& item : named_parameters(/*recurse=*/true)) {
    const std::string& n = item.key();
    std::string group;
    if (n == "transformer.wte.weight")
      group = "embedding";
    else if (n == "lm_head.weight")
      group = "unembedding";
    else if (n.rfind("value_embeds.", 0) == 0)
      group = "value_embeds";
    else if (n == "resid_lambdas")
      group = "resid_lambdas";
    else if (n == "x0_lambdas")
      group = "x0_lambdas";
    else if (n.rfind("oe_tables.", 0) == 0)
      group = "oe_table";
    else if (n == "attn_grades" || n == "mlge.level_grades")
      group = "grades";
    else if (n == "q_tau")
      group = "query_scale";
    else if (n == "mlge.proj")
      group = "level_proj";
    else if (n == "wpe")
      group = "position";
    else if (n.rfind("transformer.h.", 0) == 0)
      group = "matrix";
    else
      throw Error("internal: parameter '" + n + "' has no optimizer group");
    out.push_back({n, item.value(), group, item.value().requires_grad()});
  }
  return out;
}

void GPTImpl::project_grades() {
  torch::NoGradGuard no_grad;
  auto& P = *parts_;
  // The largest float32 not above q_max, so λ^q ≤ C holds exactly for float32 grades too.
  float hi = static_cast<float>(q_max_);
  if (static_cast<double>(hi) > q_max_) hi = std::nextafter(hi, 0.0f);
  const double top =
      P.attn_grades.defined() && P.attn_grades.scalar_type() == torch::kDouble ? q_max_ : hi;
  if (P.attn_grades.defined()) P.attn_grades.clamp_(0.0, top);
  if (P.level_grades.defined()) P.level_grades.clamp_(0.0, top);
  if (P.q_tau.defined()) P.q_tau.mul_(P.q_tau_mask);
}

namespace {
GradeArray to_array(const torch::Tensor& t) {
  GradeArray a;
  if (!t.defined()) return a;
  auto c = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  a.layers = c.size(0);
  a.heads = c.size(1);
  a.planes = c.size(2);
  a.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return a;
}
}  // namespace

GradeArray GPTImpl::attn_grade_array() const {
  return to_array(parts_->attn_grades);
}
GradeArray GPTImpl::query_scale_array() const {
  const auto& P = *parts_;
  if (!P.q_tau.defined()) return {};
  return to_array(torch::exp(P.q_tau * P.q_tau_mask));
}
torch::Tensor GPTImpl::level_grade_values() const {
  return parts_->level_grades;
}

std::map<std::string, torch::Tensor> GPTImpl::state_tensors() const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : named_parameters(true)) out[item.key()] = item.value();
  for (const auto& item : named_buffers(true))
    if (item.key() != "q_tau_mask") out[item.key()] = item.value();
  return out;
}

void GPTImpl::load_state_tensors(const std::map<std::string, torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  auto mine = state_tensors();
  std::string missing;
  for (auto& [name, t] : mine) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
      missing += (missing.empty() ? "" : ", ") + name;
      continue;
    }
    if (it->second.sizes() != t.sizes())
      throw Error("tensor '" + name + "' has shape " + c10::str(it->second.sizes()) +
                  " but the model needs " + c10::str(t.sizes()) +
                  "; the checkpoint was written for another configuration");
    // Bytes of another kind (integers relabelled, or read, as floats) are never converted.
    if (it->second.is_floating_point() != t.is_floating_point() ||
        (it->second.scalar_type() == torch::kBool) != (t.scalar_type() == torch::kBool))
      throw Error("tensor '" + name + "' is stored as " +
                  std::string(c10::toString(it->second.scalar_type())) + " but the model holds " +
                  std::string(c10::toString(t.scalar_type())) +
                  " there; the file's header was altered — restore it or use another checkpoint");
    t.copy_(it->second.to(t.device(), t.scalar_type()));
  }
  if (!missing.empty())
    throw Error("checkpoint lacks " + missing +
                "; it was written for another configuration (check its config)");
  for (const auto& [name, t] : tensors)
    if (!mine.count(name))
      throw Error("checkpoint has tensor '" + name +
                  "' that this model does not; load it with the config it was saved with");
}

GPT build_model(const RunConfig& config, int64_t vocab, int64_t seed,
                const std::string& tokenizer_hash) {
  GPTOptions o;
  static_cast<grading::ResolvedGrades&>(o) =
      grading::resolve_grade_sources(config, vocab, tokenizer_hash);
  o.vocab_size = vocab;
  o.seed = seed;
  return GPT(config, o);
}

void save_model(const GPT& model, const std::string& path) {
  // The vocabulary lives in the metadata; the stored config says "follow the tokenizer" (0) so it
  // passes RunConfig's model/data vocabulary cross-check whatever the data section says.
  RunConfig cfg = model->config();
  cfg.model.vocab_size = 0;
  std::map<std::string, std::string> meta{{"format", "gllm-model-1"},
                                          {"config", cfg.to_json().dump()},
                                          {"vocab_size", std::to_string(model->vocab_size())},
                                          {"compiled", model->compiled() ? "1" : "0"}};
  write_tensor_file(path, model->state_tensors(), meta);
}

GPT load_model(const std::string& path, const GPTOptions& options) {
  std::map<std::string, std::string> meta;
  auto tensors = read_tensor_file(path, &meta);
  // The config: in the metadata (model files), else a JSON sidecar next to the file
  // (FILE.json with a "config" object), else the run folder's config.json (checkpoints/..).
  nlohmann::json cj;
  std::string source;  // where the config came from, named in its errors
  const std::string fix = "restore the file from the run folder it was written to";
  if (meta.count("config")) {
    source = path + " (metadata)";
    cj = parse_json(meta["config"], source, fix);
  } else {
    std::string stem = path;
    if (stem.size() > 12 && stem.substr(stem.size() - 12) == ".safetensors")
      stem.resize(stem.size() - 12);
    const std::string sidecar = stem + ".json";
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string run_cfg = dir + "/../config.json";
    if (file_exists(sidecar)) {
      auto j = read_json_file(sidecar, fix, large_json_limits());
      if (j.is_object() && j.contains("config")) cj = j["config"];
      source = sidecar;
    }
    if (cj.is_null() && file_exists(run_cfg)) {
      cj = read_json_file(run_cfg, fix, JsonLimits{});
      source = run_cfg;
    }
  }
  if (cj.is_null())
    throw Error(
        path +
        ": no model config in its metadata, in a .json sidecar or in the run folder's config.json; "
        "open a checkpoint written by gllm");
  RunConfig cfg;
  try {
    cfg = RunConfig::from_json(cj);
  } catch (const Error& e) {
    throw Error(source + ": the config of " + path + " is not valid: " + e.what());
  }
  GPTOptions o = options;
  if (meta.count("vocab_size")) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(meta["vocab_size"].c_str(), &end, 10);
    if (errno != 0 || end == meta["vocab_size"].c_str() || *end != '\0' || v < 1 || v > 1000000000)
      throw Error(path + ": metadata vocab_size '" + meta["vocab_size"].substr(0, 40) +
                  "' is not a vocabulary size; the file is damaged");
    o.vocab_size = v;
  } else if (tensors.count("transformer.wte.weight"))
    o.vocab_size = tensors["transformer.wte.weight"].size(0);
  // The metadata and config describe the tensors; they are checked against them before the
  // model is built, so a claim (a vocabulary of 1e9, n_embd 8192 over small tensors) never turns
  // into an allocation.
  if (auto wte = tensors.find("transformer.wte.weight");
      wte != tensors.end() && wte->second.dim() == 2 && wte->second.size(0) != o.vocab_size)
    throw Error(path + ": metadata vocab_size " + std::to_string(o.vocab_size) +
                " does not match the embedding's " + std::to_string(wte->second.size(0)) +
                " rows (transformer.wte.weight); the file is damaged — restore it");
  {
    int64_t stored = 0;
    for (const auto& [n, t] : tensors) stored += t.numel();
    const int64_t claimed = estimate_cost(cfg, o.vocab_size).params;
    if (claimed > stored + stored / 2 + (int64_t(1) << 20))
      throw Error(path + ": its config and metadata describe a model of " +
                  std::to_string(claimed) + " parameters but the file holds " +
                  std::to_string(stored) +
                  " values; the metadata does not belong to these tensors — restore the file");
  }
  o.compiled = meta.count("compiled") ? meta["compiled"] == "1" : tensors.count("logit_bias") > 0;
  o.from_checkpoint = true;  // grades and bases come from the file, not from files the config names
  GPT model(cfg, o);
  // A weights file holds the model's tensors and nothing else (the optimizer state has its own
  // file): a tensor the model does not have is refused by name, never dropped unseen.
  std::map<std::string, torch::Tensor> own = std::move(tensors);
  model->load_state_tensors(own);
  return model;
}

}  // namespace gllm
