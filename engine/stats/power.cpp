// Paired t-test power and sample size (power.h), with the t quantile of paired.h.
#include "engine/stats/power.h"

#include <cmath>

#include "engine/stats/paired.h"

namespace gllm::stats {

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double paired_t_power(double effect, double sd, int n, double alpha) {
  if (n < 2 || !(sd > 0) || !std::isfinite(effect)) return 0;
  const double t = student_t_quantile(1.0 - alpha / 2.0, n - 1);
  const double shift = std::fabs(effect) * std::sqrt(static_cast<double>(n)) / sd;
  return normal_cdf(shift - t) + normal_cdf(-shift - t);
}

int seeds_for_power(double effect, double sd, double power, double alpha, int max_n) {
  if (effect == 0 || !(sd > 0)) return 0;
  for (int n = 2; n <= max_n; ++n)
    if (paired_t_power(effect, sd, n, alpha) >= power) return n;
  return 0;
}

}  // namespace gllm::stats
