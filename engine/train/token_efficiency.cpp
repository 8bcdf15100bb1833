// Token efficiency (token_efficiency.h): curves from records, log-token interpolation, and the
// per-seed ratio against the uniform arm with its interval.
#include "engine/train/token_efficiency.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/stats/paired.h"

namespace gllm {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::vector<CurvePoint> metric_curve(const std::vector<nlohmann::json>& records,
                                     const std::string& key) {
  std::vector<CurvePoint> out;
  for (const auto& r : records) {
    if (!r.is_object() || !r.contains(key) || !r[key].is_number() || !r.contains("tokens") ||
        !r["tokens"].is_number())
      continue;
    const double v = r[key].get<double>(), t = r["tokens"].get<double>();
    if (!std::isfinite(v) || !(t > 0)) continue;
    out.push_back({t, v});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CurvePoint& a, const CurvePoint& b) { return a.tokens < b.tokens; });
  std::vector<CurvePoint> unique;
  for (const auto& p : out) {
    if (!unique.empty() && unique.back().tokens == p.tokens)
      unique.back() = p;  // a resumed segment re-evaluated the same point: the last one stands
    else
      unique.push_back(p);
  }
  return unique;
}

std::vector<CurvePoint> since_start(const std::vector<CurvePoint>& curve, double start_tokens) {
  if (!(start_tokens > 0)) return curve;
  std::vector<CurvePoint> out;
  for (const auto& p : curve)
    if (p.tokens > start_tokens) out.push_back({p.tokens - start_tokens, p.value});
  return out;
}

double value_at_tokens(const std::vector<CurvePoint>& curve, double tokens) {
  if (curve.empty() || !(tokens > 0) || tokens < curve.front().tokens ||
      tokens > curve.back().tokens)
    return kNaN;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i].tokens == tokens) return curve[i].value;
    if (curve[i].tokens > tokens) {
      const auto& a = curve[i - 1];
      const auto& b = curve[i];
      const double w = std::log(tokens / a.tokens) / std::log(b.tokens / a.tokens);
      return a.value + w * (b.value - a.value);
    }
  }
  return kNaN;
}

TargetCrossing tokens_to_target(const std::vector<CurvePoint>& curve, double target) {
  TargetCrossing c;
  c.tokens = kNaN;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i].value > target) continue;
    c.reached = true;
    if (i == 0) {
      c.at_first_point = true;
      c.tokens = curve[0].tokens;
      return c;
    }
    const auto& a = curve[i - 1];  // above the target
    const auto& b = curve[i];      // at or below it
    const double w = (a.value - target) / (a.value - b.value);
    c.tokens = std::exp(std::log(a.tokens) + w * (std::log(b.tokens) - std::log(a.tokens)));
    return c;
  }
  return c;
}

TokenRatio token_ratio(const std::vector<double>& uniform_tokens,
                       const std::vector<double>& arm_tokens) {
  TokenRatio r;
  std::vector<double> logs;
  for (size_t i = 0; i < arm_tokens.size(); ++i) {
    const double u = i < uniform_tokens.size() ? uniform_tokens[i] : kNaN;
    const double a = arm_tokens[i];
    const double q = std::isfinite(u) && std::isfinite(a) && u > 0 && a > 0 ? u / a : kNaN;
    r.per_seed.push_back(q);
    if (std::isfinite(q)) logs.push_back(std::log(q));
  }
  r.n = static_cast<int>(logs.size());
  if (r.n == 0) return r;
  const auto s = stats::summarize(logs);
  r.ratio = std::exp(s.mean);
  r.low = std::exp(s.ci_low);
  r.high = std::exp(s.ci_high);
  return r;
}

nlohmann::json to_json(const TokenRatio& r) {
  nlohmann::json per = nlohmann::json::array();
  for (double v : r.per_seed) per.push_back(std::isfinite(v) ? nlohmann::json(v) : nullptr);
  if (r.n == 0) return {{"per_seed", per}, {"n", 0}, {"ratio", nullptr}, {"ci", nullptr}};
  return {{"per_seed", per}, {"n", r.n}, {"ratio", r.ratio}, {"ci", {r.low, r.high}}};
}

}  // namespace gllm
