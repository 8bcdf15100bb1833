// `gllm ladder-report RUNS_DIR`: the selection ladder tested — each arm's pre-registered ⟨q, α̂−τ̂⟩
// against its tokens to a target (BPB, task error) as ratios to uniform, and Spearman's ρ.
#include <cmath>
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"
#include "engine/train/ladder_report.h"

namespace {

struct LadderReportArgs {
  std::string runs;
  gllm::LadderReportOptions options;
  bool json = false;
};

std::string ratio_text(const gllm::TokenRatio& r) {
  if (r.n == 0) return "not reached";
  std::string s = "×" + gllm::cli::number_text("%.3f", r.ratio);
  if (r.n > 1)
    s += " [" + gllm::cli::number_text("%.3f", r.low) + ", " +
         gllm::cli::number_text("%.3f", r.high) + "]";
  return s + " (n=" + std::to_string(r.n) + ")";
}

std::string rho_text(const gllm::RankCorrelation& c) {
  if (!std::isfinite(c.rho)) return "none (fewer than two arms besides uniform measured)";
  std::string s = gllm::cli::number_text("%.3f", c.rho);
  if (c.seeds >= 2)
    s += " [" + gllm::cli::number_text("%.3f", c.low) + ", " +
         gllm::cli::number_text("%.3f", c.high) + "]";
  return s + " over " + std::to_string(c.arms) + " arms, " + std::to_string(c.seeds) + " seeds";
}

gllm::cli::RegisterCommand reg_ladder_report("ladder-report", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "ladder-report",
      "The selection ladder against its prediction (seed 000 §8.2.2): tokens to a target val "
      "BPB and task error per arm as ratios to uniform, paired ΔBPB, rank correlations");
  auto a = std::make_shared<LadderReportArgs>();
  cmd->add_option("runs", a->runs,
                  "Folder holding the ladder sweep's runs (gllm train --sweep "
                  "presets/sweeps/ladder-tiny.json)")
      ->required();
  cmd->add_option("--target", a->options.target_bpb,
                  "Validation BPB for tokens to target (default: the uniform arm's val BPB at "
                  "half its budget)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--task-target", a->options.target_task_error,
                  "Task error for tokens to target (default: the uniform arm's at half its "
                  "budget)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--task", a->options.task,
                  "Probe task in the runs' probe.jsonl (default: the first found; gllm probe)");
  cmd->add_option("--layer", a->options.task_layer, "Probe layer (default: the deepest probed)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--bootstrap", a->options.bootstrap,
                  "Bootstrap resamples over seeds for the interval of ρ")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", a->options.seed, "Seed of the bootstrap");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] {
    const auto r = gllm::ladder_report(a->runs, a->options);
    if (a->json) {
      gllm::cli::print_json(gllm::to_json(r));
      return;
    }
    std::cout << "ladder " << r.ladder_file << "; arms ordered by the " << r.prediction
              << " certificate\ntarget val BPB " << gllm::cli::number_text("%.4f", r.target_bpb)
              << " (" << r.target_rule << ", "
              << gllm::cli::number_text("%.0f", r.half_budget_tokens) << " tokens)\n";
    if (r.has_task)
      std::cout << "target task error " << gllm::cli::number_text("%.4f", r.target_task_error)
                << " (" << r.task << ", layer " << r.task_layer << "; " << r.task_target_rule
                << ")\n";
    std::vector<std::string> head{"#", "arm", "⟨q,α̂−τ̂⟩", "predicted 1/Λ", "tokens ratio (BPB)"};
    if (r.has_task) head.push_back("tokens ratio (task)");
    head.insert(head.end(), {"held-out ΔBPB", "measured #"});
    gllm::TextTable table(
        head, {gllm::Align::Right, gllm::Align::Left, gllm::Align::Right, gllm::Align::Right,
               gllm::Align::Left, gllm::Align::Left, gllm::Align::Left, gllm::Align::Right});
    for (const auto& x : r.arms) {
      std::vector<std::string> row{std::to_string(x.predicted_rank), x.ladder_arm,
                                   gllm::cli::number_text("%.4f", x.predicted_certificate()),
                                   gllm::cli::number_text("%.4f", x.predicted_gain()),
                                   ratio_text(x.token_ratio)};
      if (r.has_task) row.push_back(ratio_text(x.task_token_ratio));
      row.push_back(x.has_delta
                        ? gllm::cli::number_text("%+.5f", x.delta_heldout.delta.mean) + " [" +
                              gllm::cli::number_text("%+.5f", x.delta_heldout.delta.ci_low) + ", " +
                              gllm::cli::number_text("%+.5f", x.delta_heldout.delta.ci_high) + "]"
                        : "—");
      row.push_back(std::to_string(x.measured_rank));
      table.add_row(row);
    }
    std::cout << table.render();
    std::cout << "Spearman ρ(certificate, token ratio BPB) = " << rho_text(r.rho_tokens) << "\n";
    if (r.has_task)
      std::cout << "Spearman ρ(certificate, token ratio task) = " << rho_text(r.rho_task) << "\n";
    std::cout << "Spearman ρ(certificate, −ΔBPB held-out) = " << rho_text(r.rho_delta) << " ("
              << r.bootstrap << " bootstrap resamples over seeds)\n";
    for (const auto& w : r.warnings) std::cout << "warning: " << w << "\n";
    std::cout << std::flush;
  });
});

}  // namespace
