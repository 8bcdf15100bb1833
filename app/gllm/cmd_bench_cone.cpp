// `gllm bench cone`: measures one cone edit (all quantities of ConeReport) and the clipped optimum
// at width d on seeded random profiles, and prints them beside the workbench budgets (1 ms, 50 ms).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "app/gllm/command_registry.h"
#include "engine/grading/cone.h"
#include "engine/grading/select.h"
#include "engine/io/error.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double median_ms(int repeats, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

gllm::cli::RegisterSubcommand reg_bench_cone("bench", "cone", [](CLI::App& group) {
  auto* cmd = group.add_subcommand("cone",
                                   "Time one cone edit and the clipped optimum at width d "
                                   "(budgets: 1 ms and 50 ms at d = 4096)");
  auto d = std::make_shared<int>(4096);
  auto repeats = std::make_shared<int>(21);
  auto clip = std::make_shared<double>(2.0);
  auto json = std::make_shared<bool>(false);
  // d is bounded so that the profiles, grades and solver work space stay well under 1 GiB.
  cmd->add_option("--d", *d, "Number of coordinates")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--repeats", *repeats, "Timed repetitions (the median is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--clip", *clip, "Clip C")->capture_default_str();
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([d, repeats, clip, json] {
    if (*d < 1) throw gllm::Error("--d must be ≥ 1");
    if (*repeats < 1) throw gllm::Error("--repeats must be ≥ 1");
    using namespace gllm::grading;
    std::mt19937_64 rng(12345);
    std::gamma_distribution<double> gam(0.7, 1.0);
    std::vector<double> a(*d), t(*d), q(*d);
    for (int j = 0; j < *d; ++j) {
      a[j] = gam(rng) + 1e-6;
      t[j] = gam(rng) + 1e-6;
    }
    Profiles p;
    p.alpha = normalized(a, "alpha");
    p.tau = normalized(t, "tau");
    const double lambda = std::exp(1.0 / 128);
    const double qmax = q_max_for(lambda, *clip);
    std::uniform_real_distribution<double> uq(0, qmax);
    for (double& x : q) x = uq(rng);
    double sink = 0;
    // One edit: change one grade and recompute every quantity of the cone panel.
    int k = 0;
    double cert_ms = median_ms(*repeats, [&] {
      q[k++ % *d] = uq(rng);
      sink += evaluate_cone(p, q, lambda, *clip).log_lambda;
    });
    SelectOptions o;
    o.lambda = lambda;
    o.clip = *clip;
    Selection s;
    double opt_ms = median_ms(*repeats, [&] { s = select_educated(p, o); });
    SelectOptions op = o;
    op.magnitude_weight = 1e-3;
    Selection sp;
    double opt_pen_ms = median_ms(std::max(1, *repeats / 3), [&] { sp = select_educated(p, op); });
    if (*json) {
      gllm::cli::print_json({{"d", *d},
                             {"repeats", *repeats},
                             {"certificate_ms", cert_ms},
                             {"optimum_ms", opt_ms},
                             {"optimum_penalised_ms", opt_pen_ms},
                             {"certificate_budget_ratio", cert_ms / 1.0},
                             {"optimum_budget_ratio", opt_ms / 50.0},
                             {"optimum_iterations", s.iterations},
                             {"optimum_kkt_residual", s.kkt_residual},
                             {"optimum_method", s.method},
                             {"penalised_iterations", sp.iterations},
                             {"penalised_kkt_residual", sp.kkt_residual},
                             {"checksum", sink}});
      return;
    }
    std::cout << "d = " << *d << " (median of " << *repeats << ")\n"
              << "one cone edit       " << cert_ms << " ms  (" << cert_ms / 1.0
              << "× the 1 ms budget)\n"
              << "clipped optimum     " << opt_ms << " ms  (" << opt_ms / 50.0
              << "× the 50 ms budget; " << s.method << ", " << s.iterations << " iterations, KKT "
              << s.kkt_residual << ")\n"
              << "with ν_mag = 1e-3   " << opt_pen_ms << " ms  (" << sp.method << ", "
              << sp.iterations << " iterations, KKT " << sp.kkt_residual << ")" << std::endl;
  });
});

}  // namespace
