// Paired seed statistics: the t quantile by bisection on the regularized incomplete beta
// (continued fraction, Lentz's method), sample summaries, paired deltas and 2×2 interactions.
#include "engine/stats/paired.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "engine/io/error.h"

namespace gllm::stats {
namespace {

// Continued fraction for the incomplete beta (Numerical-Recipes form, modified Lentz).
double beta_continued_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < eps) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0)) throw Error("incomplete_beta: a and b must be positive");
  if (!(x >= 0 && x <= 1)) throw Error("incomplete_beta: x must lie in [0, 1]");
  if (x == 0 || x == 1) return x;
  double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(log_front);
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw Error("student_t_cdf: degrees of freedom must be positive");
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  double x = df / (df + t * t);
  double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);  // P(T > |t|)
  return t >= 0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw Error("student_t_quantile: p must lie in (0, 1)");
  if (!(df > 0)) throw Error("student_t_quantile: degrees of freedom must be positive");
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  // Bracket then bisect: the CDF is monotone, so bisection converges to machine precision.
  double lo = 0.0, hi = 1.0;
  while (student_t_cdf(hi, df) < p) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    if (student_t_cdf(mid, df) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

Summary summarize(const std::vector<double>& x, double level) {
  if (x.empty()) throw Error("statistics need at least one value; give one number per seed");
  if (!(level > 0 && level < 1)) throw Error("confidence level must lie in (0, 1)");
  Summary s;
  s.n = static_cast<int>(x.size());
  s.level = level;
  double sum = 0;
  for (double v : x) {
    if (!std::isfinite(v)) throw Error("statistics got a non-finite value; check the inputs");
    sum += v;
  }
  s.mean = sum / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(ss / (s.n - 1));
    double half = student_t_quantile(0.5 + level / 2.0, s.n - 1) * s.sd / std::sqrt(double(s.n));
    s.ci_low = s.mean - half;
    s.ci_high = s.mean + half;
  } else {
    s.ci_low = s.ci_high = s.mean;
  }
  return s;
}

Paired paired(const std::vector<double>& a, const std::vector<double>& b, bool lower_is_better,
              double level) {
  if (a.size() != b.size())
    throw Error("paired statistics need as many values in --b as in --a (got " +
                std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                "); give one value per seed in the same seed order");
  Paired p;
  p.lower_is_better = lower_is_better;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = b[i] - a[i];
    p.deltas.push_back(d);
    if (lower_is_better ? d < 0 : d > 0) ++p.n_improved;
  }
  p.delta = summarize(p.deltas, level);
  return p;
}

Paired difference_of_differences(const std::vector<double>& a0, const std::vector<double>& b0,
                                 const std::vector<double>& a1, const std::vector<double>& b1,
                                 double level) {
  size_t n = a0.size();
  if (b0.size() != n || a1.size() != n || b1.size() != n)
    throw Error("a 2x2 difference of differences needs the same seeds in all four cells");
  std::vector<double> zero(n, 0.0), dod(n);
  for (size_t i = 0; i < n; ++i) dod[i] = (b1[i] - a1[i]) - (b0[i] - a0[i]);
  return paired(zero, dod, true, level);
}

double descriptive_ratio(const Paired& numerator, const Paired& denominator) {
  if (denominator.delta.mean == 0)
    throw Error("descriptive ratio: the denominator contrast is zero");
  return numerator.delta.mean / denominator.delta.mean;
}

nlohmann::json to_json(const Summary& s) {
  return {{"n", s.n},           {"mean", s.mean},       {"sd", s.sd},
          {"ci_low", s.ci_low}, {"ci_high", s.ci_high}, {"level", s.level}};
}

nlohmann::json to_json(const Paired& p) {
  nlohmann::json j = to_json(p.delta);
  j["deltas"] = p.deltas;
  j["n_improved"] = p.n_improved;
  j["lower_is_better"] = p.lower_is_better;
  return j;
}

std::vector<double> parse_number_list(const std::string& text, const std::string& what) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  int index = 0;
  while (std::getline(ss, item, ',')) {
    ++index;
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) {
      throw Error(what + ": item " + std::to_string(index) +
                  " is empty; give comma-separated numbers like 1.0491,1.0464,1.0505");
    }
    item = item.substr(b, e - b + 1);
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !std::isfinite(v))
      throw Error(what + ": '" + item + "' is not a number; give comma-separated numbers");
    out.push_back(v);
  }
  if (out.empty()) throw Error(what + ": no numbers given; give comma-separated numbers");
  return out;
}

}  // namespace gllm::stats
