// `gllm cone`: the admissible cone for geometric (ν, μ) level profiles (seed 000 Table 3) or for a
// profiles file — BC, Λ* = BC², the clipped optimum Λ*_C with its grades, and any given grades'
// report.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "app/gllm/command_registry.h"
#include "engine/grading/bootstrap.h"
#include "engine/grading/cone.h"
#include "engine/grading/profiles.h"
#include "engine/grading/select.h"
#include "engine/io/error.h"

// In gllm::grading: the cone's functions by their own names (a using-directive at file scope
// would reach the next files of the CLI's unity batch).
namespace gllm::grading {
namespace {

// Table 3 uses a handful of levels; the level program's cost grows with L, so L is bounded.
constexpr int kMaxLevels = 1024;
// Grades given on the command line (one per coordinate).
constexpr size_t kMaxGrades = 1 << 20;

struct ConeArgs {
  bool geometric = false;
  double nu = 0, mu = 0;
  int levels = 4;
  std::string profiles;
  double clip = 2.0;
  double lambda = 0;  // 0: e^{1/head_dim}
  int head_dim = 64;
  double magnitude_weight = 0;
  std::vector<double> grades, level_grades;
  bool json = false;
};

nlohmann::json report_json(const ConeReport& r) {
  return {{"lambda_q", r.lambda_q},
          {"log_lambda", r.log_lambda},
          {"gain", r.gain},
          {"bc", r.bc},
          {"lambda_star", r.lambda_star},
          {"certificate", r.certificate},
          {"certificate_sign", r.certificate_sign},
          {"gradient", r.gradient},
          {"clip_bound", r.clip_bound},
          {"clipped_floor", r.clipped_floor},
          {"in_cone", r.in_cone},
          {"within_clip", r.within_clip},
          {"q_max", r.q_max}};
}

std::string vec(const std::vector<double>& v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ")";
  return os.str();
}

void run_cone(const ConeArgs& a) {
  if (a.head_dim < 1) throw gllm::Error("--head-dim must be ≥ 1");
  if (a.grades.size() > kMaxGrades || a.level_grades.size() > kMaxGrades)
    throw gllm::Error("more than " + std::to_string(kMaxGrades) +
                      " grades given; give one per coordinate");
  const double lambda = a.lambda != 0 ? a.lambda : std::exp(1.0 / a.head_dim);
  validate_base_and_clip(lambda, a.clip);
  if (a.geometric == !a.profiles.empty())
    throw gllm::Error(
        "give exactly one source of profiles: --geometric --nu ν --mu μ [--levels L], or "
        "--profiles FILE");
  nlohmann::json out;
  out["lambda"] = lambda;
  out["clip"] = a.clip;
  out["q_max"] = q_max_for(lambda, a.clip);
  // Grades so large that λ^{±2q} overflows a double would print Λ(q) = 1 or NaN: refused
  // (grades merely outside [0, q_max] are evaluated and reported as outside the clip).
  for (const auto* list : {&a.grades, &a.level_grades})
    for (double q : *list)
      if (std::isfinite(q) && 2 * std::abs(q) * std::log(lambda) > 700)
        throw gllm::Error("grade " + std::to_string(q) +
                          " makes λ^(2q) overflow (λ = " + std::to_string(lambda) +
                          "); grades live in [0, " + std::to_string(q_max_for(lambda, a.clip)) +
                          "] = [0, log C / log λ] — give grades of that size");
  out["clip_bound"] = 1.0 / (a.clip * a.clip);
  Profiles p;
  if (a.geometric) {
    if (a.magnitude_weight != 0)
      throw gllm::Error(
          "--magnitude-weight applies to --profiles; Table 3 (--geometric) is the unpenalised "
          "program");
    auto s = geometric_summary(a.nu, a.mu, a.levels, lambda, a.clip);
    p = geometric_profiles(a.nu, a.mu, a.levels);
    out["source"] = "geometric";
    out["nu"] = a.nu;
    out["mu"] = a.mu;
    out["levels"] = a.levels;
    out["a"] = s.a;
    out["s"] = s.s;
    // Table 3's "Λ* = BC(a,s)²" column prints BC² (0.279 at (0.5, 0.2), where BC = 0.528).
    out["bc"] = s.bc;
    out["lambda_star"] = s.lambda_star;
    out["lambda_c"] = s.lambda_c;
    out["gain"] = s.gain;
    out["gain_unclipped"] = 1.0 / s.lambda_star;
    out["prop10_bound"] = std::max(s.lambda_star, s.clip_bound);
    out["v_c"] = s.v;
    out["g_c"] = s.g;
    out["kkt_residual"] = s.kkt_residual;
  } else {
    ProfilesFile f = load_profiles_file(a.profiles);
    p = f.profiles;
    SelectOptions o;
    o.lambda = lambda;
    o.clip = a.clip;
    o.magnitude_weight = a.magnitude_weight;
    auto del = delete_degenerate(p);
    auto s = select_educated(p, o);
    double bc = bhattacharyya(p.alpha, p.tau);
    out["source"] = a.profiles;
    out["d"] = p.d();
    out["levels"] = p.levels();
    out["level_dims"] = p.level_dims;
    out["bc"] = bc;
    out["lambda_star"] = bc * bc;
    out["lambda_c"] = s.lambda_c;
    out["gain"] = s.gain;
    out["gain_unclipped"] = 1.0 / (bc * bc);
    out["prop10_bound"] = std::max(bc * bc, 1.0 / (a.clip * a.clip));
    out["q_c"] = s.q;
    out["g_c"] = s.multipliers;
    out["objective"] = s.objective;
    out["magnitude_weight"] = a.magnitude_weight;
    out["kkt_residual"] = s.kkt_residual;
    out["method"] = s.method;
    out["converged"] = s.converged;
    out["deleted"] = s.deleted;
    out["deletion"] = del.summary();
    if (!f.bootstrap.empty()) {
      // §7.2: sign stability of the given grades (else of q*_C) and the BC interval.
      const auto& q = a.grades.empty() ? s.q : a.grades;
      auto b = bootstrap_from_resamples(p, f.bootstrap, q);
      out["bootstrap"] = {{"resamples", b.resamples},
                          {"grades", a.grades.empty() ? "educated" : "given"},
                          {"sign_fraction", b.sign_fraction},
                          {"bc_low", b.bc_low},
                          {"bc_high", b.bc_high},
                          {"certificate_low", b.certificate_low},
                          {"certificate_high", b.certificate_high},
                          {"level", b.level}};
    }
    if (p.has_levels()) {
      auto sl = select_levels(p, o);
      auto lp = p.level_profiles();
      out["level_alpha"] = lp.alpha;
      out["level_tau"] = lp.tau;
      out["level_optimum"] = {
          {"lambda_c", sl.lambda_c},
          {"gain", sl.gain},
          {"v_c", sl.level_grades},
          {"g_c", std::vector<double>(sl.multipliers.begin(), sl.multipliers.end())},
          {"kkt_residual", sl.kkt_residual}};
      // Per-level multipliers (one per level, not per coordinate).
      std::vector<double> g;
      for (double v : sl.level_grades) g.push_back(std::pow(lambda, v));
      out["level_optimum"]["g_c"] = g;
    }
  }
  if (!a.grades.empty())
    out["grades_report"] = report_json(evaluate_cone(p, a.grades, lambda, a.clip));
  if (!a.level_grades.empty())
    out["level_grades_report"] =
        report_json(evaluate_cone_levels(p, a.level_grades, lambda, a.clip));

  if (a.json) {
    gllm::cli::print_json(out);
    return;
  }
  std::cout << std::fixed << std::setprecision(4);
  std::cout << "λ = " << lambda << ", C = " << a.clip << ", q_max = " << out["q_max"].get<double>()
            << "\n";
  std::cout << "BC(α,τ)            " << out["bc"].get<double>() << "\n"
            << "Λ* = BC²           " << out["lambda_star"].get<double>() << "\n"
            << "Λ*_C (clipped opt) " << out["lambda_c"].get<double>() << "\n"
            << "token gain 1/Λ*_C  " << out["gain"].get<double>() << "\n"
            << "bound max(BC²,C⁻²) " << out["prop10_bound"].get<double>() << "\n";
  if (a.geometric)
    std::cout << "g*_C per level     " << vec(out["g_c"].get<std::vector<double>>(), 2) << "\n";
  else if (out.contains("level_optimum"))
    std::cout << "g*_C per level     "
              << vec(out["level_optimum"]["g_c"].get<std::vector<double>>(), 2)
              << " (level program, Λ = " << out["level_optimum"]["lambda_c"].get<double>() << ")\n";
  if (out.contains("deletion")) std::cout << out["deletion"].get<std::string>() << "\n";
  if (out.contains("bootstrap"))
    std::cout << "bootstrap (" << out["bootstrap"]["resamples"].get<int>()
              << " resamples): sign kept in "
              << 100 * out["bootstrap"]["sign_fraction"].get<double>() << "%, BC 95% interval ["
              << out["bootstrap"]["bc_low"].get<double>() << ", "
              << out["bootstrap"]["bc_high"].get<double>() << "]\n";
  for (const char* key : {"grades_report", "level_grades_report"}) {
    if (!out.contains(key)) continue;
    auto& r = out[key];
    std::cout << key << ": Λ(q) = " << r["lambda_q"].get<double>()
              << ", ⟨q,α−τ⟩ = " << r["certificate"].get<double>()
              << (r["in_cone"].get<bool>() ? "  (in the admissible cone)" : "  (not in the cone)")
              << "\n";
  }
  std::cout.flush();
}

gllm::cli::RegisterCommand reg_cone("cone", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("cone",
                                  "The admissible cone: BC, Λ* = BC², the clipped optimum Λ*_C and "
                                  "its grades (seed 000 §6–§7, Table 3)");
  auto a = std::make_shared<ConeArgs>();
  cmd->add_flag("--geometric", a->geometric,
                "Geometric level profiles a_l ∝ ν^{L−1−l}, s_l ∝ μ^l (Cor. 3)");
  cmd->add_option("--nu", a->nu,
                  "ν: concentration of the target towards the deepest level (with --geometric)");
  cmd->add_option("--mu", a->mu,
                  "μ: decay of the data away from the shallowest level (with --geometric)");
  cmd->add_option("--levels", a->levels, "Number of levels L (with --geometric)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxLevels));
  cmd->add_option("--profiles", a->profiles, "Profiles JSON written by `gllm profiles`");
  cmd->add_option("--clip", a->clip, "Clip C > 1: grades in [0, log C / log λ]")
      ->capture_default_str();
  cmd->add_option("--lambda", a->lambda,
                  "Grading base λ > 1 (default e^{1/head_dim}); Λ and g = λ^q do not depend on it");
  cmd->add_option("--head-dim", a->head_dim, "d_k for the default base λ = e^{1/d_k}")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--magnitude-weight", a->magnitude_weight,
                  "ν_mag ≥ 0 of the penalty ν_mag‖q‖² (Cor. 4; --profiles only)");
  cmd->add_option("--grades", a->grades, "Per-coordinate grades to certify, comma separated")
      ->delimiter(',');
  cmd->add_option("--level-grades", a->level_grades,
                  "Level-constant grades to certify (Rem. 9), comma separated")
      ->delimiter(',');
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_cone(*a); });
});

}  // namespace
}  // namespace gllm::grading
