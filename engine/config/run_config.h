// RunConfig: the one configuration type of a run, read and written as JSON by GUI, CLI and presets.
// Unknown keys and out-of-range values are errors naming the key path and the allowed range.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/data_config.h"
#include "engine/config/grading_config.h"
#include "engine/config/model_config.h"
#include "engine/config/optim_config.h"
#include "engine/io/config_schema.h"

namespace gllm {

struct TrainConfig {
  int64_t steps = 200;
  int device_batch = 8;            // rows of sequence_len tokens per micro-step
  int grad_accum = 1;              // micro-steps per step; derived when total_batch_tokens is set
  int64_t total_batch_tokens = 0;  // tokens per optimizer step over all processes; 0 = not given
  int seed = 42;
  int eval_every = 50;          // steps; 0 = only at the end
  int64_t eval_tokens = 65536;  // validation tokens per evaluation
  int64_t heldout_tokens = 131072;
  int checkpoint_every = 0;  // steps; 0 = only at the end
  int keep_checkpoints = 3;
  std::string device = "auto";  // auto | cpu | cuda
  std::string dtype = "fp32";   // fp32 | bf16 (autocast on CUDA)
  int threads = 0;              // 0 = all available cores

  static const Schema<TrainConfig>& schema();
  // With total_batch_tokens set, sets grad_accum = total_batch_tokens / (device_batch ·
  // sequence_len) (nanochat's total_batch_size; processes share these micro-steps, see
  // engine/dist plan_batch); throws ConfigError when it does not divide.
  void derive_grad_accum(int64_t sequence_len);
};

struct RunConfig {
  std::string name = "run";
  std::string description;
  ModelConfig model;
  GradingConfig grading;
  OptimConfig optim;
  DataConfig data;
  TrainConfig train;

  static const Schema<RunConfig>& schema();

  nlohmann::json to_json() const;
  // Reads a config from JSON over the defaults. A "base" key names a preset whose values are
  // read first (resolved against `preset_dir`), so arms can state only what they change.
  static RunConfig from_json(const nlohmann::json& j, const std::string& preset_dir = "");
  // Reads a preset or config file. Relative file paths it names (ladder, grades, profiles and
  // output-grade files, the text corpus) are looked up beside the file first, then from the
  // current folder, and stored absolute; a name found in neither stays as written.
  static RunConfig load(const std::string& path);
  void save(const std::string& path) const;  // atomic write
};

// Every leaf key of RunConfig with its type, range and help (for generated forms).
std::vector<FieldInfo> run_config_fields();
// Reads or writes one leaf by dotted path ("model.n_embd"); set validates the whole config.
nlohmann::json get_config_value(const RunConfig& c, const std::string& path);
void set_config_value(RunConfig& c, const std::string& path, const nlohmann::json& value);

// Presets: JSON files in the presets folder: $GLLM_PRESETS, else ./presets when the current folder
// is a project folder (it holds presets/tiny-cpu.json), else the source tree's presets/.
std::string presets_dir();
// A name ("tiny-cpu") or a path ("my.json"); throws gllm::Error listing available presets.
std::string resolve_preset_path(const std::string& name_or_path);
std::vector<std::string> list_presets();

}  // namespace gllm
