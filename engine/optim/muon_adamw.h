// MuonAdamW: the baseline optimizer (AdamW groups + Muon/NorMuon with Polar Express) with every
// seed-001 switch (BiEq, momentum cooldown, Neumann-Gram, FP32 embedding state, moment-free
// tables).
#pragma once
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/optim_config.h"
#include "engine/optim/schedule.h"

namespace gllm::optim {

// Readings of seed 001 fixed here (the text names the operations but not every detail):
// - t in α_t = min(t/τ, 1)² is the 1-based update count of the tensor (of its Muon shape group for
//   BiEq, of the table for Neumann-Gram), so the first update uses α = (1/τ)².
// - BiEq "modulated by α_t" is a geometric homotopy: each row (then column) is divided by its RMS
//   raised to α_t, M ← diag(r)^-α M, M ← M diag(c)^-α, two Gauss–Seidel passes, in fp32 on the
//   Nesterov momentum just before Polar Express. α = 0 is plain Muon, α = 1 full equilibration.
// - Neumann-Gram acts on the raw gradient before the AdamW moments: μ + U_w with μ the row mean,
//   so the mean direction passes through untouched. With Table-Neumann (#3a) it acts on the visited
//   per-occurrence mean gradients of each hashed table, before the table-RMS normalisation.
// - FP32 embedding state: an fp32 master copy of a bf16 wte/value_embeds table plus fp32 moments
//   (8 B/param over bf16 moments, Table 1b's +96.0/+160.0 MiB); bf16 state keeps the baseline's
//   bf16 moments and updates the bf16 table directly.
// - Progress p for the LR, weight-decay and cooldown schedules is step/steps, or with
//   progress_skip = 11 the seed's min(max(step − 11, 0)/(953 − 11), 1).

// One trainable tensor as the model lists it (GPT::tagged_parameters() maps 1:1; pass only
// trainable ones). Known group tags:
//   matrix        2-D weights inside the blocks (c_q, c_k, c_v, c_proj, c_fc, ve_gate): Muon
//   embedding     wte (V, d)                              AdamW, embedding_lr·s, Neumann-Gram,
//                                                         decoupled embedding_weight_decay
//   value_embeds  each value-embedding table (V, d)       AdamW, embedding_lr·s, Neumann-Gram
//   unembedding   lm_head (V, d)                          AdamW, unembedding_lr·s, Neumann-Gram
//   resid_lambdas [n_layer]                               AdamW, 0.01·scalar_lr
//   x0_lambdas    [n_layer]                               AdamW, scalar_lr, betas (0.96, 0.95)
//   oe_table      hashed n-gram table (rows, d/4)         moment-free (or AdamW as embedding)
//   query_scale   q_τ (layers, H, Dh/2)                   AdamW, query_scale_lr
//   grades        seed-000 grades                         AdamW, grade_lr (from GradingConfig)
//   level_proj    seed-000 MLGE level projections P_l      AdamW, level_proj_lr
//   position      absolute position table                 AdamW, embedding_lr·s
//   scalar        any other small tensor                  AdamW, scalar_lr
// s = (d/768)^-0.5. Weight decay: Muon's, and optim.embedding_weight_decay on wte (decoupled).
struct TaggedParam {
  std::string name;      // unique; used as the prefix of the state tensor names
  torch::Tensor tensor;  // a leaf; step() reads tensor.grad() and updates tensor in place
  std::string group;     // one of the tags above
};

// Schedule values used by one step (for logging).
struct StepInfo {
  int64_t step = 0;
  double progress = 0, lr_multiplier = 1, muon_momentum = 0, muon_weight_decay = 0;
  double bieq_alpha = 0, neumann_alpha = 0;
};

// Per-parameter description (name, group, update rule, initial LR) for logs and the GUI.
struct ParamPlan {
  std::string name, group, rule;  // rule: adamw | muon | moment_free
  double base_lr = 0;
  std::vector<int64_t> shape;
};

struct MuonAdamWOptions {
  double grade_lr = 0.01;  // LR of "grades" parameters (GradingConfig::grade_lr)
  double level_proj_lr =
      0.001;  // LR of "level_proj" parameters (no paper value; small, Ω_orth keeps P orthonormal)
};

class MuonAdamW {
 public:
  // d_model sets s = (d/768)^-0.5; total_steps fixes the schedule. Throws gllm::Error on an unknown
  // group tag, a duplicate name, a non-2-D matrix/table, or a tensor without requires_grad.
  MuonAdamW(const OptimConfig& cfg, int d_model, int64_t total_steps,
            std::vector<TaggedParam> params, MuonAdamWOptions opts = {});
  ~MuonAdamW();
  MuonAdamW(const MuonAdamW&) = delete;
  MuonAdamW& operator=(const MuonAdamW&) = delete;

  // Once per micro-step for each hashed table: the row indices this micro-batch looked up (any
  // shape, integer). Counts are float32 and persist until the next step(), which resets them.
  void accumulate_visits(const std::string& table_name, const torch::Tensor& rows);

  // Applies the schedules for this 0-based step index and updates every parameter from its .grad()
  // (parameters with no gradient are skipped; a Muon group treats a missing gradient as zeros).
  StepInfo step(int64_t step_index);
  // Sets every gradient to undefined (the baseline's zero_grad(set_to_none=True)).
  void zero_grad();

  // Exact-resume state: named tensors ("<param>.exp_avg", ".exp_avg_sq", ".master",
  // ".momentum_buffer", ".second_momentum_buffer") and scalar state (per-parameter step counts).
  std::vector<std::pair<std::string, torch::Tensor>> state_tensors() const;
  void load_state_tensors(const std::vector<std::pair<std::string, torch::Tensor>>& tensors);
  nlohmann::json scalar_state() const;
  void load_scalar_state(const nlohmann::json& j);

  const Schedule& schedule() const;
  std::vector<ParamPlan> plan() const;
  // Re-reads each fp32 master from its (bf16) parameter, e.g. after loading model weights from a
  // checkpoint without optimizer state. A no-op for parameters without a master.
  void refresh_masters_from_params();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Building blocks, exposed for tests and benchmarks.
// Polar Express on (..., m, n): X ← G/(‖G‖_F·norm + 1e-6), then the five baseline iterations
// (the first `steps` of them), computed in `dtype`. Returns `dtype`.
torch::Tensor polar_express(const torch::Tensor& g, int steps, double norm,
                            torch::ScalarType dtype);
// Two-sided RMS equilibration: `passes` Gauss–Seidel rounds of M ← diag(r)^-α M (row RMS r), then
// M ← M diag(c)^-α (column RMS c of the updated M). α = 0 is the identity. fp32 in, fp32 out.
torch::Tensor bieq(const torch::Tensor& m, int passes, double alpha);
// Right-projected Neumann-Gram whitening of G (V, d): μ = mean over rows, U = G − μ,
// U_w = U − ½α·U(UᵀU)/(‖UᵀU‖_F + 1e-30), result μ + U_w. fp32.
torch::Tensor neumann_gram(const torch::Tensor& g, double alpha);
// NorMuon variance reduction on (K, m, n) with its fp32 buffer (K, m, 1) or (K, 1, n), in place on
// buf.
torch::Tensor normuon(const torch::Tensor& g, torch::Tensor& buf, double beta2);
// The five (a, b, c) Polar Express triples of baseline.md §2.4.
const std::vector<std::array<double, 3>>& polar_express_coefficients();

}  // namespace gllm::optim
