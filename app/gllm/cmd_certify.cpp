// `gllm certify PRESET_OR_CKPT --profiles FILE`: the certificate ⟨q, α̂−τ̂⟩, Λ(q), BC, gain and the
// bootstrap sign fraction of every graded component, from the grade tensors the model holds.
#include <cstdio>
#include <filesystem>

#include "app/gllm/command_registry.h"
#include "engine/config/run_config.h"
#include "engine/grading/certify.h"
#include "engine/io/error.h"
#include "engine/train/model_grades.h"

namespace {

struct CertifyArgs {
  std::string target;
  std::vector<std::string> profiles;
  bool json = false;
};

bool looks_like_checkpoint(const std::string& t) {
  std::error_code ec;
  if (std::filesystem::is_directory(t, ec)) return true;
  auto ends = [&](const char* s) {
    const std::string x(s);
    return t.size() >= x.size() && t.compare(t.size() - x.size(), x.size(), x) == 0;
  };
  return ends(".safetensors") ||
         (ends(".json") && std::filesystem::exists(t.substr(0, t.size() - 5) + ".safetensors"));
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void run_certify(const CertifyArgs& a) {
  using namespace gllm;
  grading::ModelGrades m;
  if (looks_like_checkpoint(a.target)) {
    m = model_grades_from_checkpoint(a.target);
  } else {
    const std::string path = resolve_preset_path(a.target);
    m = model_grades_from_config(RunConfig::load(path), "preset " + a.target);
  }
  std::vector<grading::AnyProfiles> profiles;
  for (const auto& p : a.profiles) profiles.push_back(grading::load_any_profiles(p));
  const auto certs = grading::certify(m, profiles);
  if (a.json) {
    nlohmann::json comps = nlohmann::json::array();
    for (const auto& c : certs) comps.push_back(grading::to_json(c));
    cli::print_json({{"target", a.target},
                     {"grades_source", m.source},
                     {"lambda", m.lambda},
                     {"clip", m.clip},
                     {"q_max", m.q_max},
                     {"sources", m.sources},
                     {"components", comps}});
    return;
  }
  std::cout << "grades: " << m.source << "\nλ = " << m.lambda << ", C = " << m.clip
            << ", q_max = " << m.q_max << "\n";
  if (certs.empty())
    std::cout << "no graded component (grading.mlge and grading.attention are off)\n";
  for (size_t i = 0; i < certs.size(); ++i) {
    const auto& c = certs[i];
    if (!c.certified) {  // consecutive heads with the same reason are named once
      size_t j = i;
      while (j + 1 < certs.size() && !certs[j + 1].certified && certs[j + 1].reason == c.reason)
        ++j;
      std::cout << c.component
                << (j > i ? " … " + certs[j].component + " (" + std::to_string(j - i + 1) + ")"
                          : "")
                << ": not certified — " << c.reason << "\n";
      i = j;
      continue;
    }
    std::cout << c.component << " (d = " << c.d << ", per coordinate): " << c.verdict
              << "\n  fit profiles:      ⟨q, α̂−τ̂⟩ = " << fixed(c.certificate, 5) << " (first order "
              << (c.sign > 0   ? "positive"
                  : c.sign < 0 ? "negative"
                               : "zero")
              << ")";
    if (c.sign_fraction >= 0)
      std::cout << ", sign kept in " << fixed(100 * c.sign_fraction, 1) << " % of " << c.resamples
                << " resamples";
    std::cout << "; Λ(q) = " << fixed(c.lambda_q, 5) << " (predicted token gain "
              << fixed(c.gain, 4) << "×), BC = " << fixed(c.bc, 5);
    if (c.has_heldout)
      std::cout << "\n  held-out profiles: ⟨q, α̂−τ̂⟩ = " << fixed(c.certificate_heldout, 5)
                << "; Λ(q) = " << fixed(c.lambda_q_heldout, 5) << " (gain "
                << fixed(c.gain_heldout, 4) << "×) — " << c.verdict_heldout;
    if (!c.coordinates.empty()) std::cout << "\n  coordinates: " << c.coordinates;
    if (c.basis_deviation >= 0)
      std::cout << ", basis drift max|P − B| = " << fixed(c.basis_deviation, 6);
    std::cout << "\n";
  }
  std::cout.flush();
}

gllm::cli::RegisterCommand reg_certify("certify", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "certify",
      "Certify the grades a preset's model or a checkpoint holds against profiles "
      "(the cone Λ(q) < 1 and its first-order test, Eq. 15's sign; BC, gain, bootstrap sign "
      "fraction; fit and held-out profiles)");
  auto a = std::make_shared<CertifyArgs>();
  cmd->add_option("target", a->target,
                  "Preset name or RunConfig JSON, run folder, or checkpoint .safetensors")
      ->required();
  cmd->add_option("--profiles", a->profiles,
                  "Profiles file(s): `gllm profiles` at d = n_embd for MLGE grades, `gllm profiles "
                  "--checkpoint` for "
                  "head grades (repeat the option for both)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_certify(*a); });
});

}  // namespace
