// `gllm ladder-report RUNS_DIR`: the selection ladder tested — each arm's pre-registered ⟨q, α̂−τ̂⟩
// against its paired ΔBPB versus uniform, tokens to a fixed BPB, and Spearman's ρ of the orders.
#include <cmath>
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/train/ladder_report.h"

namespace {

struct LadderReportArgs {
  std::string runs;
  double target = 0;
  int bootstrap = 2000;
  uint64_t seed = 0;
  bool json = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

gllm::cli::RegisterCommand reg("ladder-report", [](CLI::App& root) {
  auto* cmd =
      root.add_subcommand("ladder-report",
                          "The selection ladder against its prediction: certificate vs paired "
                          "ΔBPB to uniform, tokens to a fixed BPB, rank correlation");
  auto a = std::make_shared<LadderReportArgs>();
  cmd->add_option("runs", a->runs,
                  "Folder holding the ladder sweep's runs (gllm train --sweep "
                  "presets/sweeps/ladder-tiny.json)")
      ->required();
  cmd->add_option(
         "--target", a->target,
         "Validation BPB for tokens to target (default: the largest final val BPB of all runs)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--bootstrap", a->bootstrap,
                  "Bootstrap resamples over seeds for the interval of ρ")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the bootstrap");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] {
    const auto r = gllm::ladder_report(a->runs, a->target, a->bootstrap, a->seed);
    if (a->json) {
      gllm::cli::print_json(gllm::to_json(r));
      return;
    }
    std::cout << "ladder " << r.ladder_file
              << "; measured: held-out BPB, paired by seed against uniform; tokens to val BPB "
              << fmt("%.4f", r.target_bpb) << "\n";
    for (const auto& x : r.arms) {
      std::cout << "  " << x.predicted_rank << ". " << x.ladder_arm
                << ": ⟨q,α̂−τ̂⟩ = " << fmt("%.4f", x.certificate)
                << ", Λ = " << fmt("%.4f", x.lambda_q);
      if (x.has_delta)
        std::cout << ", ΔBPB = " << fmt("%+.5f", x.delta_heldout.delta.mean) << " ["
                  << fmt("%+.5f", x.delta_heldout.delta.ci_low) << ", "
                  << fmt("%+.5f", x.delta_heldout.delta.ci_high)
                  << "] (n = " << x.delta_heldout.delta.n << ")";
      if (x.token_ratio > 0) std::cout << ", tokens ×" << fmt("%.3f", x.token_ratio);
      std::cout << ", measured rank " << x.measured_rank << "\n";
    }
    if (std::isfinite(r.spearman))
      std::cout << "Spearman ρ(certificate, −ΔBPB) = " << fmt("%.3f", r.spearman) << " ["
                << fmt("%.3f", r.spearman_low) << ", " << fmt("%.3f", r.spearman_high) << "] ("
                << r.bootstrap << " bootstrap resamples over seeds)\n";
    else
      std::cout << "Spearman ρ(certificate, −ΔBPB): none (fewer than two arms to order)\n";
    for (const auto& w : r.warnings) std::cout << "warning: " << w << "\n";
    std::cout << std::flush;
  });
});

}  // namespace
