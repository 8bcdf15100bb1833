// `gllm stats paired --a x1,x2,.. --b y1,y2,.. [--json]`: paired seed contrast b − a with mean, SD,
// 95 % Student-t interval (n−1 df), per-seed deltas and how many seeds improved.
#include <algorithm>
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/stats/paired.h"

namespace {

gllm::cli::RegisterSubcommand reg_stats("stats", "paired", [](CLI::App& group) {
  auto* cmd = group.add_subcommand(
      "paired", "Paired contrast b − a over seeds (same seed order): mean, SD, t-interval, deltas");
  struct Opts {
    std::string a, b;
    bool json = false;
    bool higher_is_better = false;
    double level = 0.95;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--a", o->a, "Baseline values, one per seed, comma-separated")->required();
  cmd->add_option("--b", o->b, "Treatment values, one per seed in the same order")->required();
  cmd->add_option("--level", o->level, "Confidence level of the interval")
      ->check(CLI::Range(0.5, 0.9999));
  cmd->add_flag("--higher-is-better", o->higher_is_better,
                "Count a seed as improved when b > a (default: lower is better, as for BPB)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    auto a = gllm::stats::parse_number_list(o->a, "--a");
    auto b = gllm::stats::parse_number_list(o->b, "--b");
    if (a.size() < 2 || b.size() < 2)
      throw gllm::Error("a paired interval needs at least two seeds (got " +
                        std::to_string(std::min(a.size(), b.size())) +
                        "); give one value per seed for two or more seeds in --a and --b");
    auto p = gllm::stats::paired(a, b, !o->higher_is_better, o->level);
    if (o->json) {
      gllm::cli::print_json(gllm::stats::to_json(p));
      return;
    }
    std::printf("delta (b - a) over %d seeds: %+.6f ± %.6f (SD)\n", p.delta.n, p.delta.mean,
                p.delta.sd);
    std::printf("%.0f%% t-interval (df = %d): [%+.6f, %+.6f]\n", o->level * 100, p.delta.n - 1,
                p.delta.ci_low, p.delta.ci_high);
    std::printf("per seed:");
    for (double d : p.deltas) std::printf(" %+.6f", d);
    std::printf("\nimproved: %d/%d\n", p.n_improved, p.delta.n);
  });
});

}  // namespace
