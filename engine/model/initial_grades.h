// The head grades a model starts with, computed without building the model: the grade editor
// shows exactly these, and the model's initialisation calls the same function.
#pragma once
#include <vector>

#include "engine/config/run_config.h"

namespace gllm {

// The attention grades (layers × heads × RoPE planes, row-major layer, head, plane) a fresh model
// of `config` holds at step 0: `given` when not empty (a grades file's or grading.attn_grades'
// values, already resolved and sized), else zeros (uniform) or U[0, q_max) from grading.random_seed
// (random); then, for trainable grades with a diversity weight, the ±1 % of q_max spread that lets
// Eq. 20's repulsion act; clamped to [0, q_max]. Values as the model stores them (fp32).
std::vector<float> initial_head_grades(const RunConfig& config,
                                       const std::vector<double>& given = {});

}  // namespace gllm
