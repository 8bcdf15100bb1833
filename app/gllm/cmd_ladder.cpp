// `gllm ladder`: the arms of seed 000 Table 2 (three random draws) from a profiles file, each with
// ⟨q, α̂−τ̂⟩, Λ(q), held-out and bootstrap figures, ordered; written as the JSON presets name in
// grading.ladder_file.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "app/gllm/command_registry.h"
#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"

namespace gllm::cli {
void add_ladder_plan(CLI::App& ladder);  // cmd_ladder_plan.cpp
}

namespace {

struct LadderArgs {
  std::string profiles, out;
  double clip = 2.0, lambda = 0, magnitude_weight = 0;
  int head_dim = 64;
  uint64_t seed = 0;
  std::string program = "d";
  bool json = false;
};

gllm::cli::RegisterCommand reg_ladder("ladder", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "ladder", "Selection ladder (seed 000 Table 2): grades and certificates of its arms");
  auto a = std::make_shared<LadderArgs>();
  cmd->add_option("--profiles", a->profiles,
                  "Profiles JSON written by `gllm profiles` (required unless a subcommand is "
                  "given)");
  cmd->add_option("--clip", a->clip, "Clip C > 1")->capture_default_str();
  cmd->add_option("--lambda", a->lambda,
                  "Grading base λ > 1 (default e^{1/head_dim}); must match the model's λ");
  cmd->add_option("--head-dim", a->head_dim, "d_k for the default base λ = e^{1/d_k}")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the random arms (draws s, s+1, s+2; 0 to 2^63 − 3)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t(0), uint64_t(INT64_MAX) - 2))
      ->check(CLI::Validator(
          [](const std::string& v) {
            return v.find('-') == std::string::npos ? std::string()
                                                    : std::string("a seed is not negative");
          },
          "", "NONNEG"));
  cmd->add_option("--magnitude-weight", a->magnitude_weight,
                  "ν_mag of the educated/oracle optimum");
  cmd->add_option(
         "--program", a->program,
         "Program of the educated and oracle arms: d (the d-variable box program, Prop. 10) or "
         "levels (the L-level reduction, Prop. 11)")
      ->check(CLI::IsMember({"d", "levels"}))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "Write the ladder JSON here (atomic)");
  cmd->add_flag("--json", a->json, "Print the ladder JSON to stdout");
  gllm::cli::add_ladder_plan(*cmd);
  cmd->callback([a, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // `gllm ladder plan …`
    if (a->profiles.empty())
      throw gllm::Error(
          "gllm ladder: --profiles is required (the profiles JSON of `gllm profiles`)");
    if (a->head_dim < 1) throw gllm::Error("--head-dim must be ≥ 1");
    gllm::grading::LadderOptions o;
    o.lambda = a->lambda != 0 ? a->lambda : std::exp(1.0 / a->head_dim);
    o.clip = a->clip;
    o.seed = a->seed;
    o.magnitude_weight = a->magnitude_weight;
    o.level_program = a->program == "levels";
    auto f = gllm::grading::load_profiles_file(a->profiles);
    auto lad = gllm::grading::build_ladder(f, o);
    // Where the profiles are, as the ladder's own folder sees them (presets and the workbench
    // use it to give the model the same basis).
    lad.profiles_file = a->profiles;
    if (!a->out.empty()) {
      std::error_code ec;
      const auto base = std::filesystem::absolute(a->out, ec).parent_path();
      const auto rel =
          std::filesystem::relative(std::filesystem::absolute(a->profiles, ec), base, ec);
      if (!ec && !rel.empty() && rel.native().rfind("..", 0) != 0) lad.profiles_file = rel.string();
    }
    if (!a->out.empty()) gllm::grading::save_ladder_file(a->out, lad);
    if (a->json) {
      gllm::cli::print_json(gllm::grading::ladder_to_json(lad));
      return;
    }
    const bool levels = lad.program_kind == "levels";
    std::cout << "BC(α̂,τ̂) = " << lad.bc << ", Λ* = " << lad.lambda_star << " ("
              << (levels ? "per level: the L-level program"
                         : "per coordinate: the d-variable program")
              << "), λ = " << lad.lambda << ", C = " << lad.clip << "\n";
    std::cout << "coordinates: "
              << (lad.reference.is_object()
                      ? "token reference " + lad.reference.value("kind", std::string()) + " " +
                            lad.reference.value("digest", std::string())
                      : std::string("word-type reference (no model's embedding has them)"))
              << "\nfit: " << lad.fit << "\nscored: " << lad.scoring << "\n";
    auto num = [](double v) {
      std::ostringstream s;
      s << std::setprecision(4) << v;
      return s.str();
    };
    // Left-aligned text before the last column: every line of the table keeps one width.
    gllm::TextTable table({"rank", "arm", "⟨q,α̂−τ̂⟩ fit", "Λ fit", "gain fit", "held-out verdict",
                           "⟨q,α̂−τ̂⟩ held-out", "Λ held-out", "gain held-out"},
                          {gllm::Align::Right, gllm::Align::Left, gllm::Align::Right,
                           gllm::Align::Right, gllm::Align::Right, gllm::Align::Left,
                           gllm::Align::Right, gllm::Align::Right, gllm::Align::Right});
    for (const auto& name : lad.order) {
      const auto& arm = lad.arm(name);
      const bool h = arm.has_heldout;
      std::string cert = num(arm.certificate);
      if (!arm.interval_method.empty())
        cert += " [" + num(arm.certificate_low) + ", " + num(arm.certificate_high) + "]";
      table.add_row(
          {std::to_string(arm.rank), arm.name, cert, num(arm.lambda_q), num(arm.gain),
           h ? gllm::grading::cone_verdict_text(arm.lambda_q_heldout, arm.certificate_heldout)
             : "— (fit: " + gllm::grading::cone_verdict_text(arm.lambda_q, arm.certificate) + ")",
           h ? num(arm.certificate_heldout) : "—", h ? num(arm.lambda_q_heldout) : "—",
           h ? num(arm.gain_heldout) : "—"});
    }
    std::cout << table.render();
    for (const auto& arm : lad.arms)
      std::cout << "- " << arm.name << ": " << (arm.available ? arm.program : arm.reason)
                << (arm.available ? "; fit profiles: " + gllm::grading::cone_verdict_text(
                                                             arm.lambda_q, arm.certificate)
                                  : std::string())
                << "\n";
    bool corrected = false;
    for (const auto& arm : lad.arms)
      corrected |= arm.interval_method.find("bias") != std::string::npos;
    if (corrected)
      std::cout << "intervals: 95 % bootstrap (each resample refits the arm's program); where the "
                   "percentile interval missed its estimate it is median-bias-corrected\n";
    if (!a->out.empty()) std::cout << "wrote " << a->out << "\n";
    std::cout.flush();
  });
});

}  // namespace
