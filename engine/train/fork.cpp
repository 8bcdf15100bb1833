// Fork points (fork.h): a checkpoint named by run folder, step or file, verified, and the check
// that a child config differs from its parent's only in what a fork may change.
#include "engine/train/fork.h"

#include <filesystem>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"

namespace gllm {

namespace fs = std::filesystem;

namespace {

// Keys a child may set differently from its parent: names, the grading section, the initial
// embedding (the fork loads the parent's), and how long / how often to evaluate or checkpoint.
bool fork_may_differ(const std::string& key) {
  static const std::set<std::string> keys{"name",
                                          "description",
                                          "model.wte_init",
                                          "train.steps",
                                          "train.eval_every",
                                          "train.checkpoint_every",
                                          "train.keep_checkpoints",
                                          "train.threads"};
  return keys.count(key) || key.rfind("grading.", 0) == 0;
}

}  // namespace

void flatten_config(const nlohmann::json& j, const std::string& prefix,
                    std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten_config(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out[prefix] = j;
}

const std::set<std::string>& fork_own_tensors() {
  static const std::set<std::string> names{"attn_grades", "mlge.level_grades", "mlge.proj",
                                           "output_grades"};
  return names;
}

ForkPoint locate_fork(const std::string& spec) {
  std::string run = spec;
  int64_t step = -1;
  const auto at = spec.rfind('@');
  if (at != std::string::npos && at + 1 < spec.size() &&
      spec.find_first_not_of("0123456789", at + 1) == std::string::npos) {
    run = spec.substr(0, at);
    try {
      step = std::stoll(spec.substr(at + 1));
    } catch (const std::exception&) {
      throw Error("--fork " + spec + ": the step after @ is not a number; give RUN_FOLDER@STEP");
    }
  }
  std::error_code ec;
  std::string weights;
  if (!fs::is_directory(run, ec)) {
    if (step >= 0)
      throw Error("--fork " + spec + ": " + run + " is not a run folder; give RUN_FOLDER@STEP");
    weights = resolve_weights_path(run);  // verifies a committed checkpoint
    run = fs::path(weights).parent_path().parent_path().string();
    if (fs::path(weights).parent_path().filename() != "checkpoints" ||
        !file_exists(join_path(run, "config.json")))
      throw Error("--fork " + spec +
                  ": a fork starts from a run's checkpoint (RUN_FOLDER/checkpoints/"
                  "step_N.safetensors), which carries the optimizer state and data position; "
                  "an exported model does not");
  } else if (!file_exists(join_path(run, "config.json"))) {
    throw Error("--fork " + spec + ": " + run + " is not a run folder (no config.json)");
  }
  ForkPoint fp;
  fp.parent_run = run;
  if (!weights.empty() || step < 0) {
    if (weights.empty()) weights = last_valid_checkpoint(run).weights_path;
    for (const auto& ck : list_checkpoints(run))
      if (fs::equivalent(ck.weights_path, weights, ec)) fp.checkpoint = ck;
  } else {
    for (const auto& ck : list_checkpoints(run))
      if (ck.step == step) fp.checkpoint = ck;
    if (fp.checkpoint.weights_path.empty()) {
      std::string steps;
      for (const auto& ck : list_checkpoints(run)) steps += " " + std::to_string(ck.step);
      throw Error("--fork " + spec + ": " + run + " has no checkpoint at step " +
                  std::to_string(step) + "; it has:" + (steps.empty() ? " none" : steps));
    }
  }
  if (fp.checkpoint.weights_path.empty())
    throw Error("--fork " + spec + ": no committed checkpoint found in " + run);
  verify_checkpoint(fp.checkpoint);
  const auto meta = read_safetensors_metadata(fp.checkpoint.weights_path);
  if (!meta.count("config"))
    throw Error(fp.checkpoint.weights_path +
                " carries no config, so a fork cannot check it trains the same model; fork from a "
                "checkpoint written by gllm train");
  fp.parent = RunConfig::from_json(
      parse_json(meta.at("config"), fp.checkpoint.weights_path + " (stored config)", ""));
  fp.record = {{"parent_run", fs::absolute(run, ec).lexically_normal().string()},
               {"parent_name", fp.parent.name},
               {"seed", fp.parent.train.seed},
               {"checkpoint", fp.checkpoint.weights_path},
               {"step", fp.checkpoint.step},
               {"tokens", fp.checkpoint.sidecar.value("tokens", int64_t(0))},
               {"own_tensors", fork_own_tensors()},
               {"rule",
                "weights, optimizer state, RNG and data position from the parent's checkpoint; "
                "grade tensors and the graded basis from this run's config"}};
  return fp;
}

ForkPoint resolve_fork(const std::string& spec, const RunConfig& child) {
  ForkPoint fp = locate_fork(spec);
  const RunConfig& parent = fp.parent;
  std::map<std::string, nlohmann::json> a, b;
  flatten_config(parent.to_json(), "", a);
  flatten_config(child.to_json(), "", b);
  std::string differ;
  for (const auto& [key, value] : b) {
    if (fork_may_differ(key)) continue;
    auto it = a.find(key);
    if (it == a.end() || it->second != value)
      differ += (differ.empty() ? "" : ", ") + key + " " +
                (it == a.end() ? std::string("(absent)") : json_brief(it->second, 40)) + " → " +
                json_brief(value, 40);
  }
  if (!differ.empty())
    throw Error("cannot fork " + child.name + " from " + fp.checkpoint.weights_path +
                ": it differs from the parent in " + differ +
                ". A fork changes only grading.* (and names, steps, evaluation); set these keys "
                "as the parent has them (`gllm train --fork` takes the parent's seed when --seed "
                "is not given)");
  if (child.train.steps < fp.checkpoint.step)
    throw Error("cannot fork at step " + std::to_string(fp.checkpoint.step) + " a run of " +
                std::to_string(child.train.steps) + " steps; give --steps above the fork step");
  return fp;
}

nlohmann::json portable_fork_record(const nlohmann::json& record, const std::string& child_dir) {
  nlohmann::json out = record;
  std::error_code ec;
  const auto base = fs::weakly_canonical(fs::absolute(child_dir, ec), ec);
  for (const char* key : {"parent_run", "checkpoint"}) {
    if (!out.contains(key) || !out[key].is_string()) continue;
    const auto p = fs::weakly_canonical(fs::absolute(out[key].get<std::string>(), ec), ec);
    const auto rel = p.lexically_relative(base);
    if (!ec && !rel.empty()) out[key] = rel.generic_string();
  }
  return out;
}

double run_start_tokens(const std::string& run_dir) {
  try {
    const auto p = read_parent_record(run_dir);
    if (p.is_object() && p.contains("tokens") && p["tokens"].is_number())
      return p["tokens"].get<double>();
  } catch (const Error&) {  // an unreadable parent.json: counted from 0, as the run shows
  }
  return 0;
}

nlohmann::json read_parent_record(const std::string& run_dir) {
  const std::string path = join_path(run_dir, "parent.json");
  if (!file_exists(path)) return nullptr;
  return read_json_file(path, "restore it or delete it (the run then shows no parent)",
                        JsonLimits{1ull << 20, 16});
}

}  // namespace gllm
