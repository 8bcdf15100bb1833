// `gllm ladder plan LADDER --pilot RUNS`: before a sweep, each arm's predicted token ratio and ΔBPB
// from a uniform pilot, and the seeds each comparison against uniform needs (ladder_plan.h).
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"
#include "engine/train/ladder_plan.h"

namespace gllm::cli {

namespace {

struct PlanArgs {
  std::string ladder, pilot;
  PlanOptions options;
  bool json = false;
};

}  // namespace

void add_ladder_plan(CLI::App& ladder) {
  auto* cmd = ladder.add_subcommand(
      "plan",
      "Power plan before a ladder sweep: predicted token ratio 1/Λ and ΔBPB per arm through a "
      "uniform pilot's BPB-vs-tokens slope, and the seeds each needs for 80 % power");
  auto a = std::make_shared<PlanArgs>();
  cmd->add_option("ladder", a->ladder, "Ladder JSON (gllm ladder --out)")->required();
  cmd->add_option("--pilot", a->pilot,
                  "Folder of pilot runs: the uniform arm with ≥ 2 seeds (other arms, paired by "
                  "seed, give the seed noise)")
      ->required();
  cmd->add_option("--max-seeds", a->options.max_seeds,
                  "Budget: the most seeds per arm; arms needing more are out of reach")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option("--seeds", a->options.seeds,
                  "Quote the power achieved at this many seeds (default: the pilot's)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--power", a->options.power, "Target power")
      ->check(CLI::Range(0.5, 0.999))
      ->capture_default_str();
  cmd->add_option("--alpha", a->options.alpha, "Two-sided level of each comparison")
      ->check(CLI::Range(0.0001, 0.5))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] {
    const auto p = ladder_plan(a->ladder, a->pilot, a->options);
    if (a->json) {
      print_json(to_json(p));
      return;
    }
    std::cout << "ladder " << p.ladder_file << " (" << p.prediction << " prediction); pilot "
              << p.pilot_dir << ": uniform × " << p.pilot_seeds << " seeds, "
              << gllm::cli::number_text("%.0f", p.budget_tokens) << " tokens\n"
              << "slope: " << gllm::cli::number_text("%.4f", p.slope)
              << " BPB per e-fold of tokens (" << p.slope_window << ")\n"
              << "paired seed SD: " << gllm::cli::number_text("%.5f", p.paired_sd) << " BPB ("
              << p.paired_sd_source << ")\n";
    TextTable table({"arm", "⟨q,α̂−τ̂⟩", "Λ", "predicted ratio 1/Λ", "predicted ΔBPB",
                     "seeds for " + gllm::cli::number_text("%.0f", p.options.power * 100) + " %",
                     "power at " + std::to_string(p.seeds_at)},
                    {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right,
                     Align::Right, Align::Right});
    for (const auto& x : p.arms)
      table.add_row({x.arm, gllm::cli::number_text("%.4f", x.certificate),
                     gllm::cli::number_text("%.4f", x.lambda_q),
                     gllm::cli::number_text("%.4f", x.predicted_gain),
                     gllm::cli::number_text("%+.5f", x.predicted_delta_bpb),
                     x.arm == "uniform" ? "—"
                     : x.in_reach       ? std::to_string(x.seeds_needed)
                                  : "> " + std::to_string(p.options.max_seeds) + " (out of reach)",
                     x.arm == "uniform" ? "—" : gllm::cli::number_text("%.2f", x.power_at_seeds)});
    std::cout << table.render() << "plan: " << p.recommendation << "\n";
    for (const auto& n : p.notes) std::cout << "note: " << n << "\n";
    std::cout << std::flush;
  });
}

}  // namespace gllm::cli
