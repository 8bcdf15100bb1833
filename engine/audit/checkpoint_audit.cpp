// Checkpoint audits: σ₁² from the eigenvalues of the smaller Gram matrix (Eigen, double),
// mean-row energy, Table 4 grouping by tensor name and Table 5a band/layer profiles.
#include "engine/audit/checkpoint_audit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <regex>

#include "engine/io/error.h"
#include "engine/io/safetensors.h"

namespace gllm::audit {

MatrixStats matrix_stats(const std::string& name, const float* data, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) throw Error("audit: matrix " + name + " is empty");
  MatrixStats s;
  s.name = name;
  s.rows = rows;
  s.cols = cols;
  Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> wf(
      data, rows, cols);
  Eigen::MatrixXd w = wf.cast<double>();
  s.frobenius_sq = w.squaredNorm();
  if (s.frobenius_sq == 0) return s;
  // σ₁² is the largest eigenvalue of the smaller Gram matrix (WᵀW or WWᵀ).
  Eigen::MatrixXd gram =
      cols <= rows ? Eigen::MatrixXd(w.transpose() * w) : Eigen::MatrixXd(w * w.transpose());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(gram, Eigen::EigenvaluesOnly);
  s.spectral_sq = es.eigenvalues().maxCoeff();
  s.stable_rank = s.frobenius_sq / s.spectral_sq;
  Eigen::RowVectorXd mean_row = w.colwise().mean();
  s.mean_row_share = static_cast<double>(rows) * mean_row.squaredNorm() / s.frobenius_sq;
  return s;
}

double excess_change(double x, double base) {
  if (base == 1.0) throw Error("excess change: the reference has no excess over 1");
  return (x - 1.0) / (base - 1.0) - 1.0;
}

BandProfile band_profile(const std::vector<float>& v, int layers, int heads, int planes) {
  if (layers <= 0 || heads <= 0 || planes <= 0 ||
      v.size() != static_cast<size_t>(layers) * heads * planes)
    throw Error("audit: band profile needs a (layers, heads, planes) array");
  BandProfile p;
  p.layers = layers;
  p.heads = heads;
  p.planes = planes;
  auto at = [&](int l, int h, int c) {
    return static_cast<double>(v[(static_cast<size_t>(l) * heads + h) * planes + c]);
  };
  double sum = 0;
  p.min = p.max = v[0];
  for (float x : v) {
    sum += x;
    p.min = std::min<double>(p.min, x);
    p.max = std::max<double>(p.max, x);
  }
  p.mean = sum / v.size();
  double ss = 0;
  for (float x : v) ss += (x - p.mean) * (x - p.mean);
  p.sd = v.size() > 1 ? std::sqrt(ss / (v.size() - 1)) : 0.0;
  // Bands in proportion to 16 / 32 / 16 of 64 planes.
  p.band_edges[0] = 0;
  p.band_edges[1] = planes / 4;
  p.band_edges[2] = (3 * planes) / 4;
  p.band_edges[3] = planes;
  for (int b = 0; b < 3; ++b) {
    double s = 0;
    int n = 0;
    for (int l = 0; l < layers; ++l)
      for (int h = 0; h < heads; ++h)
        for (int c = p.band_edges[b]; c < p.band_edges[b + 1]; ++c, ++n) s += at(l, h, c);
    p.band_mean[b] = n ? s / n : 0.0;
  }
  for (int l = 0; l < layers; ++l) {
    double s = 0;
    for (int h = 0; h < heads; ++h)
      for (int c = 0; c < planes; ++c) s += at(l, h, c);
    p.layer_means.push_back(s / (heads * planes));
  }
  p.layer0_mean = p.layer_means.front();
  p.final_mean = p.layer_means.back();
  double ms = 0;
  for (int l = 2; l <= layers - 2; ++l) {
    p.middle_layers.push_back(p.layer_means[l]);
    ms += p.layer_means[l];
  }
  p.middle_mean = p.middle_layers.empty() ? 0.0 : ms / p.middle_layers.size();
  return p;
}

nlohmann::json to_json(const BandProfile& p) {
  return {{"shape", {p.layers, p.heads, p.planes}},
          {"mean", p.mean},
          {"sd", p.sd},
          {"min", p.min},
          {"max", p.max},
          {"bands",
           {{{"name", "high_freq_local"},
             {"planes", {p.band_edges[0], p.band_edges[1] - 1}},
             {"mean", p.band_mean[0]}},
            {{"name", "mid_freq"},
             {"planes", {p.band_edges[1], p.band_edges[2] - 1}},
             {"mean", p.band_mean[1]}},
            {{"name", "low_freq_long"},
             {"planes", {p.band_edges[2], p.band_edges[3] - 1}},
             {"mean", p.band_mean[2]}}}},
          {"layer0_mean", p.layer0_mean},
          {"middle_mean",
           p.middle_layers.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.middle_mean)},
          {"middle_layers", p.middle_layers},
          {"middle_range",
           p.middle_layers.empty() ? nlohmann::json(nullptr) : nlohmann::json({2, p.layers - 2})},
          {"final_mean", p.final_mean},
          {"layer_means", p.layer_means}};
}

namespace {

nlohmann::json group_json(const std::vector<const MatrixStats*>& ms, double relative_to) {
  if (ms.empty()) return nullptr;
  double sr = 0, mr = 0;
  nlohmann::json names = nlohmann::json::array();
  for (const auto* m : ms) {
    sr += m->stable_rank;
    mr += m->mean_row_share;
    names.push_back(m->name);
  }
  sr /= ms.size();
  mr /= ms.size();
  nlohmann::json j = {{"count", ms.size()},
                      {"mean_stable_rank", sr},
                      {"mean_row_energy_share", mr},
                      {"matrices", names}};
  if (relative_to > 0) {
    j["stable_rank_over"] = relative_to;
    j["stable_rank_fraction"] = sr / relative_to;
  }
  return j;
}

}  // namespace

CheckpointAudit audit_checkpoint(const std::string& path) {
  CheckpointAudit a;
  a.path = path;
  SafetensorsFile f = SafetensorsFile::open(path);
  for (const auto& [k, v] : f.metadata()) a.metadata[k] = v;
  std::vector<const MatrixStats*> wte, lm_head, oe, ve, attn, mlp;
  a.matrices.reserve(f.tensors().size());
  for (const auto& t : f.tensors()) {
    if (t.shape.size() != 2) continue;
    if (t.dtype != StDtype::F32 && t.dtype != StDtype::BF16 && t.dtype != StDtype::F16 &&
        t.dtype != StDtype::F64)
      continue;
    auto data = f.to_float(t.name);
    if (!std::all_of(data.begin(), data.end(), [](float x) { return std::isfinite(x); })) {
      a.nonfinite.push_back(t.name);
      continue;
    }
    a.matrices.push_back(matrix_stats(t.name, data.data(), t.shape[0], t.shape[1]));
  }
  // Vectors and grade tensors too: NaN or ±inf anywhere is a finding, not a statistic.
  for (const auto& t : f.tensors()) {
    if (t.shape.size() == 2) continue;
    if (t.dtype != StDtype::F32 && t.dtype != StDtype::BF16 && t.dtype != StDtype::F16 &&
        t.dtype != StDtype::F64)
      continue;
    const auto data = f.to_float(t.name);
    if (!std::all_of(data.begin(), data.end(), [](float x) { return std::isfinite(x); }))
      a.nonfinite.push_back(t.name);
  }
  std::sort(a.nonfinite.begin(), a.nonfinite.end());
  std::sort(a.matrices.begin(), a.matrices.end(),
            [](const auto& x, const auto& y) { return x.name < y.name; });
  static const std::regex attn_re(R"(transformer\.h\.\d+\.attn\.c_(q|k|v|proj)\.weight)");
  static const std::regex mlp_re(R"(transformer\.h\.\d+\.mlp\.c_(fc|proj)(\.\d+)?\.weight)");
  static const std::regex oe_re(R"(oe_tables\.\d+\.weight)");
  static const std::regex ve_re(R"(value_embeds\.\d+\.weight)");
  for (const auto& m : a.matrices) {
    if (m.name == "transformer.wte.weight") {
      wte.push_back(&m);
      a.width = static_cast<int>(m.cols);
    } else if (m.name == "lm_head.weight") {
      lm_head.push_back(&m);
    } else if (std::regex_match(m.name, oe_re)) {
      oe.push_back(&m);
    } else if (std::regex_match(m.name, ve_re)) {
      ve.push_back(&m);
    } else if (std::regex_match(m.name, attn_re)) {
      attn.push_back(&m);
    } else if (std::regex_match(m.name, mlp_re)) {
      mlp.push_back(&m);
    }
  }
  double d = a.width;
  a.groups.wte = group_json(wte, d);
  a.groups.lm_head = group_json(lm_head, d);
  a.groups.oe_tables = group_json(oe, d > 0 ? d / 4 : 0);
  a.groups.value_embeds = group_json(ve, 0);
  a.groups.attention = group_json(attn, 0);
  a.groups.mlp = group_json(mlp, 0);
  auto read3 = [&](const std::string& name, bool exponentiate, BandProfile& out) {
    if (!f.has(name)) return false;
    const auto& info = f.info(name);
    if (info.shape.size() != 3)
      throw Error(path + ": tensor " + name +
                  " should be (layers, heads, planes); the checkpoint is not a gllm model");
    auto v = f.to_float(name);
    if (exponentiate)
      for (auto& x : v) x = std::exp(x);
    out = band_profile(v, static_cast<int>(info.shape[0]), static_cast<int>(info.shape[1]),
                       static_cast<int>(info.shape[2]));
    return true;
  };
  a.has_query_scale = read3("q_tau", true, a.query_scale);
  a.has_attn_grades = read3("attn_grades", false, a.attn_grades);
  if (f.has("mlge.level_grades")) {
    auto v = f.to_float("mlge.level_grades");
    double s = 0, mn = v.empty() ? 0 : v[0], mx = mn;
    for (float x : v) {
      s += x;
      mn = std::min<double>(mn, x);
      mx = std::max<double>(mx, x);
    }
    a.level_grades = {
        {"count", v.size()}, {"mean", v.empty() ? 0.0 : s / v.size()}, {"min", mn}, {"max", mx}};
  }
  return a;
}

nlohmann::json to_json(const CheckpointAudit& a, bool include_matrices) {
  nlohmann::json j;
  j["path"] = a.path;
  j["width"] = a.width;
  j["metadata"] = a.metadata.is_null() ? nlohmann::json::object() : a.metadata;
  if (j["metadata"].contains("config")) j["metadata"].erase("config");  // large; config.json has it
  j["groups"] = {{"wte", a.groups.wte},
                 {"lm_head", a.groups.lm_head},
                 {"oe_tables", a.groups.oe_tables},
                 {"value_embeds", a.groups.value_embeds},
                 {"attention", a.groups.attention},
                 {"mlp", a.groups.mlp}};
  if (include_matrices) {
    nlohmann::json ms = nlohmann::json::array();
    for (const auto& m : a.matrices)
      ms.push_back({{"name", m.name},
                    {"shape", {m.rows, m.cols}},
                    {"stable_rank", m.stable_rank},
                    {"mean_row_energy_share", m.mean_row_share},
                    {"frobenius_sq", m.frobenius_sq},
                    {"spectral_sq", m.spectral_sq}});
    j["matrices"] = ms;
  }
  j["query_scale"] = a.has_query_scale ? to_json(a.query_scale) : nlohmann::json(nullptr);
  j["attn_grades"] = a.has_attn_grades ? to_json(a.attn_grades) : nlohmann::json(nullptr);
  j["level_grades"] = a.level_grades;
  j["nonfinite_tensors"] = a.nonfinite;
  return j;
}

}  // namespace gllm::audit
