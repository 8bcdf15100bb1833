// Paired seed statistics: Student-t quantiles, paired deltas with 95 % t-intervals (n−1 df),
// difference of differences for 2×2 designs, and descriptive ratios (seed 001 Tables 2–3).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::stats {

// Regularized incomplete beta I_x(a, b) for a, b > 0 and x in [0, 1].
double incomplete_beta(double a, double b, double x);
// Student-t cumulative distribution with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);
// Quantile (inverse CDF) of Student's t: student_t_quantile(0.975, 2) = 4.302653.
double student_t_quantile(double p, double df);

// Mean, sample SD (n−1) and a two-sided t-interval of a sample.
struct Summary {
  int n = 0;
  double mean = 0;
  double sd = 0;      // sample standard deviation (n−1); 0 when n == 1
  double ci_low = 0;  // mean − t_{(1+level)/2, n−1} · sd / √n (equal to mean when n == 1)
  double ci_high = 0;
  double level = 0.95;
};
Summary summarize(const std::vector<double>& x, double level = 0.95);

// Paired contrast b − a per seed: `a` is the baseline, `b` the treatment, in matching order.
struct Paired {
  Summary delta;               // statistics of the deltas
  std::vector<double> deltas;  // b_i − a_i
  int n_improved = 0;          // deltas below zero (lower is better) or above (otherwise)
  bool lower_is_better = true;
};
Paired paired(const std::vector<double>& a, const std::vector<double>& b,
              bool lower_is_better = true, double level = 0.95);

// Difference of differences of a 2×2 design, per seed: (b1 − a1) − (b0 − a0). Row 9 of seed 001
// Table 3 is DoD(OE × Opt) = (11 − 10) − (01 − 00), i.e. a0=00, b0=01, a1=10, b1=11.
Paired difference_of_differences(const std::vector<double>& a0, const std::vector<double>& b0,
                                 const std::vector<double>& a1, const std::vector<double>& b1,
                                 double level = 0.95);

// Descriptive ratio of two mean contrasts (Table 3's retention ratio), e.g. 0.486 for 48.6 %.
double descriptive_ratio(const Paired& numerator, const Paired& denominator);

nlohmann::json to_json(const Summary& s);
nlohmann::json to_json(const Paired& p);

// Parses "1.04,1.05,1.03" into numbers; throws gllm::Error naming the bad item.
std::vector<double> parse_number_list(const std::string& text, const std::string& what);

}  // namespace gllm::stats
