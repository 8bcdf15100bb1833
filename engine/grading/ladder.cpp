// Builds the six ladder arms from a profiles file, scores each with ⟨q, α̂−τ̂⟩ (and Λ, held-out and
// bootstrap figures when available), orders them, and reads/writes the ladder JSON.
#include "engine/grading/ladder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/grading/bootstrap.h"
#include "engine/grading/cone.h"
#include "engine/grading/grade_sources.h"
#include "engine/grading/select.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm::grading {

namespace {

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<double> level_means(const Profiles& p, const std::vector<double>& q) {
  if (!p.has_levels()) return {};
  auto off = p.level_offsets();
  std::vector<double> v(p.levels(), 0.0);
  for (int l = 0; l < p.levels(); ++l) {
    for (int j = off[l]; j < off[l + 1]; ++j) v[l] += q[j];
    v[l] /= p.level_dims[l];
  }
  return v;
}

}  // namespace

std::vector<double> random_grades(int d, double q_max, uint64_t seed) {
  if (d < 1) throw Error("random grades need d ≥ 1");
  if (!(q_max > 0) || !std::isfinite(q_max)) throw Error("random grades need a finite q_max > 0");
  std::vector<double> q(d);
  uint64_t state = seed;
  for (int j = 0; j < d; ++j)
    q[j] = q_max * (static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53);
  return q;
}

std::vector<double> taxonomic_grades(const Profiles& p, double q_max) {
  if (!p.has_levels())
    throw Error("the taxonomic arm needs level structure (level_dims in the profiles file)");
  const int L = p.levels();
  std::vector<double> q;
  q.reserve(p.d());
  for (int l = 0; l < L; ++l) {
    double v = L > 1 ? q_max * static_cast<double>(l) / (L - 1) : 0.0;
    for (int k = 0; k < p.level_dims[l]; ++k) q.push_back(v);
  }
  return q;
}

std::vector<double> pos_arm_grades(const std::vector<double>& shares, double q_max) {
  if (shares.empty())
    throw Error("the POS arm needs per-coordinate shares (pos_grades in the profiles file)");
  const auto [lo, hi] = std::minmax_element(shares.begin(), shares.end());
  std::vector<double> q(shares.size(), 0.0);
  const double span = *hi - *lo;
  if (!(span > 0)) return q;
  for (size_t j = 0; j < q.size(); ++j)
    q[j] = std::clamp(q_max * (shares[j] - *lo) / span, 0.0, q_max);
  return q;
}

const LadderArm& Ladder::arm(const std::string& name) const {
  for (auto& a : arms)
    if (a.name == name) return a;
  throw Error("ladder has no arm \"" + name +
              "\"; arms are uniform, random, random-2, random-3, taxonomic, pos, educated, "
              "oracle");
}

Ladder build_ladder(const ProfilesFile& f, const LadderOptions& opt) {
  const Profiles& p = f.profiles;
  validate(p);
  validate_base_and_clip(opt.lambda, opt.clip);
  Ladder lad;
  lad.lambda = opt.lambda;
  lad.clip = opt.clip;
  lad.q_max = q_max_for(opt.lambda, opt.clip);
  lad.bc_coordinates = bhattacharyya(p.alpha, p.tau);
  lad.bc_levels =
      p.has_levels() ? bhattacharyya(p.level_alpha(), p.level_tau()) : lad.bc_coordinates;
  lad.program_kind = opt.level_program ? "levels" : "coordinates";
  lad.bc = opt.level_program ? lad.bc_levels : lad.bc_coordinates;
  lad.lambda_star = lad.bc * lad.bc;
  if (f.has_heldout()) lad.bc_heldout = bhattacharyya(f.heldout.alpha, f.heldout.tau);
  lad.fit = "alpha/tau: the profiles the grades are fitted on (validation sentences)";
  lad.scoring = f.has_heldout()
                    ? "heldout: profiles re-estimated on held-out sentences no grade was fitted on"
                    : "none (the profiles file has no held-out profiles)";
  lad.reference = f.reference;
  lad.seed = opt.seed;
  lad.d = p.d();
  lad.level_dims = p.level_dims;
  lad.alpha = p.alpha;
  lad.tau = p.tau;
  lad.profiles_digest = profiles_digest(f);
  SelectOptions so;
  so.lambda = opt.lambda;
  so.clip = opt.clip;
  so.magnitude_weight = opt.magnitude_weight;
  const std::string optimum =
      opt.level_program ? "L-level program (Prop. 11)" : "d-variable program (Prop. 10)";
  auto solve = [&](const Profiles& prof) {
    return opt.level_program ? select_levels(prof, so).q : select_educated(prof, so).q;
  };

  for (const auto& name : ladder_arm_names()) {
    LadderArm a;
    a.name = name;
    bool refit = false;  // the grades are fitted on the fit profiles (refit per resample)
    if (name == "uniform") {
      a.grades.assign(p.d(), 0.0);
      a.program = "none: q = 0, the ungraded model";
    } else if (name.rfind("random", 0) == 0) {
      const uint64_t draw = name == "random" ? 0 : std::stoull(name.substr(7)) - 1;
      a.grades = random_grades(p.d(), lad.q_max, opt.seed + draw);
      a.program = "uniform draw on [0, q_max]^d (seed " + std::to_string(opt.seed + draw) + ")";
    } else if (name == "taxonomic") {
      if (p.has_levels()) {
        a.grades = taxonomic_grades(p, lad.q_max);
        a.program = "level ordering: v_l = q_max·l/(L−1) (Rem. 9)";
      } else {
        a.available = false;
        a.reason = "the profiles have no level structure (level_dims)";
      }
    } else if (name == "pos") {
      if (f.pos_grades.empty()) {
        a.available = false;
        a.reason = "the profiles file has no pos_grades; regenerate it with `gllm profiles`";
      } else {
        a.grades = pos_arm_grades(f.pos_grades, lad.q_max);
        a.program =
            "part-of-speech statistics (§8.1.2): open-class energy share spread over [0, q_max]";
      }
    } else if (name == "educated") {
      a.grades = solve(p);
      a.program = optimum + " fitted on the fit profiles";
      refit = true;
    } else if (name == "oracle") {
      if (f.has_heldout()) {
        a.grades = solve(f.heldout);
        a.program = optimum + " fitted on the held-out profiles it is scored on (an upper bound)";
      } else {
        a.available = false;
        a.reason = "the profiles file has no held-out profiles (\"heldout\")";
      }
    }
    if (a.available) {
      a.level_grades = level_means(p, a.grades);
      ConeReport r = evaluate_cone(p, a.grades, opt.lambda, opt.clip);
      a.certificate = r.certificate;
      a.sign = r.certificate_sign;
      a.lambda_q = r.lambda_q;
      a.gain = r.gain;
      a.in_cone = r.in_cone;
      if (f.has_heldout()) {
        a.has_heldout = true;
        a.certificate_heldout = certificate(f.heldout.alpha, f.heldout.tau, a.grades);
        a.lambda_q_heldout = lambda_of(f.heldout.alpha, f.heldout.tau, a.grades, opt.lambda);
        a.gain_heldout = 1.0 / a.lambda_q_heldout;
      }
      if (!f.bootstrap.empty()) {
        // A zero certificate (uniform arm) keeps its sign only where resamples also give zero.
        double tol =
            1e-12 * (1.0 + std::accumulate(a.grades.begin(), a.grades.end(), 0.0,
                                           [](double s, double x) { return s + std::abs(x); }));
        // Each resample runs the arm's whole pipeline: the educated grades are refitted on the
        // resampled profiles, then scored on them (in-sample) and on the held-out profiles.
        std::vector<double> cert, lam, held;
        int same = 0;
        for (const auto& b : f.bootstrap) {
          const std::vector<double> q = refit ? solve(b) : a.grades;
          const double c = certificate(b.alpha, b.tau, q);
          cert.push_back(c);
          lam.push_back(lambda_of(b.alpha, b.tau, q, opt.lambda));
          if (f.has_heldout()) held.push_back(certificate(f.heldout.alpha, f.heldout.tau, q));
          same += certificate_sign_of(c, tol) == certificate_sign_of(a.certificate, tol);
        }
        a.bootstrap_sign_fraction = static_cast<double>(same) / f.bootstrap.size();
        const Interval ci = bootstrap_interval(a.certificate, cert);
        const Interval li = bootstrap_interval(a.lambda_q, lam);
        a.certificate_low = ci.low;
        a.certificate_high = ci.high;
        a.lambda_q_low = li.low;
        a.lambda_q_high = li.high;
        a.interval_method = ci.method == li.method ? ci.method : ci.method + " / " + li.method;
        if (!held.empty()) {
          const Interval hi = bootstrap_interval(a.certificate_heldout, held);
          a.certificate_heldout_low = hi.low;
          a.certificate_heldout_high = hi.high;
        }
      }
    }
    lad.arms.push_back(a);
  }
  std::vector<const LadderArm*> avail;
  for (auto& a : lad.arms)
    if (a.available) avail.push_back(&a);
  std::stable_sort(avail.begin(), avail.end(), [](const LadderArm* x, const LadderArm* y) {
    return x->certificate > y->certificate;
  });
  for (size_t i = 0; i < avail.size(); ++i) {
    lad.order.push_back(avail[i]->name);
    const_cast<LadderArm*>(avail[i])->rank = static_cast<int>(i + 1);
  }
  return lad;
}

nlohmann::json ladder_to_json(const Ladder& l) {
  nlohmann::json j;
  j["format"] = "gllm-ladder/1";
  j["lambda"] = l.lambda;
  j["clip"] = l.clip;
  j["q_max"] = l.q_max;
  j["d"] = l.d;
  j["levels"] = l.level_dims.size();
  j["level_dims"] = l.level_dims;
  j["bc"] = l.bc;
  j["lambda_star"] = l.lambda_star;
  j["program_kind"] = l.program_kind;
  j["bc_coordinates"] = l.bc_coordinates;
  j["bc_levels"] = l.bc_levels;
  if (l.bc_heldout > 0) j["bc_heldout"] = l.bc_heldout;
  if (!l.fit.empty()) j["fit"] = l.fit;
  if (!l.scoring.empty()) j["scoring"] = l.scoring;
  if (l.reference.is_object()) j["reference"] = l.reference;
  j["seed"] = l.seed;
  j["alpha"] = l.alpha;
  j["tau"] = l.tau;
  if (!l.profiles_digest.empty()) j["profiles_digest"] = l.profiles_digest;
  if (!l.profiles_file.empty()) j["profiles_file"] = l.profiles_file;
  nlohmann::json arms = nlohmann::json::array();
  for (auto& a : l.arms) {
    nlohmann::json x{{"name", a.name}, {"available", a.available}};
    if (!a.reason.empty()) x["reason"] = a.reason;
    if (!a.program.empty()) x["program"] = a.program;
    if (a.available) {
      x["grades"] = a.grades;
      x["level_grades"] = a.level_grades;
      x["certificate"] = a.certificate;
      x["sign"] = a.sign;
      x["lambda_q"] = a.lambda_q;
      x["gain"] = a.gain;
      x["in_cone"] = a.in_cone;
      x["verdict"] = cone_verdict_key(a.lambda_q, a.certificate);
      x["rank"] = a.rank;
      if (a.has_heldout) {
        x["certificate_heldout"] = a.certificate_heldout;
        x["lambda_q_heldout"] = a.lambda_q_heldout;
        x["gain_heldout"] = a.gain_heldout;
        x["verdict_heldout"] = cone_verdict_key(a.lambda_q_heldout, a.certificate_heldout);
      }
      if (a.bootstrap_sign_fraction >= 0) x["bootstrap_sign_fraction"] = a.bootstrap_sign_fraction;
      if (!a.interval_method.empty()) {
        x["certificate_low"] = a.certificate_low;
        x["certificate_high"] = a.certificate_high;
        x["lambda_q_low"] = a.lambda_q_low;
        x["lambda_q_high"] = a.lambda_q_high;
        x["interval_method"] = a.interval_method;
        if (a.has_heldout) {
          x["certificate_heldout_low"] = a.certificate_heldout_low;
          x["certificate_heldout_high"] = a.certificate_heldout_high;
        }
      }
    }
    arms.push_back(x);
  }
  j["arms"] = arms;
  j["order"] = l.order;
  return j;
}

Ladder ladder_from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object() || j.value("format", std::string()) != "gllm-ladder/1")
      throw Error(
          "not a ladder file (format \"gllm-ladder/1\"); write one with `gllm ladder --profiles "
          "FILE --out ladder.json`");
    Ladder l;
    l.lambda = j.at("lambda").get<double>();
    l.clip = j.at("clip").get<double>();
    l.q_max = j.at("q_max").get<double>();
    l.d = j.at("d").get<int>();
    l.level_dims = j.at("level_dims").get<std::vector<int>>();
    l.bc = j.at("bc").get<double>();
    l.lambda_star = j.at("lambda_star").get<double>();
    l.seed = j.at("seed").get<uint64_t>();
    validate_base_and_clip(l.lambda, l.clip);
    if (j.contains("alpha")) l.alpha = j.at("alpha").get<std::vector<double>>();
    if (j.contains("tau")) l.tau = j.at("tau").get<std::vector<double>>();
    if ((!l.alpha.empty() && static_cast<int>(l.alpha.size()) != l.d) ||
        l.alpha.size() != l.tau.size())
      throw Error("alpha and tau must both have d = " + std::to_string(l.d) + " entries");
    l.profiles_digest = j.value("profiles_digest", std::string());
    l.program_kind = j.value("program_kind", std::string("coordinates"));
    if (l.program_kind != "coordinates" && l.program_kind != "levels")
      throw Error("program_kind must be \"coordinates\" or \"levels\"");
    l.bc_coordinates = j.value("bc_coordinates", l.bc);
    l.bc_levels = j.value("bc_levels", 0.0);
    l.bc_heldout = j.value("bc_heldout", 0.0);
    l.fit = j.value("fit", std::string());
    l.scoring = j.value("scoring", std::string());
    if (j.contains("reference") && j["reference"].is_object()) l.reference = j["reference"];
    l.profiles_file = j.value("profiles_file", std::string());
    for (auto& x : j.at("arms")) {
      LadderArm a;
      a.name = x.at("name").get<std::string>();
      if (std::find(ladder_arm_names().begin(), ladder_arm_names().end(), a.name) ==
          ladder_arm_names().end())
        throw Error("unknown arm \"" + a.name + "\"");
      a.available = x.at("available").get<bool>();
      a.reason = x.value("reason", std::string());
      a.program = x.value("program", std::string());
      if (a.available) {
        a.grades = x.at("grades").get<std::vector<double>>();
        if (static_cast<int>(a.grades.size()) != l.d)
          throw Error("arm \"" + a.name + "\" has " + std::to_string(a.grades.size()) +
                      " grades for d = " + std::to_string(l.d));
        for (double g : a.grades)
          if (!std::isfinite(g) || g < 0 || g > l.q_max * (1 + 1e-9))
            throw Error("arm \"" + a.name + "\" has a grade outside [0, q_max]");
        a.level_grades = x.at("level_grades").get<std::vector<double>>();
        a.certificate = x.at("certificate").get<double>();
        a.sign = x.at("sign").get<int>();
        a.lambda_q = x.at("lambda_q").get<double>();
        a.gain = x.at("gain").get<double>();
        a.in_cone = x.at("in_cone").get<bool>();
        a.rank = x.at("rank").get<int>();
        if (x.contains("certificate_heldout")) {
          a.has_heldout = true;
          a.certificate_heldout = x.at("certificate_heldout").get<double>();
          a.lambda_q_heldout = x.at("lambda_q_heldout").get<double>();
          a.gain_heldout = x.value("gain_heldout", 1.0 / a.lambda_q_heldout);
        }
        a.bootstrap_sign_fraction = x.value("bootstrap_sign_fraction", -1.0);
        if (x.contains("interval_method")) {
          a.interval_method = x.at("interval_method").get<std::string>();
          a.certificate_low = x.at("certificate_low").get<double>();
          a.certificate_high = x.at("certificate_high").get<double>();
          a.lambda_q_low = x.at("lambda_q_low").get<double>();
          a.lambda_q_high = x.at("lambda_q_high").get<double>();
          a.certificate_heldout_low = x.value("certificate_heldout_low", 0.0);
          a.certificate_heldout_high = x.value("certificate_heldout_high", 0.0);
        }
      }
      l.arms.push_back(a);
    }
    l.order = j.at("order").get<std::vector<std::string>>();
    return l;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("ladder file is malformed (") + e.what() +
                "); regenerate it with `gllm ladder`");
  }
}

Ladder load_ladder_file(const std::string& path) {
  const nlohmann::json j =
      read_json_file(path, "regenerate it with `gllm ladder`", large_json_limits());
  try {
    return ladder_from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void save_ladder_file(const std::string& path, const Ladder& l) {
  write_file_atomic(path, ladder_to_json(l).dump(1) + "\n");
}

}  // namespace gllm::grading
