// RunConfig JSON: schema composition, "base" preset inheritance, atomic save, preset lookup.
// The GUI form, the CLI and the presets folder all go through these functions.
#include "engine/config/run_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "engine/config/run_paths.h"
#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

#ifndef GLLM_SOURCE_PRESETS_DIR
#define GLLM_SOURCE_PRESETS_DIR "presets"
#endif

namespace gllm {

const Schema<TrainConfig>& TrainConfig::schema() {
  static const Schema<TrainConfig> s = [] {
    Schema<TrainConfig> s;
    s.integer("steps", &TrainConfig::steps, 1, 1e9, "Optimizer steps")
        .integer("device_batch", &TrainConfig::device_batch, 1, 65536, "Rows per micro-step")
        .integer(
            "grad_accum", &TrainConfig::grad_accum, 1, 4096,
            "Micro-steps per optimizer step (derived from total_batch_tokens when that is set)")
        .integer("total_batch_tokens", &TrainConfig::total_batch_tokens, 0, 1e12,
                 "Tokens per optimizer step over all processes; 0 = device_batch × grad_accum × "
                 "sequence_len")
        .integer("seed", &TrainConfig::seed, 0, 2147483647, "Seed of initialisation and data order")
        .integer("eval_every", &TrainConfig::eval_every, 0, 1e9,
                 "Validation BPB every N steps; 0 = at the end")
        .integer("eval_tokens", &TrainConfig::eval_tokens, 1, 1e12,
                 "Validation tokens per evaluation")
        .integer("heldout_tokens", &TrainConfig::heldout_tokens, 1, 1e12,
                 "Held-out tokens in the final evaluation")
        .integer("checkpoint_every", &TrainConfig::checkpoint_every, 0, 1e9,
                 "Checkpoint every N steps; 0 = at the end")
        .integer("keep_checkpoints", &TrainConfig::keep_checkpoints, 1, 1000,
                 "Checkpoints kept (the last K)")
        .choice("device", &TrainConfig::device, {"auto", "cpu", "cuda"}, "Device")
        .choice("dtype", &TrainConfig::dtype, {"fp32", "bf16"},
                "Compute precision (bf16 autocast on CUDA)")
        .integer("threads", &TrainConfig::threads, 0, 1024, "CPU threads; 0 = all available cores");
    return s;
  }();
  return s;
}

void TrainConfig::derive_grad_accum(int64_t sequence_len) {
  if (total_batch_tokens == 0) return;
  const int64_t micro = static_cast<int64_t>(device_batch) * sequence_len;  // tokens per micro-step
  const int64_t accum = micro > 0 ? total_batch_tokens / micro : 0;
  if (micro <= 0 || total_batch_tokens % micro != 0 || accum < 1 || accum > 4096) {
    const int64_t lo = std::max<int64_t>(1, accum) * micro, hi = (accum + 1) * micro;
    throw ConfigError(
        "train.total_batch_tokens",
        "is " + std::to_string(total_batch_tokens) + ", not a multiple of train.device_batch × " +
            "model.sequence_len = " + std::to_string(device_batch) + " × " +
            std::to_string(sequence_len) + " = " + std::to_string(micro) +
            " tokens per micro-step between 1 and 4096 micro-steps; use " + std::to_string(lo) +
            (hi != lo ? " or " + std::to_string(hi) : "") + ", or change train.device_batch");
  }
  grad_accum = static_cast<int>(accum);
}

const Schema<RunConfig>& RunConfig::schema() {
  static const Schema<RunConfig> s = [] {
    Schema<RunConfig> s;
    s.text("name", &RunConfig::name, "Run name")
        .text("description", &RunConfig::description, "What this run or preset is for")
        .section("model", &RunConfig::model, ModelConfig::schema(), "Model shape")
        .section("grading", &RunConfig::grading, GradingConfig::schema(), "Grades and graded parts")
        .section("optim", &RunConfig::optim, OptimConfig::schema(), "Optimizer")
        .section("data", &RunConfig::data, DataConfig::schema(), "Data")
        .section("train", &RunConfig::train, TrainConfig::schema(), "Training loop");
    s.check([](const RunConfig& c, const std::string&) {
      if (c.optim.embedding_state == "fp32" && c.model.storage != "bf16")
        throw ConfigError(
            "optim.embedding_state",
            "is \"fp32\" (an fp32 master and fp32 moments for bf16-stored embedding "
            "tables), but model.storage is \"" +
                c.model.storage +
                "\": the tables are already fp32 and no master can exist; set "
                "model.storage to \"bf16\" (seed 001) or embedding_state to \"bf16\"");
      if (c.model.wte_init == "reference" && c.grading.profiles_file.empty())
        throw ConfigError("model.wte_init",
                          "is \"reference\" but grading.profiles_file is empty: the reference "
                          "table comes with a profiles file written by `gllm profiles --reference "
                          "token_ppmi`; set grading.profiles_file to it");
      if (c.model.vocab_size != 0 && c.model.vocab_size != c.data.vocab_size)
        throw ConfigError("model.vocab_size",
                          "is " + std::to_string(c.model.vocab_size) + " but data.vocab_size is " +
                              std::to_string(c.data.vocab_size) +
                              "; set model.vocab_size to 0 to follow the tokenizer");
      if (c.grading.mlge && c.grading.level_dims.empty() && c.model.width() % c.grading.levels != 0)
        throw ConfigError("grading.levels", "width " + std::to_string(c.model.width()) +
                                                " does not split into " +
                                                std::to_string(c.grading.levels) +
                                                " equal levels; give grading.level_dims");
      if (c.grading.mlge && !c.grading.level_dims.empty()) {
        int sum = 0;
        for (int d : c.grading.level_dims) sum += d;
        if (sum != c.model.width())
          throw ConfigError("grading.level_dims", "sum " + std::to_string(sum) +
                                                      " must equal the model width " +
                                                      std::to_string(c.model.width()));
      }
    });
    return s;
  }();
  return s;
}

nlohmann::json RunConfig::to_json() const {
  return schema().to_json(*this);
}

namespace {

constexpr int kMaxConfigDepth = 16;  // a RunConfig is 3 levels deep; lists add one
constexpr int kMaxBaseChain = 16;    // presets naming presets naming presets …
const JsonLimits kConfigLimits{4ull << 20, kMaxConfigDepth};  // 4 MiB; presets are a few KiB

void read_with_bases(RunConfig& c, const nlohmann::json& j, const std::string& preset_dir,
                     std::set<std::string>& seen) {
  if (!j.is_object())
    throw ConfigError("", "a run config must be a JSON object, got " + json_brief(j));
  auto base_it = j.find("base");
  if (base_it != j.end()) {
    if (!base_it->is_string())
      throw ConfigError("base", "expected a preset name, got " + json_brief(*base_it));
    const std::string base = base_it->get<std::string>();
    std::string path = base;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      std::string dir = preset_dir.empty() ? presets_dir() : preset_dir;
      path = join_path(
          dir, base + (base.size() > 5 && base.substr(base.size() - 5) == ".json" ? "" : ".json"));
    }
    if (!seen.insert(path).second)
      throw ConfigError("base",
                        "preset '" + brief_text(base, 80) + "' includes itself; break the cycle");
    if (static_cast<int>(seen.size()) > kMaxBaseChain)
      throw ConfigError("base", "presets name more than " + std::to_string(kMaxBaseChain) +
                                    " bases in a chain; state the values directly");
    if (!file_exists(path))
      throw ConfigError("base", "preset '" + brief_text(base, 80) + "' not found (looked for " +
                                    brief_text(path, 200) + ")");
    nlohmann::json bj;
    try {
      bj = read_json_file(path, "fix the preset file", kConfigLimits);
    } catch (const Error& e) {
      throw ConfigError("base", e.what());
    }
    read_with_bases(c, bj, preset_dir, seen);
  }
  // Read sections without running the cross-section checks until everything is merged. The
  // object is read in place: no copy of what may be a large value.
  const auto& schema = RunConfig::schema();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "base") continue;
    const auto* f = schema.find(it.key());
    if (!f) {
      std::vector<std::string> known{"base"};
      for (const auto& k : schema.fields()) known.push_back(k.info.path);
      throw ConfigError(brief_text(it.key(), 80),
                        "unknown key; known keys here: " + Schema<RunConfig>::join(known));
    }
    f->set(c, it.value(), it.key());
  }
}

}  // namespace

RunConfig RunConfig::from_json(const nlohmann::json& j, const std::string& preset_dir) {
  // Bounded before anything walks the value recursively (errors quote it; sections copy it).
  check_json_depth(j, kMaxConfigDepth, "run config",
                   "a RunConfig is a few levels deep; fix the file");
  RunConfig c;
  std::set<std::string> seen;
  read_with_bases(c, j, preset_dir, seen);
  c.train.derive_grad_accum(c.model.sequence_len);
  schema().validate(c);
  return c;
}

RunConfig RunConfig::load(const std::string& path) {
  nlohmann::json j = read_json_file(path, "fix the file", kConfigLimits);
  std::string dir = std::filesystem::path(path).parent_path().string();
  RunConfig c;
  try {
    c = from_json(j, dir.empty() ? presets_dir() : dir);
  } catch (const ConfigError& e) {
    throw ConfigError(e.key_path, std::string("in ") + path + ": " + e.what());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  // Files a preset names (ladders, grades, profiles, corpora) are found beside the preset file
  // first, then in the folders above it, the project folder and the current folder
  // (run_paths.h); the resolved config holds the path found.
  resolve_run_files(c, dir.empty() ? std::string(".") : dir);
  return c;
}

void RunConfig::save(const std::string& path) const {
  write_file_atomic(path, to_json().dump(2) + "\n");
}

std::vector<FieldInfo> run_config_fields() {
  std::vector<FieldInfo> out;
  RunConfig::schema().describe(out);
  return out;
}

namespace {

// "model.n_embd" → the JSON pointer "/model/n_embd"; a path that is not a plain dotted key
// (empty parts, '~', '/', list indices) is refused rather than read as a pointer.
nlohmann::json::json_pointer config_pointer(const std::string& path) {
  const std::string shown = brief_text(path, 80);
  if (path.empty() || path.size() > 256)
    throw ConfigError(shown, "not a config key; give a dotted key such as model.n_embd");
  std::string p = "/";
  for (size_t i = 0; i < path.size(); ++i) {
    const char ch = path[i];
    const bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
    if (!ok || (ch == '.' && (i == 0 || i + 1 == path.size() || path[i + 1] == '.')))
      throw ConfigError(shown, "not a config key; give a dotted key such as model.n_embd");
    p += ch == '.' ? '/' : ch;
  }
  return nlohmann::json::json_pointer(p);
}

}  // namespace

nlohmann::json get_config_value(const RunConfig& c, const std::string& path) {
  nlohmann::json j = c.to_json();
  const auto ptr = config_pointer(path);
  if (!j.contains(ptr)) throw ConfigError(brief_text(path, 80), "unknown key");
  return j.at(ptr);
}

void set_config_value(RunConfig& c, const std::string& path, const nlohmann::json& value) {
  check_json_depth(value, kMaxConfigDepth, brief_text(path, 80), "give a plain value");
  nlohmann::json j = c.to_json();
  const auto ptr = config_pointer(path);
  if (!j.contains(ptr)) throw ConfigError(brief_text(path, 80), "unknown key");
  j[ptr] = value;
  c = RunConfig::from_json(j);
}

std::string presets_dir() {
  if (const char* d = std::getenv("GLLM_PRESETS"); d && *d) return d;
  // The project folder the program is started in (a clone's presets/, as the README runs it),
  // else the source tree it was built from.
  std::error_code ec;
  const auto here = std::filesystem::current_path(ec) / "presets";
  if (!ec && std::filesystem::is_regular_file(here / "tiny-cpu.json", ec)) return here.string();
  return GLLM_SOURCE_PRESETS_DIR;
}

std::vector<std::string> list_presets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(presets_dir(), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_preset_path(const std::string& name_or_path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) return name_or_path;
  std::string p = join_path(presets_dir(), name_or_path);
  if (p.size() < 5 || p.substr(p.size() - 5) != ".json") p += ".json";
  if (std::filesystem::exists(p, ec)) return p;
  auto names = list_presets();
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error("preset '" + brief_text(name_or_path, 120) + "' not found in " + presets_dir() +
              (list.empty() ? "" : "; available: " + list) + " (or give a path to a JSON file)");
}

}  // namespace gllm
