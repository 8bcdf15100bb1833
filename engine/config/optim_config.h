// OptimConfig: the baseline MuonAdamW hyperparameters and every seed-001 optimizer switch.
// Defaults are the baseline's (shared/reference/baseline.md §2); part of RunConfig; torch-free.
#pragma once
#include <string>

#include "engine/io/config_schema.h"

namespace gllm {

struct OptimConfig {
  // AdamW groups (learning rates before the (d/768)^-0.5 scale where the baseline applies it).
  double embedding_lr = 0.6;
  double unembedding_lr = 0.004;
  double scalar_lr = 0.5;
  double adam_beta1 = 0.8;
  double adam_beta2 = 0.95;
  double adam_eps = 1e-10;
  double query_scale_lr = 0.005;  // AdamW LR of q_tau (seed 001 does not state it)
  // Decoupled weight decay of the token embedding wte (seed 000 §5.3, §8.3: the norm-controlled
  // regime): w ← w − lr·wd·w before each AdamW update, on the same schedule as the LR. 0 = off.
  double embedding_weight_decay = 0.0;
  std::string embedding_state = "bf16";  // bf16 (baseline: bf16 moments) | fp32 (master + moments)
  // Muon.
  double matrix_lr = 0.04;
  double weight_decay = 0.2;
  double muon_momentum = 0.95;
  double muon_momentum_start = 0.85;
  int muon_momentum_warmup = 300;
  double muon_beta2 = 0.95;
  int ns_steps = 5;
  double polar_norm = 1.02;
  bool normuon = true;
  bool cautious_wd = true;
  std::string polar_dtype = "auto";  // auto (bf16 on CUDA, fp32 on CPU) | bf16 | fp32
  // Seed-001 Tier 1.
  bool bieq = false;
  int bieq_tau = 25;
  int bieq_passes = 2;
  bool momentum_cooldown = false;
  double cooldown_momentum = 0.85;
  bool neumann = false;
  int neumann_tau = 80;
  bool cosine_weight_decay = false;
  bool table_neumann = false;  // #3a: Neumann-Gram on the hashed tables
  // Hashed tables.
  std::string oe_update = "moment_free";  // moment_free | adamw
  double oe_lr = 0.6;
  // Schedule.
  double warmdown_ratio = 0.5;
  double final_lr_frac = 0.0;
  int progress_skip = 0;  // seed 001: p = max(step − 11, 0)/(steps − 11) (untimed warm-up steps)

  static const Schema<OptimConfig>& schema();
};

}  // namespace gllm
