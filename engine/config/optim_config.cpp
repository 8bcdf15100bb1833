// Schema of OptimConfig: ranges and help for every baseline and seed-001 optimizer setting.
// The form in the workbench and `gllm train` presets both read this table.
#include "engine/config/optim_config.h"

namespace gllm {

const Schema<OptimConfig>& OptimConfig::schema() {
  static const Schema<OptimConfig> s = [] {
    Schema<OptimConfig> s;
    s.real("embedding_lr", &OptimConfig::embedding_lr, 0, 100,
           "AdamW LR of wte and value_embeds (×(d/768)^-0.5)")
        .real("unembedding_lr", &OptimConfig::unembedding_lr, 0, 100,
              "AdamW LR of lm_head (×(d/768)^-0.5)")
        .real("scalar_lr", &OptimConfig::scalar_lr, 0, 100,
              "AdamW LR of x0_lambdas (resid_lambdas get 0.01×)")
        .real("adam_beta1", &OptimConfig::adam_beta1, 0, 0.999999, "AdamW β1")
        .real("adam_beta2", &OptimConfig::adam_beta2, 0, 0.999999, "AdamW β2")
        .real("adam_eps", &OptimConfig::adam_eps, 0, 1, "AdamW ε")
        .choice(
            "embedding_state", &OptimConfig::embedding_state, {"fp32", "bf16"},
            "Optimizer state of bf16-stored wte/value_embeds (model.storage = bf16): moments in "
            "bf16 and no master (baseline, control #4a), or an fp32 master with fp32 moments "
            "(seed-001 Tier 1); fp32-stored tables always have fp32 moments")
        .real("embedding_weight_decay", &OptimConfig::embedding_weight_decay, 0, 10,
              "Decoupled weight decay of wte (w ← w − lr·wd·w each step; seed 000's "
              "norm-controlled regime); 0 = none")
        .real("query_scale_lr", &OptimConfig::query_scale_lr, 0, 100,
              "AdamW LR of the post-QK-norm query scale q_τ")
        .real("matrix_lr", &OptimConfig::matrix_lr, 0, 100, "Muon learning rate")
        .real("weight_decay", &OptimConfig::weight_decay, 0, 10,
              "Muon weight decay (scheduled 1−progress)")
        .real("muon_momentum", &OptimConfig::muon_momentum, 0, 0.999999,
              "Muon momentum after warm-up")
        .real("muon_momentum_start", &OptimConfig::muon_momentum_start, 0, 0.999999,
              "Muon momentum at step 0")
        .integer("muon_momentum_warmup", &OptimConfig::muon_momentum_warmup, 0, 1000000,
                 "Momentum warm-up steps")
        .real("muon_beta2", &OptimConfig::muon_beta2, 0, 0.999999, "NorMuon second-moment β2")
        .integer("ns_steps", &OptimConfig::ns_steps, 1, 5, "Polar Express iterations")
        .real("polar_norm", &OptimConfig::polar_norm, 1, 2,
              "Frobenius normalisation factor before Polar Express")
        .flag("normuon", &OptimConfig::normuon, "NorMuon per-neuron variance reduction")
        .flag("cautious_wd", &OptimConfig::cautious_wd,
              "Cautious weight decay (only where g·p ≥ 0)")
        .choice("polar_dtype", &OptimConfig::polar_dtype, {"auto", "bf16", "fp32"},
                "Precision of Polar Express (auto: bf16 on CUDA as the baseline, fp32 on CPU; Tier "
                "1: fp32)")
        .flag("bieq", &OptimConfig::bieq,
              "Seed-001 BiEq row/column RMS equilibration before the polar step")
        .integer("bieq_tau", &OptimConfig::bieq_tau, 1, 1000000, "BiEq ramp horizon τ_BiEq")
        .integer("bieq_passes", &OptimConfig::bieq_passes, 1, 16,
                 "Gauss–Seidel row-then-column passes")
        .flag("momentum_cooldown", &OptimConfig::momentum_cooldown,
              "Anneal Muon momentum over the warmdown")
        .real("cooldown_momentum", &OptimConfig::cooldown_momentum, 0, 0.999999,
              "Momentum at the end of the cooldown")
        .flag("neumann", &OptimConfig::neumann,
              "Right-projected Neumann-Gram whitening of wte, lm_head, value_embeds")
        .integer("neumann_tau", &OptimConfig::neumann_tau, 1, 1000000,
                 "Neumann-Gram ramp horizon τ_Neu")
        .flag("cosine_weight_decay", &OptimConfig::cosine_weight_decay,
              "Cosine instead of linear weight-decay schedule")
        .flag("table_neumann", &OptimConfig::table_neumann,
              "Neumann-Gram on the hashed tables (#3a)")
        .choice("oe_update", &OptimConfig::oe_update, {"moment_free", "adamw"},
                "Update rule of the hashed tables")
        .real("oe_lr", &OptimConfig::oe_lr, 0, 100, "Hashed-table LR (×(d/768)^-0.5 × warmdown)")
        .real("warmdown_ratio", &OptimConfig::warmdown_ratio, 0, 1,
              "Fraction of steps in the linear warmdown")
        .real("final_lr_frac", &OptimConfig::final_lr_frac, 0, 1, "LR multiplier at the last step")
        .integer("progress_skip", &OptimConfig::progress_skip, 0, 1000000,
                 "Steps before progress starts (seed 001: 11 untimed warm-up steps)");
    return s;
  }();
  return s;
}

}  // namespace gllm
