// `gllm audit CKPT [--baseline CKPT] [--matrices] [--json]`: stable rank and mean-row energy of
// every matrix grouped as seed 001 Table 4, the exp(q_τ) band profile of Table 5a, and the grades.
#include <cstdio>

#include "app/gllm/command_registry.h"
#include "engine/audit/checkpoint_audit.h"
#include "engine/grading/certify.h"
#include "engine/io/error.h"
#include "engine/train/model_grades.h"
#include "engine/train/run_store.h"

namespace {

void print_profile(const char* title, const gllm::audit::BandProfile& p,
                   const gllm::audit::BandProfile* base) {
  auto ex = [&](double x, double b) {
    if (!base || b == 1.0) return std::string();
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%+.1f%% excess)", 100 * gllm::audit::excess_change(x, b));
    return std::string(buf);
  };
  std::printf("%s: overall %.4f ± %.4f\n", title, p.mean, p.sd);
  const char* names[3] = {"high-freq local", "mid-freq", "low-freq long"};
  for (int b = 0; b < 3; ++b)
    std::printf("  %-16s planes %2d-%2d  %.4f%s\n", names[b], p.band_edges[b],
                p.band_edges[b + 1] - 1, p.band_mean[b],
                ex(p.band_mean[b], base ? base->band_mean[b] : 1).c_str());
  std::printf("  layer 0 %.4f%s", p.layer0_mean,
              ex(p.layer0_mean, base ? base->layer0_mean : 1).c_str());
  if (!p.middle_layers.empty()) std::printf("  middle L2-L%d %.4f", p.layers - 2, p.middle_mean);
  std::printf("  final L%d %.4f\n", p.layers - 1, p.final_mean);
}

gllm::cli::RegisterCommand reg_audit("audit", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "audit", "Checkpoint diagnostics: stable rank, mean-row energy, query-scale bands, grades");
  struct O {
    std::string ckpt, baseline;
    bool matrices = false, json = false;
  };
  auto o = std::make_shared<O>();
  cmd->add_option("checkpoint", o->ckpt,
                  "A .safetensors checkpoint or a run folder (its newest valid checkpoint)")
      ->required();
  cmd->add_option("--baseline", o->baseline,
                  "Reference checkpoint for the Table 5a excess changes");
  cmd->add_flag("--matrices", o->matrices, "List every matrix (always in --json)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    const std::string weights = gllm::resolve_weights_path(o->ckpt);
    auto a = gllm::audit::audit_checkpoint(weights);
    // Grades outside [0, q_max] (or not finite) are a finding of the audit, reported not refused.
    std::string grade_finding;
    gllm::grading::ModelGrades grades;
    bool have_grades = false;
    try {
      grades = gllm::model_grades_from_checkpoint(weights);
      have_grades = true;
    } catch (const gllm::Error&) {
      // A file without a model config (an exported model) has no grades to check.
    }
    try {
      if (have_grades) gllm::grading::check_grades_within_clip(grades);
    } catch (const gllm::Error& e) {
      grade_finding = e.what();
    }
    std::unique_ptr<gllm::audit::CheckpointAudit> b;
    if (!o->baseline.empty())
      b = std::make_unique<gllm::audit::CheckpointAudit>(
          gllm::audit::audit_checkpoint(gllm::resolve_weights_path(o->baseline)));
    if (o->json) {
      auto j = gllm::audit::to_json(a, true);
      if (b && a.has_query_scale && b->has_query_scale) {
        const auto &p = a.query_scale, &q = b->query_scale;
        j["query_scale_excess_vs_baseline"] = {
            {"baseline", b->path},
            {"high_freq_local", gllm::audit::excess_change(p.band_mean[0], q.band_mean[0])},
            {"mid_freq", gllm::audit::excess_change(p.band_mean[1], q.band_mean[1])},
            {"low_freq_long", gllm::audit::excess_change(p.band_mean[2], q.band_mean[2])},
            {"layer0", gllm::audit::excess_change(p.layer0_mean, q.layer0_mean)}};
      }
      j["grade_findings"] =
          grade_finding.empty() ? nlohmann::json::array() : nlohmann::json::array({grade_finding});
      gllm::cli::print_json(j);
      return;
    }
    std::printf("%s (d = %d)\n", a.path.c_str(), a.width);
    if (!grade_finding.empty()) std::printf("  finding: %s\n", grade_finding.c_str());
    if (!a.nonfinite.empty()) {
      std::printf("  finding: %zu tensor(s) hold NaN or infinite values and are left out:",
                  a.nonfinite.size());
      for (size_t i = 0; i < a.nonfinite.size() && i < 8; ++i)
        std::printf(" %s", a.nonfinite[i].c_str());
      std::printf("%s\n", a.nonfinite.size() > 8 ? " …" : "");
    }
    auto group = [](const char* title, const nlohmann::json& g) {
      if (g.is_null()) return;
      std::printf("  %-14s %2d mats  stable rank %8.2f", title, g["count"].get<int>(),
                  g["mean_stable_rank"].get<double>());
      if (g.contains("stable_rank_over"))
        std::printf(" / %.0f", g["stable_rank_over"].get<double>());
      std::printf("  mean-row energy %6.2f%%\n", 100 * g["mean_row_energy_share"].get<double>());
    };
    group("wte", a.groups.wte);
    group("lm_head", a.groups.lm_head);
    group("oe_tables", a.groups.oe_tables);
    group("value_embeds", a.groups.value_embeds);
    group("attention", a.groups.attention);
    group("mlp", a.groups.mlp);
    if (o->matrices)
      for (const auto& m : a.matrices)
        std::printf("    %-40s %6lld x %-6lld srank %8.2f  mean-row %6.2f%%\n", m.name.c_str(),
                    (long long)m.rows, (long long)m.cols, m.stable_rank, 100 * m.mean_row_share);
    if (a.has_query_scale)
      print_profile("exp(q_tau)", a.query_scale,
                    b && b->has_query_scale ? &b->query_scale : nullptr);
    if (a.has_attn_grades) print_profile("attention grades q", a.attn_grades, nullptr);
    if (!a.level_grades.is_null()) std::printf("level grades: %s\n", a.level_grades.dump().c_str());
  });
});

}  // namespace
