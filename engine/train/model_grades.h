// The grade tensors a model actually holds, read back for certificates: from the model a config
// builds (grade files resolved as training resolves them) or from a checkpoint's tensors.
// Torch-free.
#pragma once
#include <string>

#include "engine/config/run_config.h"
#include "engine/grading/certify.h"

namespace gllm {

// Builds the model `config` describes (its grade files resolved and checked, weights initialised
// from train.seed) and reads its grade tensors back. `label` names the config in the source line.
grading::ModelGrades model_grades_from_config(const RunConfig& config, const std::string& label);

// Reads the grade tensors of a run folder (its newest valid checkpoint), a checkpoint's
// .safetensors or .json sidecar, or a model file written by gllm.
grading::ModelGrades model_grades_from_checkpoint(const std::string& path);

}  // namespace gllm
