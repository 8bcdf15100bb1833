// The resume checks: memory against the analytic estimate, config changes against the checkpoint's
// recorded config, evidence of a lost checkpoint, and range checks of the recorded resume state.
#include "engine/train/resume_checks.h"

#include <unistd.h>

#include <map>
#include <set>

#include "engine/config/run_paths.h"
#include "engine/dist/device.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/safetensors.h"
#include "engine/model/cost.h"
#include "engine/train/fork.h"

namespace gllm {
namespace {

// Keys whose edit between checkpoint and resume changes no trained number: names, how long
// (train.steps, set with --steps), how often to evaluate or checkpoint, and CPU threads.
const std::set<std::string>& result_neutral_keys() {
  static const std::set<std::string> keys{"name",
                                          "description",
                                          "train.steps",
                                          "train.eval_every",
                                          "train.checkpoint_every",
                                          "train.keep_checkpoints",
                                          "train.threads"};
  return keys;
}

}  // namespace

// The analytic memory estimate against this machine's memory, for runs on the CPU: a preset far
// too large is refused before anything is allocated.
void check_memory(const RunConfig& c) {
  const bool cpu = c.train.device == "cpu" || (c.train.device == "auto" && !dist::cuda_available());
  if (!cpu) return;
  const CostEstimate e = estimate_cost(c, c.data.vocab_size);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const double have_mib =
      static_cast<double>(pages) * static_cast<double>(page) / (1024.0 * 1024.0);
  if (!(e.total_mib <= have_mib)) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s needs about %.0f MiB by the analytic estimate (%.3g parameters) but this "
                  "machine has %.0f MiB of memory; choose a smaller model (model.depth, n_layer, "
                  "n_embd) or a smaller train.device_batch",
                  c.name.c_str(), e.total_mib, static_cast<double>(e.params), have_mib);
    throw Error(line);
  }
}

// The result-changing differences between the config a checkpoint was trained with (its weights'
// metadata) and `now`: [{key, from, to}]; null when the checkpoint carries no readable config.
nlohmann::json checkpoint_config_changes(const CheckpointInfo& ck, const RunConfig& now,
                                         std::vector<std::string>& notes) {
  std::map<std::string, std::string> meta;
  RunConfig then;
  try {
    meta = read_safetensors_metadata(ck.weights_path);
    if (!meta.count("config")) {
      notes.push_back(ck.weights_path + " carries no config; config edits were not checked");
      return nullptr;
    }
    then = RunConfig::from_json(
        parse_json(meta.at("config"), ck.weights_path + " (stored config)", ""));
  } catch (const Error& e) {
    notes.push_back(std::string("config edits were not checked: ") + e.what());
    return nullptr;
  }
  std::map<std::string, nlohmann::json> a, b;
  // A moved run tree is no edit: both sides' files are found from the run folder, then compared.
  const std::string run_dir =
      std::filesystem::path(ck.weights_path).parent_path().parent_path().string();
  nlohmann::json tj = then.to_json(), nj = now.to_json();
  resolve_run_files(tj, run_dir);
  resolve_run_files(nj, run_dir);
  flatten_config(portable_config(tj), "", a);
  flatten_config(portable_config(nj), "", b);
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& [key, value] : b) {
    if (result_neutral_keys().count(key)) continue;
    auto it = a.find(key);
    if (it == a.end() || it->second != value)
      changes.push_back({{"key", key},
                         {"from", it == a.end() ? nlohmann::json(nullptr) : it->second},
                         {"to", value}});
  }
  return changes;
}

std::string list_changes(const nlohmann::json& changes) {
  std::string s;
  for (const auto& c : changes) {
    if (s.size() > 600) {
      s += ", …";
      break;
    }
    s += (s.empty() ? "" : ", ") + c["key"].get<std::string>() + " " + json_brief(c["from"], 40) +
         " → " + json_brief(c["to"], 40);
  }
  return s;
}

// Why a run folder without a committed checkpoint must have written one (empty when nothing
// says so): metrics past the first checkpoint step, a final held-out evaluation or a divergence
// (each followed by a checkpoint), or a summary that the trainer writes only after a checkpoint.
// Such a folder lost its sidecars; it is not restarted over its weights.
std::string checkpoint_evidence(const RunStore& store, const RunConfig& c,
                                const std::string& status) {
  if (status == "cancelled" || status == "diverged")
    return store.summary_path() + " says the run was " + status +
           ", which is recorded only after a checkpoint";
  int64_t last = -1;
  for (const auto& r : read_metrics(store.metrics_path()).records) {
    const int64_t step = json_int_or(r, "step", -1);
    last = std::max(last, step);
    if (r.contains("heldout_bpb"))
      return store.metrics_path() + " records the final held-out evaluation (step " +
             std::to_string(step) + "), after which a checkpoint is always written";
    if (json_string_or(r, "event", "") == "diverged")
      return store.metrics_path() + " records a divergence at step " + std::to_string(step) +
             ", recorded after its checkpoint";
  }
  const int64_t every = c.train.checkpoint_every;
  if (every > 0 && last > every)
    return store.metrics_path() + " records step " + std::to_string(last) +
           " and train.checkpoint_every is " + std::to_string(every) +
           ", so the checkpoint of step " + std::to_string(every) + " was committed";
  return {};
}

// Range checks of the resume state a checkpoint's sidecar and optimizer file carry, before
// anything is loaded: a tampered or corrupted value is refused, never trained on.
void check_resume_state(const CheckpointInfo& ck) {
  const auto& s = ck.sidecar;
  const std::string where = ck.sidecar_path;
  const std::string fix =
      "; the checkpoint's state is damaged — restore the sidecar from a copy, or move checkpoint "
      "step " +
      std::to_string(ck.step) + " aside to resume from an earlier one";
  constexpr int64_t kMaxTokens = int64_t(1) << 53;  // exact in a double, no overflow when added
  if (ck.step < 0) throw Error(where + ": step " + std::to_string(ck.step) + " is negative" + fix);
  const int64_t tokens = json_int_or(s, "tokens", -1);
  if (tokens < 0 || tokens > kMaxTokens || (ck.step > 0 && tokens == 0) ||
      (ck.step == 0 && tokens != 0))
    throw Error(where + ": \"tokens\" is " +
                (s.contains("tokens") ? json_brief(s["tokens"]) : "missing") +
                ", not a token count for step " + std::to_string(ck.step) + fix);
  if (s.contains("wall_s")) {
    const double w = json_number_or(s, "wall_s", -1);
    if (!(w >= 0 && w < 1e10))
      throw Error(where + ": \"wall_s\" is " + json_brief(s["wall_s"]) +
                  ", not a number of seconds" + fix);
  }
  if (s.contains("last_eval_step")) {
    const int64_t e = json_int_or(s, "last_eval_step", INT64_MIN);
    if (e < -1 || e > ck.step)
      throw Error(where + ": \"last_eval_step\" is " + json_brief(s["last_eval_step"]) +
                  ", outside [-1, " + std::to_string(ck.step) + "]" + fix);
  }
  if (s.contains("last_val_bpb")) {
    const double v = json_number_or(s, "last_val_bpb", NAN);
    if (!(v == -1 || (v >= 0 && v < 1e6)))
      throw Error(where + ": \"last_val_bpb\" is " + json_brief(s["last_val_bpb"]) +
                  ", neither -1 nor a bits-per-byte figure" + fix);
  }
  const auto& loader = s["loader"];
  const int64_t batches = json_int_or(loader, "batches", -1);
  if (batches < 0 || batches > kMaxTokens || (ck.step > 0) != (batches > 0))
    throw Error(where + ": the loader state's \"batches\" is " +
                (loader.contains("batches") ? json_brief(loader["batches"]) : "missing") +
                ", not a batch count for step " + std::to_string(ck.step) + fix);
  // The optimizer's per-parameter step counters: each update counts once, so 0 … step.
  std::map<std::string, std::string> meta;
  try {
    meta = read_safetensors_metadata(ck.optimizer_path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + fix);
  }
  if (!meta.count("scalar_state"))
    throw Error(ck.optimizer_path + " has no scalar optimizer state" + fix);
  const nlohmann::json st =
      parse_json(meta.at("scalar_state"), ck.optimizer_path + " (scalar_state)", fix.substr(2));
  if (!st.is_object() || !st.contains("steps") || !st["steps"].is_object())
    throw Error(ck.optimizer_path + ": the scalar optimizer state has no \"steps\"" + fix);
  for (auto it = st["steps"].begin(); it != st["steps"].end(); ++it) {
    const int64_t t = json_int_or(st["steps"], it.key().c_str(), -1);
    if (!it->is_number_integer() || t < 0 || t > ck.step)
      throw Error(ck.optimizer_path + ": the optimizer step counter of '" +
                  brief_text(it.key(), 80) + "' is " + json_brief(*it) + ", outside [0, " +
                  std::to_string(ck.step) + "]" + fix);
  }
}

}  // namespace gllm
