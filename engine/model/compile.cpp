// Compile-to-standard (seed 000 Cor. 1 as docs/design.md fixes it): every grade folded into
// ordinary weights so the exported model has no grade tensors and computes the same eval logits.
#include <cmath>

#include "engine/io/error.h"
#include "engine/model/gpt.h"

namespace gllm {

GPT compile_to_standard(GPT& graded) {
  torch::NoGradGuard no_grad;
  auto& src = *graded;
  auto& S = src.parts();
  RunConfig cfg = src.config();
  const bool qk_norm = cfg.model.qk_norm;
  const bool had_attn = cfg.grading.attention;
  const int L = src.n_layer(), H = src.n_head(), Dh = src.head_dim();
  const double log_lambda = std::log(src.grade_base());

  // The standard model: grading off, graded PE → absolute table, Q/K grades → query scale.
  cfg.grading.attention = false;
  cfg.grading.mlge = false;
  cfg.grading.graded_loss = false;
  cfg.grading.grades_trainable = false;
  cfg.grading.head_grades = "uniform";
  cfg.grading.profiles_file.clear();
  cfg.grading.output_grades = "uniform";
  cfg.grading.orth_weight = cfg.grading.diversity_weight = cfg.grading.magnitude_weight = 0;
  const bool had_pe = cfg.model.positional == "graded_sinusoidal";
  if (had_pe) cfg.model.positional = "absolute";
  if (had_attn && qk_norm) cfg.model.query_scale = true;
  cfg.model.query_scale_frozen_layers.clear();  // the mask is a training device: fold it in
  cfg.model.query_scale_frozen_planes = 0;
  // Folded tables are kept in fp32, so the compiled model computes the graded one's function to
  // fp32 rounding whatever the training storage was (no optimizer state travels with it).
  cfg.model.storage = "fp32";
  cfg.optim.embedding_state = "bf16";

  GPTOptions o;
  o.vocab_size = src.vocab_size();
  o.compiled = true;
  o.from_checkpoint = true;
  GPT out(cfg, o);
  auto& D = out->parts();

  // Copy every tensor the standard model shares with the graded one.
  auto from = src.state_tensors();
  auto to = out->state_tensors();
  for (auto& [name, t] : to) {
    auto it = from.find(name);
    if (it != from.end() && it->second.sizes() == t.sizes()) t.copy_(it->second);
  }

  // MLGE: W̃_e = W_e G.
  if (src.config().grading.mlge) {
    auto G = torch::matmul(S.level_proj * torch::pow(src.grade_base(), S.level_grades).unsqueeze(0),
                           S.level_proj.t());
    D.wte->weight.copy_(torch::matmul(S.wte->weight.to(G.scalar_type()), G));
  }
  // Graded sinusoidal PE: the table λ^{q} PE in model coordinates becomes wpe.
  if (had_pe) {
    const int64_t T = cfg.model.sequence_len;
    D.wpe.copy_(src.positional_table(T));
  }
  // Query scale already present: fold the frozen mask (exp(q_τ ⊙ mask)).
  if (S.q_tau.defined()) D.q_tau.copy_(S.q_tau * S.q_tau_mask);
  if (had_attn) {
    for (int l = 0; l < L; ++l) {
      auto g = S.attn_grades[l];  // (H, Dh/2)
      auto m = torch::pow(src.grade_base(), torch::cat({g, g}, -1))
                   .reshape({H * Dh, 1});  // rows of (d, d)
      auto& b = D.blocks[l];
      b.c_v->weight.mul_(m);  // V grade → W_v (rows are output coordinates)
      if (D.value_embeds.count(l))
        D.value_embeds.at(l)->weight.mul_(m.view({1, H * Dh}));  // and the value embedding
      if (qk_norm) {
        // norm(q)·M · norm(k)·M = norm(q)·M² · norm(k): both grades land in the query scale.
        D.q_tau[l].add_(2.0 * g * log_lambda);
      } else {
        b.c_q->weight.mul_(m);  // RoPE rotates within a plane, so the plane scalar commutes
        b.c_k->weight.mul_(m);
      }
    }
  }
  // Graded loss: evaluation uses the matched tilt, logits − log w(y), folded into logit_bias.
  if (S.output_grades.defined()) {
    const auto& g = src.config().grading;
    const double out_lambda = g.output_lambda > 0 ? g.output_lambda : src.grade_base();
    D.logit_bias.copy_(-S.output_grades * std::log(out_lambda));
  } else if (S.logit_bias.defined()) {
    D.logit_bias.copy_(S.logit_bias);
  }
  return out;
}

}  // namespace gllm
