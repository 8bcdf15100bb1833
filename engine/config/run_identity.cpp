// run_identity implementation: a recursive diff of two RunConfig JSON trees, the readable label
// built from it, and an FNV-1a hash of the canonical dump with non-result keys removed.
#include "engine/config/run_identity.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>

#include "engine/config/run_config.h"
#include "engine/config/run_paths.h"

namespace gllm {

namespace {

// Keys that never make two runs different configurations.
bool identity_free(const std::string& path) {
  return path == "name" || path == "description" || path == "base" || path == "train.seed";
}

void diff(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
          std::vector<ConfigChange>& out) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      const std::string p = path.empty() ? k : path + "." + k;
      const nlohmann::json none;
      diff(a.contains(k) ? a[k] : none, b.contains(k) ? b[k] : none, p, out);
    }
    return;
  }
  if (identity_free(path)) return;
  // 0.1 and 0.1000000000000000055 are one setting; integers and reals of one value too.
  if (a.is_number() && b.is_number() && a.get<double>() == b.get<double>()) return;
  if (a != b) out.push_back({path, b, a});
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 6 hex digits over a list of label parts: folded parts still tell two labels apart.
std::string parts_digest(const std::vector<std::string>& parts) {
  std::string all;
  for (const auto& p : parts) all += p + "\n";
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(all)));
  return std::string(buf, 6);
}

std::string leaf(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string compact(const nlohmann::json& v) {
  if (v.is_null()) return "none";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
    return buf;
  }
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.empty()) return "none";
    const auto slash = s.find_last_of("/\\");
    if (slash != std::string::npos) s = s.substr(slash + 1);  // a file by its name
    const auto ext = s.rfind(".json");
    if (ext != std::string::npos && ext + 5 == s.size()) s = s.substr(0, ext);
    return s;
  }
  if (v.is_array()) {
    if (v.size() > 4) return std::to_string(v.size()) + "values-" + parts_digest({v.dump()});
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ",") + compact(e);
    return s;
  }
  return "set";
}

// Characters a folder name keeps; anything else becomes '_'.
std::string folder_safe(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    out += (std::isalnum(c) || c == '.' || c == '+' || c == '=' || c == ',' || c == '-' ||
            c == '_' || c >= 0x80)
               ? static_cast<char>(c)
               : '_';
  return out;
}

void erase_path(nlohmann::json& j, const std::string& path) {
  const auto dot = path.find('.');
  if (dot == std::string::npos) {
    if (j.is_object()) j.erase(path);
    return;
  }
  const std::string head = path.substr(0, dot);
  if (j.is_object() && j.contains(head)) erase_path(j[head], path.substr(dot + 1));
}

// The settings of `config` that cannot change what it trains, because the component that reads
// them is off: the level grades without MLGE, the head grades without graded attention, the output
// grades without the graded loss, λ and C without any graded part, grade_lr with frozen grades.
std::set<std::string> inert_set(const nlohmann::json& config) {
  std::set<std::string> out;
  if (!config.is_object() || !config.contains("grading") || !config["grading"].is_object())
    return out;
  const auto& g = config["grading"];
  auto on = [&](const char* k) { return g.contains(k) && g[k].is_boolean() && g[k].get<bool>(); };
  auto add = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys) out.insert(std::string("grading.") + k);
  };
  if (!on("mlge"))
    add({"levels", "level_dims", "level_grades", "level_grades_source", "ladder_file", "ladder_arm",
         "basis_trainable", "orth_weight"});
  if (!on("attention"))
    add({"head_grades", "grades_file", "attn_grades", "random_seed", "diversity_weight"});
  if (!on("graded_loss")) add({"output_grades", "output_grades_file", "output_lambda"});
  if (!on("attention") && !on("mlge")) add({"magnitude_weight", "grades_trainable"});
  if (!on("attention") && !on("mlge") && !on("graded_loss")) add({"lambda", "clip"});
  if (!on("grades_trainable") || (!on("attention") && !on("mlge"))) add({"grade_lr"});
  return out;
}

}  // namespace

std::vector<std::string> inert_settings(const nlohmann::json& config) {
  const auto s = inert_set(config);
  return {s.begin(), s.end()};
}

std::vector<ConfigChange> config_changes(const nlohmann::json& config,
                                         const nlohmann::json& preset) {
  std::vector<ConfigChange> out;
  // A file named by its absolute path and the same file project-relative is no change.
  diff(portable_config(config), portable_config(preset), "", out);
  return out;
}

std::string describe_changes(const std::vector<ConfigChange>& changes) {
  std::string out;
  for (const auto& c : changes)
    out += (out.empty() ? "" : "\n") + c.path + ": " + compact(c.from) + " → " + compact(c.to);
  return out;
}

std::string run_label(const nlohmann::json& config, const nlohmann::json& preset, int max_parts) {
  const std::string base =
      preset.is_object() && preset.contains("name") && preset["name"].is_string()
          ? preset["name"].get<std::string>()
          : "run";
  const auto changes = config_changes(config, preset);
  std::vector<std::string> parts;
  // A setting the run cannot use names no change (level grades with MLGE off, say).
  std::set<std::string> implied = inert_set(config);
  const auto* grading = config.contains("grading") ? &config["grading"] : nullptr;
  if (grading && grading->value("mlge", false) && grading->contains("ladder_arm") &&
      (*grading)["ladder_arm"].is_string() &&
      !(*grading)["ladder_arm"].get<std::string>().empty()) {
    for (const auto& c : changes)
      if (c.path == "grading.ladder_arm" || c.path == "grading.mlge") {
        parts.push_back("mlge." + (*grading)["ladder_arm"].get<std::string>());
        for (const char* k :
             {"mlge", "level_grades_source", "ladder_file", "ladder_arm", "profiles_file",
              "basis_trainable", "grades_trainable", "level_grades"})
          implied.insert(std::string("grading.") + k);
        break;
      }
  }
  for (const auto& c : changes) {
    if (implied.count(c.path)) continue;
    const std::string key = leaf(c.path);
    if (c.to.is_boolean())
      parts.push_back(c.to.get<bool>() ? key : "no-" + key);
    else
      parts.push_back(key + "=" + compact(c.to));
  }
  std::string out = base;
  const int shown = std::min<int>(max_parts, static_cast<int>(parts.size()));
  for (int i = 0; i < shown; ++i) out += "+" + parts[static_cast<size_t>(i)];
  if (static_cast<int>(parts.size()) > shown) {
    // The folded parts keep a digest, so two runs that differ only there never share a name.
    const std::vector<std::string> folded(parts.begin() + shown, parts.end());
    out += "+" + std::to_string(folded.size()) + "more-" + parts_digest(folded);
  }
  return folder_safe(out);
}

std::string effective_config_hash(const nlohmann::json& config) {
  nlohmann::json j = portable_config(config);  // the same files on any checkout
  // A setting the run cannot use counts at its default: such runs give the same results.
  static const nlohmann::json defaults = RunConfig{}.to_json();
  for (const std::string& path : inert_set(j)) {
    const std::string key = path.substr(path.find('.') + 1);
    if (!j["grading"].contains(key)) continue;
    if (defaults["grading"].contains(key))
      j["grading"][key] = defaults["grading"][key];
    else
      j["grading"].erase(key);
  }
  // Keys added since runs were first committed count only when set away from their default, so
  // a run written before a key existed hashes as one written after.
  if (j.contains("data") && j["data"].is_object() && j["data"].value("windows", "") == "documents")
    j["data"].erase("windows");
  for (const char* p : {"name", "description", "base", "train.seed", "train.checkpoint_every",
                        "train.keep_checkpoints", "train.threads"})
    erase_path(j, p);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(j.dump())));
  return std::string(buf, 12);
}

namespace {

// Every occurrence of `seed` in `s` that is a whole number (no digit either side) → "{seed}".
std::string template_seed(const std::string& s, const std::string& seed) {
  std::string out;
  size_t from = 0;
  for (size_t at = s.find(seed); at != std::string::npos; at = s.find(seed, at + 1)) {
    const bool before = at > 0 && std::isdigit(static_cast<unsigned char>(s[at - 1]));
    const size_t end = at + seed.size();
    const bool after = end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]));
    if (before || after) continue;
    out += s.substr(from, at - from) + "{seed}";
    from = end;
  }
  return out + s.substr(from);
}

void template_seed_in(nlohmann::json& j, const std::string& seed) {
  if (j.is_string())
    j = template_seed(j.get<std::string>(), seed);
  else if (j.is_structured())
    for (auto& v : j) template_seed_in(v, seed);
}

}  // namespace

std::string arm_config_hash(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("train") || !config["train"].contains("seed") ||
      !config["train"]["seed"].is_number_integer())
    return effective_config_hash(config);
  nlohmann::json j = config;
  const std::string seed = std::to_string(config["train"]["seed"].get<int64_t>());
  for (const char* section : {"grading", "data", "model"})
    if (j.contains(section)) template_seed_in(j[section], seed);
  return effective_config_hash(j);
}

std::string run_label_of(const nlohmann::json& run_config) {
  if (!run_config.is_object() || !run_config.contains("name") || !run_config["name"].is_string())
    return "run";
  const std::string name = run_config["name"].get<std::string>();
  nlohmann::json preset;
  try {
    preset = RunConfig::load(resolve_preset_path(name)).to_json();
  } catch (const Error&) {
    return name;  // an arm's own name, or a label the workbench gave the run when launching it
  }
  try {
    return run_label(RunConfig::from_json(run_config).to_json(), preset);
  } catch (const Error&) {
    return name;
  }
}

}  // namespace gllm
