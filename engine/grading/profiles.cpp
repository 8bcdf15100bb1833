// Profiles: validation, Def. 2 deletion, level aggregates, Cor. 3 geometric profiles, and the
// profiles JSON file (format documented in profiles.h).
#include "engine/grading/profiles.h"

#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

#include "engine/grading/number_text.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm::grading {

namespace {

std::string list_indices(const std::vector<int>& v, size_t max_shown = 12) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size() && i < max_shown; ++i) os << (i ? "," : "") << v[i];
  if (v.size() > max_shown) os << ",… (" << v.size() << " in all)";
  return os.str();
}

}  // namespace

std::vector<int> Profiles::level_offsets() const {
  std::vector<int> off(level_dims.size() + 1, 0);
  for (size_t l = 0; l < level_dims.size(); ++l) off[l + 1] = off[l] + level_dims[l];
  return off;
}

std::vector<int> Profiles::level_of_coordinate() const {
  if (level_dims.empty())
    throw Error(
        "these profiles have no level structure; give level_dims (e.g. `\"level_dims\": "
        "[32,32,32,32]`)");
  std::vector<int> out;
  out.reserve(alpha.size());
  for (size_t l = 0; l < level_dims.size(); ++l)
    for (int k = 0; k < level_dims[l]; ++k) out.push_back(static_cast<int>(l));
  if (out.size() != alpha.size())
    throw Error("level_dims sum to " + std::to_string(out.size()) + " but the profiles have d = " +
                std::to_string(alpha.size()) + " coordinates; make Σ d_l = d");
  return out;
}

static std::vector<double> level_sums(const Profiles& p, const std::vector<double>& v) {
  auto off = p.level_offsets();
  if (off.back() != static_cast<int>(v.size()))
    throw Error("level_dims sum to " + std::to_string(off.back()) + " but the profiles have d = " +
                std::to_string(v.size()) + " coordinates; make Σ d_l = d");
  std::vector<double> out(p.level_dims.size(), 0.0);
  for (size_t l = 0; l < p.level_dims.size(); ++l)
    for (int j = off[l]; j < off[l + 1]; ++j) out[l] += v[j];
  return out;
}

std::vector<double> Profiles::level_alpha() const {
  if (level_dims.empty()) throw Error("level aggregates need level_dims; the profiles have none");
  return level_sums(*this, alpha);
}

std::vector<double> Profiles::level_tau() const {
  if (level_dims.empty()) throw Error("level aggregates need level_dims; the profiles have none");
  return level_sums(*this, tau);
}

Profiles Profiles::level_profiles() const {
  Profiles r;
  r.alpha = level_alpha();
  r.tau = level_tau();
  r.level_dims.assign(level_dims.size(), 1);
  return r;
}

void validate_distribution(const std::vector<double>& p, const std::string& what,
                           size_t expected_size, double tol) {
  if (p.empty()) throw Error(what + " is empty; give a probability vector with at least one entry");
  if (expected_size > 0 && p.size() != expected_size)
    throw Error(what + " has " + std::to_string(p.size()) + " entries but " +
                std::to_string(expected_size) + " are expected; give one entry per coordinate");
  double sum = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    if (!std::isfinite(p[j]))
      throw Error(what + "[" + std::to_string(j) +
                  "] is not finite; profiles must be finite numbers ≥ 0");
    if (p[j] < 0)
      throw Error(what + "[" + std::to_string(j) + "] = " + number_text(p[j]) +
                  " is negative; profiles are energies/variances and must be ≥ 0");
    sum += p[j];
  }
  if (std::abs(sum - 1.0) > tol)
    throw Error(what + " sums to " + number_text(sum) +
                ", not 1; normalise it (divide by its sum) before use");
}

void validate(const Profiles& p) {
  validate_distribution(p.alpha, "alpha");
  validate_distribution(p.tau, "tau", p.alpha.size());
  if (!p.level_dims.empty()) {
    long sum = 0;
    for (size_t l = 0; l < p.level_dims.size(); ++l) {
      if (p.level_dims[l] < 1)
        throw Error("level_dims[" + std::to_string(l) + "] = " + std::to_string(p.level_dims[l]) +
                    "; every level needs at least one coordinate");
      sum += p.level_dims[l];
    }
    if (sum != static_cast<long>(p.alpha.size()))
      throw Error("level_dims sum to " + std::to_string(sum) +
                  " but d = " + std::to_string(p.alpha.size()) + "; make Σ d_l = d");
  }
}

std::vector<double> normalized(const std::vector<double>& v, const std::string& what) {
  double sum = 0;
  for (size_t j = 0; j < v.size(); ++j) {
    if (!std::isfinite(v[j]) || v[j] < 0)
      throw Error(what + "[" + std::to_string(j) + "] = " + number_text(v[j]) +
                  " is not a finite number ≥ 0");
    sum += v[j];
  }
  if (!(sum > 0))
    throw Error(what + " has no positive entry; it cannot be normalised to a probability vector");
  std::vector<double> out(v);
  for (double& x : out) x /= sum;
  return out;
}

std::string Deletion::summary() const {
  if (deleted.empty()) return "no coordinate deleted (α and τ have full support)";
  std::ostringstream os;
  os << "deleted " << deleted.size() << " coordinate(s) (Def. 2): ";
  if (!deleted_alpha_zero.empty()) os << "α = 0 at [" << list_indices(deleted_alpha_zero) << "] ";
  if (!deleted_tau_zero.empty()) os << "τ = 0 at [" << list_indices(deleted_tau_zero) << "] ";
  if (!dropped_levels.empty())
    os << "; levels left empty: [" << list_indices(dropped_levels) << "]";
  os << "; kept " << kept.size();
  return os.str();
}

Deletion delete_degenerate(const Profiles& p, double zero_tol) {
  validate(p);
  Deletion del;
  std::vector<int> level_of;
  if (p.has_levels()) level_of = p.level_of_coordinate();
  std::vector<int> new_dims(p.level_dims.size(), 0);
  std::vector<double> a, t;
  for (int j = 0; j < p.d(); ++j) {
    bool az = p.alpha[j] <= zero_tol, tz = p.tau[j] <= zero_tol;
    if (az || tz) {
      del.deleted.push_back(j);
      if (az) del.deleted_alpha_zero.push_back(j);
      if (tz) del.deleted_tau_zero.push_back(j);
      continue;
    }
    del.kept.push_back(j);
    a.push_back(p.alpha[j]);
    t.push_back(p.tau[j]);
    if (p.has_levels()) new_dims[level_of[j]]++;
  }
  if (del.kept.empty())
    throw Error(
        "α and τ share no coordinate where both are positive (BC = 0): nothing is left after "
        "Def. 2's deletion; check that the two profiles are over the same basis");
  del.kept_profiles.alpha = normalized(a, "alpha");
  del.kept_profiles.tau = normalized(t, "tau");
  for (size_t l = 0; l < new_dims.size(); ++l) {
    if (new_dims[l] > 0)
      del.kept_profiles.level_dims.push_back(new_dims[l]);
    else
      del.dropped_levels.push_back(static_cast<int>(l));
  }
  return del;
}

static void check_geometric(double x, const char* name, int levels) {
  if (!std::isfinite(x) || x <= 0)
    throw Error(std::string(name) + " = " + number_text(x) +
                " must be a finite number > 0 (Cor. 3 ratio; the paper uses values in (0, 1))");
  if (levels < 1) throw Error("levels = " + std::to_string(levels) + "; give L ≥ 1");
}

std::vector<double> geometric_level_alpha(double nu, int levels) {
  check_geometric(nu, "nu", levels);
  std::vector<double> a(levels);
  for (int l = 0; l < levels; ++l) a[l] = std::pow(nu, levels - 1 - l);
  return normalized(a, "geometric alpha");
}

std::vector<double> geometric_level_tau(double mu, int levels) {
  check_geometric(mu, "mu", levels);
  std::vector<double> s(levels);
  for (int l = 0; l < levels; ++l) s[l] = std::pow(mu, l);
  return normalized(s, "geometric tau");
}

Profiles geometric_profiles(double nu, double mu, int levels, const std::vector<int>& level_dims) {
  auto a = geometric_level_alpha(nu, levels);
  auto s = geometric_level_tau(mu, levels);
  Profiles p;
  if (level_dims.empty()) {
    p.alpha = a;
    p.tau = s;
    p.level_dims.assign(levels, 1);
    return p;
  }
  if (static_cast<int>(level_dims.size()) != levels)
    throw Error("level_dims has " + std::to_string(level_dims.size()) + " entries for L = " +
                std::to_string(levels) + " levels; give one dimension per level");
  p.level_dims = level_dims;
  for (int l = 0; l < levels; ++l) {
    if (level_dims[l] < 1) throw Error("level_dims[" + std::to_string(l) + "] must be ≥ 1");
    for (int k = 0; k < level_dims[l]; ++k) {
      p.alpha.push_back(a[l] / level_dims[l]);
      p.tau.push_back(s[l] / level_dims[l]);
    }
  }
  return p;
}

double bhattacharyya(const std::vector<double>& alpha, const std::vector<double>& tau) {
  if (alpha.size() != tau.size())
    throw Error("BC needs α and τ of the same length (got " + std::to_string(alpha.size()) +
                " and " + std::to_string(tau.size()) + ")");
  double s = 0;
  for (size_t j = 0; j < alpha.size(); ++j) s += std::sqrt(alpha[j] * tau[j]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// ProfilesFile keys: the reader accepts exactly these (see the format in profiles.h).
// ---------------------------------------------------------------------------------------------
namespace {

const std::set<std::string> kKnownKeys{
    "format", "d",       "levels",  "level_dims", "alpha",     "tau",   "level_alpha", "level_tau",
    "bc",     "targets", "heldout", "pos_grades", "bootstrap", "basis", "meta",        "reference"};

std::vector<double> real_list(const nlohmann::json& j, const std::string& key) {
  if (!j.is_array()) throw Error("profiles file: \"" + key + "\" must be an array of numbers");
  std::vector<double> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number())
      throw Error("profiles file: \"" + key + "\"[" + std::to_string(i) + "] is " + j[i].dump() +
                  ", not a number (NaN/Infinity are not allowed)");
    out.push_back(j[i].get<double>());
  }
  return out;
}

void check_only(const nlohmann::json& j, const std::set<std::string>& keys,
                const std::string& where) {
  if (!j.is_object()) throw Error("profiles file: " + where + " must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!keys.count(it.key())) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
      throw Error("profiles file: unknown key \"" + it.key() + "\" in " + where +
                  " (known keys: " + known + ")");
    }
}

Profiles alpha_tau(const nlohmann::json& j, const std::string& where, size_t d,
                   const std::vector<int>& dims) {
  check_only(j, {"alpha", "tau"}, where);
  if (!j.contains("alpha") || !j.contains("tau"))
    throw Error("profiles file: " + where + " needs both \"alpha\" and \"tau\"");
  Profiles p;
  p.alpha = real_list(j["alpha"], where + ".alpha");
  p.tau = real_list(j["tau"], where + ".tau");
  p.level_dims = dims;
  validate_distribution(p.alpha, where + ".alpha", d);
  validate_distribution(p.tau, where + ".tau", d);
  return p;
}

}  // namespace

ProfilesFile profiles_from_json(const nlohmann::json& j) {
  // Another JSON file (a run's config, a preset, a ladder) opened by mistake: say so first.
  if (j.is_object() && !j.contains("format") && !j.contains("alpha") && !j.contains("tau"))
    throw Error(
        "this is not a profiles file: it has no \"alpha\" and \"tau\"; open one written by "
        "`gllm profiles --out FILE`");
  check_only(j, kKnownKeys, "the top level");
  if (j.contains("format") && j["format"] != "gllm-profiles/1")
    throw Error("profiles file: format " + j["format"].dump() +
                " is not \"gllm-profiles/1\"; regenerate it with `gllm profiles`");
  ProfilesFile f;
  if (!j.contains("alpha") || !j.contains("tau"))
    throw Error(
        "profiles file: needs \"alpha\" and \"tau\" (probability vectors over d coordinates); "
        "write it with `gllm profiles`");
  f.profiles.alpha = real_list(j["alpha"], "alpha");
  f.profiles.tau = real_list(j["tau"], "tau");
  size_t d = f.profiles.alpha.size();
  if (j.contains("d")) {
    if (!j["d"].is_number_integer() || j["d"].get<long>() < 1)
      throw Error("profiles file: \"d\" must be an integer ≥ 1");
    if (static_cast<size_t>(j["d"].get<long>()) != d)
      throw Error("profiles file: \"d\" = " + j["d"].dump() + " but alpha has " +
                  std::to_string(d) + " entries");
  }
  if (j.contains("level_dims")) {
    if (!j["level_dims"].is_array())
      throw Error("profiles file: \"level_dims\" must be an array of integers");
    for (auto& x : j["level_dims"]) {
      if (!x.is_number_integer())
        throw Error("profiles file: \"level_dims\" entries must be integers");
      f.profiles.level_dims.push_back(x.get<int>());
    }
  }
  if (j.contains("levels")) {
    if (!j["levels"].is_number_integer() || j["levels"].get<long>() < 0)
      throw Error("profiles file: \"levels\" must be an integer ≥ 0");
    int L = j["levels"].get<int>();
    if (L > 0 && f.profiles.level_dims.empty())
      throw Error("profiles file: \"levels\" = " + std::to_string(L) +
                  " needs \"level_dims\" (one size per level)");
    if (L > 0 && static_cast<int>(f.profiles.level_dims.size()) != L)
      throw Error("profiles file: \"levels\" = " + std::to_string(L) + " but \"level_dims\" has " +
                  std::to_string(f.profiles.level_dims.size()) + " entries");
  }
  validate(f.profiles);
  auto check_levels = [&](const char* key, const std::vector<double>& expect) {
    if (!j.contains(key)) return;
    if (!f.profiles.has_levels())
      throw Error(std::string("profiles file: \"") + key + "\" given without \"level_dims\"");
    auto got = real_list(j[key], key);
    if (got.size() != expect.size())
      throw Error(std::string("profiles file: \"") + key + "\" has " + std::to_string(got.size()) +
                  " entries for " + std::to_string(expect.size()) + " levels");
    for (size_t l = 0; l < got.size(); ++l)
      if (std::abs(got[l] - expect[l]) > 1e-6)
        throw Error(std::string("profiles file: \"") + key + "\"[" + std::to_string(l) + "] = " +
                    number_text(got[l]) + " disagrees with the sum over the level's coordinates (" +
                    number_text(expect[l]) + "); regenerate the file");
  };
  if (f.profiles.has_levels()) {
    check_levels("level_alpha", f.profiles.level_alpha());
    check_levels("level_tau", f.profiles.level_tau());
  } else if (j.contains("level_alpha") || j.contains("level_tau")) {
    throw Error("profiles file: level aggregates given without \"level_dims\"");
  }
  if (j.contains("bc")) {
    if (!j["bc"].is_number()) throw Error("profiles file: \"bc\" must be a number");
    double bc = bhattacharyya(f.profiles.alpha, f.profiles.tau);
    if (std::abs(j["bc"].get<double>() - bc) > 1e-6)
      throw Error("profiles file: \"bc\" = " + number_text(j["bc"].get<double>()) +
                  " disagrees with BC(alpha, tau) = " + number_text(bc) + "; regenerate the file");
  }
  if (j.contains("targets")) {
    if (!j["targets"].is_object())
      throw Error("profiles file: \"targets\" must be an object name → {alpha, bc}");
    for (auto it = j["targets"].begin(); it != j["targets"].end(); ++it) {
      std::string where = "targets." + it.key();
      check_only(it.value(), {"alpha", "bc"}, where);
      if (!it.value().contains("alpha"))
        throw Error("profiles file: " + where + " needs \"alpha\"");
      ProfilesFile::Target t;
      t.alpha = real_list(it.value()["alpha"], where + ".alpha");
      validate_distribution(t.alpha, where + ".alpha", d);
      if (it.value().contains("bc")) {
        if (!it.value()["bc"].is_number())
          throw Error("profiles file: " + where + ".bc must be a number");
        t.bc = it.value()["bc"].get<double>();
      }
      f.targets[it.key()] = t;
    }
  }
  if (j.contains("heldout"))
    f.heldout = alpha_tau(j["heldout"], "heldout", d, f.profiles.level_dims);
  if (j.contains("pos_grades")) {
    f.pos_grades = real_list(j["pos_grades"], "pos_grades");
    if (f.pos_grades.size() != d)
      throw Error("profiles file: \"pos_grades\" has " + std::to_string(f.pos_grades.size()) +
                  " entries, d = " + std::to_string(d));
    for (size_t i = 0; i < d; ++i)
      if (!std::isfinite(f.pos_grades[i]) || f.pos_grades[i] < 0)
        throw Error("profiles file: pos_grades[" + std::to_string(i) +
                    "] must be a finite grade ≥ 0");
  }
  if (j.contains("bootstrap")) {
    if (!j["bootstrap"].is_array())
      throw Error("profiles file: \"bootstrap\" must be an array of {alpha, tau}");
    for (size_t b = 0; b < j["bootstrap"].size(); ++b)
      f.bootstrap.push_back(alpha_tau(j["bootstrap"][b], "bootstrap[" + std::to_string(b) + "]", d,
                                      f.profiles.level_dims));
  }
  if (j.contains("basis")) {
    f.basis = real_list(j["basis"], "basis");
    if (f.basis.size() != d * d)
      throw Error("profiles file: \"basis\" has " + std::to_string(f.basis.size()) +
                  " entries; a d×d row-major matrix needs " + std::to_string(d * d));
  }
  if (j.contains("reference")) {
    const auto& r = j["reference"];
    if (!r.is_object() || !r.contains("kind") || !r["kind"].is_string() || !r.contains("digest") ||
        !r["digest"].is_string())
      throw Error(
          "profiles file: \"reference\" must be an object with \"kind\" and \"digest\" "
          "strings; regenerate the file with `gllm profiles`");
    if (r.contains("file") && !r["file"].is_string())
      throw Error("profiles file: reference.file must be a path (a string)");
    f.reference = r;
  }
  if (j.contains("meta")) {
    if (!j["meta"].is_object()) throw Error("profiles file: \"meta\" must be an object");
    f.meta = j["meta"];
  }
  return f;
}

nlohmann::json profiles_to_json(const ProfilesFile& f) {
  validate(f.profiles);
  nlohmann::json j;
  j["format"] = "gllm-profiles/1";
  j["d"] = f.profiles.d();
  j["levels"] = f.profiles.levels();
  j["level_dims"] = f.profiles.level_dims;
  j["alpha"] = f.profiles.alpha;
  j["tau"] = f.profiles.tau;
  if (f.profiles.has_levels()) {
    j["level_alpha"] = f.profiles.level_alpha();
    j["level_tau"] = f.profiles.level_tau();
  }
  j["bc"] = bhattacharyya(f.profiles.alpha, f.profiles.tau);
  if (!f.targets.empty()) {
    nlohmann::json t = nlohmann::json::object();
    for (auto& [name, target] : f.targets) {
      t[name]["alpha"] = target.alpha;
      t[name]["bc"] = target.bc >= 0 ? target.bc : bhattacharyya(target.alpha, f.profiles.tau);
    }
    j["targets"] = t;
  }
  if (f.has_heldout()) j["heldout"] = {{"alpha", f.heldout.alpha}, {"tau", f.heldout.tau}};
  if (!f.pos_grades.empty()) j["pos_grades"] = f.pos_grades;
  if (!f.bootstrap.empty()) {
    nlohmann::json b = nlohmann::json::array();
    for (auto& p : f.bootstrap) b.push_back({{"alpha", p.alpha}, {"tau", p.tau}});
    j["bootstrap"] = b;
  }
  if (!f.basis.empty()) j["basis"] = f.basis;
  j["meta"] = f.meta;
  if (f.has_reference()) j["reference"] = f.reference;
  return j;
}

ProfilesFile load_profiles_file(const std::string& path) {
  const nlohmann::json j =
      read_json_file(path, "regenerate it with `gllm profiles`", large_json_limits());
  try {
    return profiles_from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": a value has the wrong type (" + brief_text(e.what(), 200) +
                "); regenerate it with `gllm profiles`");
  }
}

void save_profiles_file(const std::string& path, const ProfilesFile& f) {
  write_file_atomic(path, profiles_to_json(f).dump(1) + "\n");
}

}  // namespace gllm::grading
