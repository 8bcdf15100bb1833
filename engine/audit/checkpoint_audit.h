// Checkpoint diagnostics of seed 001 §4.2: stable rank ‖W‖_F²/‖W‖₂² and mean-row common-mode
// energy share per matrix (grouped as Table 4), the exp(q_τ) band profile (Table 5a), grade
// summaries.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::audit {

struct MatrixStats {
  std::string name;
  int64_t rows = 0, cols = 0;
  double frobenius_sq = 0;  // ‖W‖_F²
  double spectral_sq = 0;   // ‖W‖₂² = σ₁²
  double stable_rank = 0;   // ‖W‖_F² / σ₁² ∈ [1, min(rows, cols)] (0 for a zero matrix)
  double mean_row_share = 0;  // M‖w̄‖² / ‖W‖_F², w̄ = mean row (0 for a zero matrix)
};
// Row-major (rows, cols) float data.
MatrixStats matrix_stats(const std::string& name, const float* data, int64_t rows, int64_t cols);

// Profile of a (layers, heads, planes) array (exp(q_τ) or grades) by RoPE frequency band and layer.
// Bands: planes [0, P/4), [P/4, 3P/4), [3P/4, P) — 0–15 / 16–47 / 48–63 for P = 64 (Dh = 128).
struct BandProfile {
  int layers = 0, heads = 0, planes = 0;
  double mean = 0, sd = 0;  // over every entry (sample SD)
  double min = 0, max = 0;
  int band_edges[4] = {0, 0, 0, 0};
  double band_mean[3] = {0, 0, 0};  // high-freq local, mid-freq, low-freq long-range
  double layer0_mean = 0;
  double middle_mean = 0;  // layers 2 … L−2 (L2–L4 at L = 6, L2–L6 at L = 8); empty → 0
  std::vector<double> middle_layers;
  double final_mean = 0;            // layer L−1
  std::vector<double> layer_means;  // every layer
};
BandProfile band_profile(const std::vector<float>& values, int layers, int heads, int planes);
nlohmann::json to_json(const BandProfile& p);
// Table 5a's "excess" change: (x − 1)/(base − 1) − 1, e.g. −0.629 for 1.1084 against 1.2920.
double excess_change(double x, double base);

// Table 4 groups.
struct GroupedAudit {
  nlohmann::json wte, lm_head, oe_tables, value_embeds, attention, mlp;
};

struct CheckpointAudit {
  std::string path;
  int width = 0;                      // d (from wte)
  std::vector<MatrixStats> matrices;  // every 2-D tensor
  GroupedAudit groups;
  bool has_query_scale = false;
  BandProfile query_scale;  // exp(q_tau)
  bool has_attn_grades = false;
  BandProfile attn_grades;             // raw grades q (planes as for the query scale)
  nlohmann::json level_grades;         // mlge.level_grades summary, null when absent
  nlohmann::json metadata;             // safetensors __metadata__
  std::vector<std::string> nonfinite;  // tensors holding NaN or ±inf (left out of the statistics)
};

// Audits a safetensors checkpoint (a run folder resolves to its newest valid checkpoint by the
// caller). Throws gllm::Error naming the file when it cannot be read.
CheckpointAudit audit_checkpoint(const std::string& safetensors_path);
nlohmann::json to_json(const CheckpointAudit& a, bool include_matrices = true);

}  // namespace gllm::audit
