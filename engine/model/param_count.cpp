// Parameter accounting without torch: the same shapes gpt.cpp builds, counted analytically.
// DEPTH 6/8 at V = 8192 give 26,345,772 / 50,332,176 scaling parameters (test_model_params).
#include "engine/model/param_count.h"

#include <algorithm>
#include <string>

#include "engine/io/error.h"

namespace gllm {

bool uses_levels(const RunConfig& c) {
  return c.grading.mlge || c.model.positional == "graded_sinusoidal" ||
         c.model.mlp == "geglu_levels";
}

std::vector<int64_t> resolve_level_dims(const RunConfig& c) {
  const int64_t d = c.model.width();
  const auto& g = c.grading;
  std::vector<int64_t> dims;
  if (!g.level_dims.empty()) {
    int64_t sum = 0;
    for (int v : g.level_dims) {
      dims.push_back(v);
      sum += v;
    }
    if (sum != d)
      throw ConfigError("grading.level_dims", "sum to " + std::to_string(sum) +
                                                  " but the model width is " + std::to_string(d) +
                                                  "; make them add up to d");
    return dims;
  }
  if (g.levels > d)
    throw ConfigError("grading.levels", std::to_string(g.levels) + " levels do not fit in width " +
                                            std::to_string(d) + "; use at most d levels");
  for (int l = 0; l < g.levels; ++l) dims.push_back(d / g.levels + (l < d % g.levels ? 1 : 0));
  return dims;
}

ParamCounts count_params(const RunConfig& c, int64_t vocab_size) {
  const auto& m = c.model;
  const int64_t V = vocab_size > 0 ? vocab_size : m.vocab_size;
  if (V <= 0)
    throw ConfigError("model.vocab_size",
                      "is 0 (taken from the tokenizer); pass a vocabulary size");
  const int64_t L = m.layers(), d = m.width(), H = m.heads(), Dh = m.head_dim();
  ParamCounts p;
  p.wte = V * d;
  p.lm_head = V * d;
  int64_t n_ve = 0;
  if (m.value_embeds)
    for (int64_t i = 0; i < L; ++i)
      if (i % 2 == (L - 1) % 2) ++n_ve;
  p.value_embeds = n_ve * V * d;
  int64_t mlp = 2 * m.mlp_ratio * d * d;
  if (m.mlp == "geglu_levels") {
    mlp = 0;
    for (int64_t dl : resolve_level_dims(c)) mlp += 3 * m.mlp_ratio * dl * dl;
  }
  p.transformer_matrices = L * (4 * d * d + mlp) + n_ve * std::min<int64_t>(32, d) * H;
  p.scalars = 2 * L;
  p.scaling_params = p.wte + p.lm_head + p.value_embeds + p.transformer_matrices + p.scalars;
  if (m.oe_m > 0) {
    p.oe_rows = 4 * m.oe_m + 12;
    p.oe_params = p.oe_rows * (d / 4);
  }
  if (m.query_scale) p.query_scale = L * H * (Dh / 2);
  if (c.grading.attention) p.grades += L * H * (Dh / 2);
  if (c.grading.mlge || m.positional == "graded_sinusoidal") p.grades += d;
  if (uses_levels(c)) p.level_proj = d * d;
  if (m.positional == "absolute") p.position = static_cast<int64_t>(m.sequence_len) * d;
  p.total_params =
      p.scaling_params + p.oe_params + p.query_scale + p.grades + p.level_proj + p.position;
  return p;
}

}  // namespace gllm
