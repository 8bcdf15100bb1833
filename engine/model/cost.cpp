// What a model costs: analytic FLOPs and training memory of a run, and seed 001's Table 1b
// accounting, both from the parameter counts (engine/model/param_count.h) and the window pattern.
#include "engine/model/cost.h"

#include <algorithm>

namespace gllm {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

std::vector<int64_t> layer_windows(const ModelConfig& m) {
  const int64_t T = m.sequence_len;
  const int64_t S = m.short_window > 0 ? m.short_window : T / 2;
  const std::string pat = m.window_pattern.empty() ? "L" : m.window_pattern;
  std::vector<int64_t> w;
  const int L = m.layers();
  for (int i = 0; i < L; ++i) {
    const char ch = pat[static_cast<size_t>(i) % pat.size()];
    const bool is_long = i == L - 1 || ch == 'L' || ch == 'l';
    w.push_back(std::min<int64_t>(is_long ? T : S, T));
  }
  return w;
}

CostEstimate estimate_cost(const RunConfig& c, int64_t vocab, bool fused_cpu_logits) {
  CostEstimate e;
  ParamCounts pc = count_params(c, vocab);
  const int d = c.model.width();
  const int64_t T = c.model.sequence_len;
  e.params = pc.total_params;
  e.matmul_params = pc.transformer_matrices + pc.lm_head + pc.level_proj;
  // Attention: QKᵀ and AV, forward + backward = 12·d per attended key; window w sees ≤ w+1 keys,
  // on average about min(w, T/2) of them under the causal mask.
  const std::vector<int64_t> windows = layer_windows(c.model);
  double attn = 0;
  for (int64_t window : windows) {
    const double w = static_cast<double>(window);
    double mean_keys = w >= T ? T / 2.0 : w - w * w / (2.0 * T);  // average over positions
    attn += 12.0 * d * mean_keys;
  }
  e.flops_per_token = 6.0 * static_cast<double>(e.matmul_params) + attn;
  e.tokens_per_step = static_cast<int64_t>(c.train.device_batch) * c.train.grad_accum * T;
  e.flops_per_step = e.flops_per_token * static_cast<double>(e.tokens_per_step);
  // Persistent state as the engine allocates it (engine/model/gpt.cpp,
  // engine/optim/muon_adamw.cpp): the lookup tables (wte, value_embeds, hashed tables) in
  // model.storage's dtype, everything else fp32; a gradient like each weight; AdamW two moments in
  // the weight's dtype, or fp32 moments plus an fp32 master for bf16 embedding tables with
  // optim.embedding_state "fp32"; Muon one fp32 momentum per matrix (and the NorMuon vector,
  // small); the moment-free tables one fp32 count per row.
  const bool bf16_tables = c.model.storage == "bf16";
  const double table_bytes = bf16_tables ? 2 : 4;
  const bool fp32_master = bf16_tables && c.optim.embedding_state == "fp32";
  const bool moment_free = c.optim.oe_update == "moment_free";
  const double embeddings = static_cast<double>(pc.wte + pc.value_embeds);
  const double oe = static_cast<double>(pc.oe_params);
  const double tables = embeddings + oe;
  const double other = static_cast<double>(pc.total_params) - tables;
  e.weights_mib = (other * 4 + tables * table_bytes) / kMiB;
  e.grads_mib = e.weights_mib;
  const double embedding_like = embeddings + (moment_free ? 0.0 : oe);  // AdamW tables
  const double table_state =
      fp32_master ? 2 * 4 + 4 : 2 * table_bytes;  // moments (+ master) per element
  const double adam_other = static_cast<double>(pc.total_params - pc.transformer_matrices) - tables;
  double optimizer = embedding_like * table_state + adam_other * 2 * 4 +
                     static_cast<double>(pc.transformer_matrices) * 4;
  if (moment_free) optimizer += static_cast<double>(pc.oe_rows) * 4;
  e.optimizer_mib = optimizer / kMiB;
  // Activations kept for backward per token: about 20·d per layer (norms, q/k/v, attention
  // output, the 4d MLP hidden twice, residuals), attention probabilities H·w per layer, and the
  // logits: 3·V (raw, capped, softmax), or 1·V in the fused CPU loss's workspace; fp32.
  double per_token = 0;
  for (int64_t window : windows) {
    // A short window sees itself and w keys before it; a full one, the whole sequence.
    const double w =
        window < T ? static_cast<double>(std::min<int64_t>(window + 1, T)) : static_cast<double>(T);
    per_token += (12.0 + 2.0 * c.model.mlp_ratio) * d + c.model.heads() * w * 2.0;
  }
  per_token +=
      (fused_cpu_logits ? 1.0 : 3.0) * static_cast<double>(vocab > 0 ? vocab : c.data.vocab_size);
  e.activations_mib = per_token * 4.0 * static_cast<double>(c.train.device_batch) * T / kMiB;
  e.total_mib = e.weights_mib + e.grads_mib + e.optimizer_mib + e.activations_mib;
  return e;
}

nlohmann::json to_json(const CostEstimate& c) {
  return {{"params", c.params},
          {"matmul_params", c.matmul_params},
          {"flops_per_token", c.flops_per_token},
          {"tokens_per_step", c.tokens_per_step},
          {"flops_per_step", c.flops_per_step},
          {"weights_mib", c.weights_mib},
          {"grads_mib", c.grads_mib},
          {"optimizer_mib", c.optimizer_mib},
          {"activations_mib", c.activations_mib},
          {"total_mib", c.total_mib}};
}

double neumann_gram_flops(int64_t rows, int64_t d) {
  const double V = static_cast<double>(rows), D = static_cast<double>(d);
  return 4 * V * D * D + 14 * V * D + 3 * D * D + 3 * D;
}

Accounting account(const RunConfig& c, int64_t vocab_size, int64_t tokens_per_step) {
  Accounting a;
  a.params = count_params(c, vocab_size);
  const auto& m = c.model;
  const auto& o = c.optim;
  const int64_t V = vocab_size > 0 ? vocab_size : m.vocab_size;
  const int64_t L = m.layers(), d = m.width(), H = m.heads(), Dh = m.head_dim();
  const int64_t n_ve = V > 0 && d > 0 ? a.params.value_embeds / (V * d) : 0;
  a.result_json_params = a.params.scaling_params + a.params.query_scale;

  // Memory.
  const bool oe = m.oe_m > 0;
  const double table_bytes = m.storage == "bf16" ? 2 : 4;  // weight and gradient each
  const double oe_bytes = static_cast<double>(a.params.oe_params) * 2 * table_bytes +
                          static_cast<double>(a.params.oe_rows) * 4;
  a.memory.oe_tables = oe_bytes / kMiB;
  a.memory.fp32_embedding_state =
      static_cast<double>(a.params.wte + a.params.value_embeds) * 8 / kMiB;
  a.memory.query_scale = static_cast<double>(L * H * (Dh / 2)) * 16 / kMiB;
  const bool fp32_state = o.embedding_state == "fp32";
  a.memory.delta = (oe ? a.memory.oe_tables : 0) +
                   (fp32_state ? a.memory.fp32_embedding_state : 0) +
                   (m.query_scale ? a.memory.query_scale : 0);

  // FLOPs.
  auto& f = a.flops;
  f.tokens_per_step = tokens_per_step > 0 ? tokens_per_step
                                          : static_cast<int64_t>(c.train.device_batch) *
                                                m.sequence_len * c.train.grad_accum;
  const double tok = static_cast<double>(f.tokens_per_step);
  double attn = 0;
  for (int64_t w : layer_windows(m)) attn += 12.0 * H * Dh * static_cast<double>(w);
  const double dense = static_cast<double>(a.params.lm_head + a.params.transformer_matrices);
  f.model = (6.0 * dense + attn) * tok;
  f.oe_lookup = 8.0 * d * tok;
  f.oe_update = 5.0 * static_cast<double>(a.params.oe_rows) * (d / 4);
  f.bieq = 16.0 * static_cast<double>(a.params.transformer_matrices);
  a.neumann_tables = static_cast<int>(2 + n_ve);
  f.neumann_gram = a.neumann_tables * neumann_gram_flops(V, d);
  f.table_neumann = 0;
  if (oe)
    for (int j = 0; j < 4; ++j) f.table_neumann += neumann_gram_flops(m.oe_m + 2 * j, d / 4);
  f.query_scale = 4.0 * L * d * tok;
  auto add = [&](bool on, const char* name, double v) {
    if (!on) return;
    f.extra += v;
    f.enabled.push_back(name);
  };
  add(oe, "oe_lookup", f.oe_lookup);
  add(oe && o.oe_update == "moment_free", "oe_update", f.oe_update);
  add(o.bieq, "bieq", f.bieq);
  add(o.neumann, "neumann_gram", f.neumann_gram);
  add(oe && o.table_neumann, "table_neumann", f.table_neumann);
  add(m.query_scale, "query_scale", f.query_scale);
  return a;
}

nlohmann::json to_json(const Accounting& a) {
  const auto& p = a.params;
  const auto& f = a.flops;
  nlohmann::json j;
  j["scaling_params"] = p.scaling_params;
  j["result_json_params"] = a.result_json_params;
  j["oe_rows"] = p.oe_rows;
  j["oe_params"] = p.oe_params;
  j["total_params"] = p.total_params;
  j["components"] = {{"wte", p.wte},
                     {"lm_head", p.lm_head},
                     {"value_embeds", p.value_embeds},
                     {"transformer_matrices", p.transformer_matrices},
                     {"scalars", p.scalars},
                     {"query_scale", p.query_scale},
                     {"grades", p.grades},
                     {"level_proj", p.level_proj},
                     {"position", p.position}};
  j["memory_mib"] = {{"oe_tables", a.memory.oe_tables},
                     {"fp32_embedding_state", a.memory.fp32_embedding_state},
                     {"query_scale", a.memory.query_scale},
                     {"delta", a.memory.delta}};
  j["flops_per_step"] = {{"tokens_per_step", f.tokens_per_step},
                         {"model", f.model},
                         {"oe_lookup", f.oe_lookup},
                         {"oe_update", f.oe_update},
                         {"bieq", f.bieq},
                         {"neumann_gram", f.neumann_gram},
                         {"neumann_gram_tables", a.neumann_tables},
                         {"table_neumann", f.table_neumann},
                         {"query_scale", f.query_scale},
                         {"extra", f.extra},
                         {"extra_percent", f.model > 0 ? 100.0 * f.extra / f.model : 0.0},
                         {"enabled", f.enabled}};
  return j;
}

}  // namespace gllm
