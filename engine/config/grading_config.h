// GradingConfig: seed 000's graded parts (EG-MHSA, MLGE, graded loss), the base λ, the clip C,
// where the grades come from, and the regularisers of Eq. 20. Part of RunConfig; torch-free.
#pragma once
#include <string>
#include <vector>

#include "engine/io/config_schema.h"

namespace gllm {

struct GradingConfig {
  double lambda = 0.0;                  // grading base λ > 1; 0 = e^{1/d_k}
  double clip = 2.0;                    // C > 1: λ^{q_max} ≤ C
  bool attention = false;               // EG-MHSA: diag(λ^q) on Q, K, V per head and RoPE plane
  bool grades_trainable = false;        // refine grades end-to-end (projected into [0, q_max])
  double grade_lr = 0.01;               // AdamW learning rate for trainable grades
  std::string head_grades = "uniform";  // uniform | random | file | explicit ("ladder" is refused)
  std::string grades_file;              // JSON {"attn_grades": [[[...]]]} when head_grades = file
  std::vector<double> attn_grades;      // head_grades = explicit: (layers, heads, planes) row-major
  int random_seed = 0;
  bool mlge = false;  // multi-level graded embedding
  int levels = 4;
  std::vector<int> level_dims;       // empty = equal split of d
  std::vector<double> level_grades;  // one per level; empty = all zero
  std::string level_grades_source =
      "levels";                 // levels (level_grades) | ladder (ladder_file + ladder_arm)
  std::string ladder_file;      // JSON from `gllm ladder`: per-coordinate MLGE grades, d = n_embd
  std::string ladder_arm;       // uniform | random | taxonomic | pos | educated | oracle
  std::string profiles_file;    // `gllm profiles` output; its graded basis initialises P
  bool basis_trainable = true;  // false: P stays the profiles' basis (the ladder's coordinates)
  bool graded_loss = false;
  std::string output_grades = "uniform";  // uniform | pos | file
  std::string output_grades_file;
  double output_lambda = 0.0;     // base for output weights; 0 = same as lambda
  double orth_weight = 0.0;       // Ω_orth weight
  double diversity_weight = 0.0;  // Σ_{h<h'} exp(-‖q_h − q_h'‖²)
  double magnitude_weight = 0.0;  // ‖q‖²

  // Resolved base for a head dimension d_k.
  double base_for(int head_dim) const;
  // q_max = log C / log λ.
  double q_max(int head_dim) const;

  static const Schema<GradingConfig>& schema();
};

}  // namespace gllm
