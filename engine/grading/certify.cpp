// Certificates of a model's own grade tensors (certify.h): MLGE grades in the profiles' graded
// basis, each head's grades in its own coordinates, and the head-profiles file format.
#include "engine/grading/certify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "engine/grading/bootstrap.h"
#include "engine/grading/cone.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm::grading {

namespace {

std::vector<double> doubles(const nlohmann::json& j, const std::string& what) {
  if (!j.is_array()) throw Error(what + " must be an array of numbers");
  std::vector<double> v;
  v.reserve(j.size());
  for (const auto& x : j) {
    if (!x.is_number()) throw Error(what + " must be an array of numbers");
    v.push_back(x.get<double>());
  }
  return v;
}

int positive_int(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < 1 ||
      j[key].get<int64_t>() > 1 << 20)
    throw Error(std::string("head profiles file: \"") + key + "\" must be a positive integer");
  return j[key].get<int>();
}

ComponentCertificate not_certified(const std::string& component, const std::string& source,
                                   const std::string& why) {
  ComponentCertificate c;
  c.component = component;
  c.grades_source = source;
  c.reason = why;
  return c;
}

}  // namespace

nlohmann::json head_profiles_to_json(const HeadProfiles& h) {
  nlohmann::json list = nlohmann::json::array();
  for (int l = 0; l < h.layers; ++l)
    for (int k = 0; k < h.heads; ++k) {
      const ProfilesFile& f = h.at(l, k);
      validate(f.profiles);
      nlohmann::json boots = nlohmann::json::array();
      for (const auto& b : f.bootstrap) boots.push_back({{"alpha", b.alpha}, {"tau", b.tau}});
      list.push_back({{"layer", l},
                      {"head", k},
                      {"alpha", f.profiles.alpha},
                      {"tau", f.profiles.tau},
                      {"bc", bhattacharyya(f.profiles.alpha, f.profiles.tau)},
                      {"bootstrap", boots}});
    }
  return {{"format", "gllm-head-profiles/1"},
          {"layers", h.layers},
          {"heads", h.heads},
          {"planes", h.planes},
          {"features", h.features},
          {"heads_profiles", list},
          {"meta", h.meta}};
}

HeadProfiles head_profiles_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", std::string()) != "gllm-head-profiles/1")
    throw Error(
        "not a head profiles file (format \"gllm-head-profiles/1\"); write one with `gllm profiles "
        "--checkpoint CKPT`");
  HeadProfiles h;
  h.layers = positive_int(j, "layers");
  h.heads = positive_int(j, "heads");
  h.planes = positive_int(j, "planes");
  h.features = j.value("features", std::string("keys"));
  h.meta = j.value("meta", nlohmann::json::object());
  if (!j.contains("heads_profiles") || !j["heads_profiles"].is_array() ||
      j["heads_profiles"].size() != static_cast<size_t>(h.layers) * h.heads)
    throw Error("head profiles file: \"heads_profiles\" must list layers × heads = " +
                std::to_string(static_cast<int64_t>(h.layers) * h.heads) + " entries");
  h.per_head.resize(static_cast<size_t>(h.layers) * h.heads);
  std::vector<bool> seen(h.per_head.size(), false);
  for (const auto& e : j["heads_profiles"]) {
    if (!e.is_object())
      throw Error("head profiles file: every entry of heads_profiles must be an object");
    const int l = e.value("layer", -1), k = e.value("head", -1);
    if (l < 0 || l >= h.layers || k < 0 || k >= h.heads)
      throw Error("head profiles file: an entry names layer " + std::to_string(l) + ", head " +
                  std::to_string(k) + " outside " + std::to_string(h.layers) + " × " +
                  std::to_string(h.heads));
    const size_t i = static_cast<size_t>(l) * h.heads + k;
    if (seen[i])
      throw Error("head profiles file: layer " + std::to_string(l) + ", head " + std::to_string(k) +
                  " appears twice");
    seen[i] = true;
    const std::string where =
        "head profiles file, layer " + std::to_string(l) + " head " + std::to_string(k);
    ProfilesFile& f = h.per_head[i];
    f.profiles.alpha = doubles(e.value("alpha", nlohmann::json()), where + ": alpha");
    f.profiles.tau = doubles(e.value("tau", nlohmann::json()), where + ": tau");
    if (static_cast<int>(f.profiles.alpha.size()) != h.planes)
      throw Error(where + ": alpha must have planes = " + std::to_string(h.planes) + " entries");
    try {
      validate(f.profiles);
    } catch (const Error& err) {
      throw Error(where + ": " + err.what());
    }
    if (e.contains("bootstrap")) {
      if (!e["bootstrap"].is_array()) throw Error(where + ": bootstrap must be an array");
      for (const auto& b : e["bootstrap"]) {
        Profiles p;
        p.alpha = doubles(b.value("alpha", nlohmann::json()), where + ": bootstrap alpha");
        p.tau = doubles(b.value("tau", nlohmann::json()), where + ": bootstrap tau");
        if (static_cast<int>(p.alpha.size()) != h.planes || p.tau.size() != p.alpha.size())
          throw Error(where + ": bootstrap resamples must have planes = " +
                      std::to_string(h.planes) + " entries");
        f.bootstrap.push_back(std::move(p));
      }
    }
  }
  return h;
}

AnyProfiles load_any_profiles(const std::string& path) {
  const nlohmann::json j =
      read_json_file(path, "regenerate it with `gllm profiles`", large_json_limits());
  AnyProfiles a;
  a.path = path;
  try {
    if (j.is_object() && j.value("format", std::string()) == "gllm-head-profiles/1") {
      a.kind = "heads";
      a.heads = head_profiles_from_json(j);
    } else {
      a.kind = "embedding";
      a.embedding = profiles_from_json(j);
    }
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return a;
}

void save_head_profiles(const std::string& path, const HeadProfiles& h) {
  write_file_atomic(path, head_profiles_to_json(h).dump(1) + "\n");
}

std::string coordinates_text(const ProfilesFile& f) {
  if (!f.has_reference())
    return "a word-type reference: no model's embedding has these coordinates, so this "
           "certificate is about the reference, not a model";
  const std::string kind = f.reference.value("kind", std::string());
  const std::string digest = f.reference.value("digest", std::string());
  if (kind == "wte") {
    const auto& ck = f.reference.contains("checkpoint") ? f.reference["checkpoint"] : nullptr;
    return "the embedding W_e·G of checkpoint " + (ck.is_string() ? ck.get<std::string>() : "?") +
           " (route 2): exact for runs forked from it";
  }
  return "the token reference " + kind + " " + digest +
         " (route 1): a model whose W_e starts in it (model.wte_init = \"reference\") has these "
         "coordinates exactly at step 0; that they still hold later is the seed's transport "
         "assumption, not a theorem";
}

ComponentCertificate certify_grades(const std::vector<double>& q, const ProfilesFile& f,
                                    double lambda, double clip) {
  ComponentCertificate c;
  const Profiles& p = f.profiles;
  c.d = p.d();
  ConeReport r = evaluate_cone(p, q, lambda, clip);
  c.certified = true;
  c.certificate = r.certificate;
  c.sign = r.certificate_sign;
  c.admissible = r.certificate_sign > 0;
  c.lambda_q = r.lambda_q;
  c.gain = r.gain;
  c.bc = r.bc;
  c.verdict = cone_verdict_text(c.lambda_q, c.certificate);
  if (f.has_heldout()) {
    c.has_heldout = true;
    c.certificate_heldout = certificate(f.heldout.alpha, f.heldout.tau, q);
    c.lambda_q_heldout = lambda_of(f.heldout.alpha, f.heldout.tau, q, lambda);
    c.gain_heldout = 1.0 / c.lambda_q_heldout;
    c.verdict_heldout = cone_verdict_text(c.lambda_q_heldout, c.certificate_heldout);
  }
  c.coordinates = coordinates_text(f);
  if (!f.bootstrap.empty()) {
    // A zero certificate (uniform grades) keeps its sign only where resamples also give zero.
    const double tol =
        1e-12 * (1.0 + std::accumulate(q.begin(), q.end(), 0.0,
                                       [](double s, double x) { return s + std::abs(x); }));
    BootstrapResult b = bootstrap_from_resamples(p, f.bootstrap, q, 0.95, tol);
    c.sign_fraction = b.sign_fraction;
    c.resamples = b.resamples;
  }
  return c;
}

void check_grades_within_clip(const ModelGrades& m) {
  const double tol = 1e-6 * std::max(1.0, m.q_max);
  auto check = [&](const std::vector<double>& q, const std::string& name, int per_row) {
    for (size_t i = 0; i < q.size(); ++i) {
      const bool ok =
          std::isfinite(q[i]) && q[i] >= -tol && (m.q_max <= 0 || q[i] <= m.q_max + tol);
      if (ok) continue;
      char where[96];
      if (per_row > 0)
        std::snprintf(where, sizeof where, "%s[%zu][%zu]", name.c_str(), i / per_row, i % per_row);
      else
        std::snprintf(where, sizeof where, "%s[%zu]", name.c_str(), i);
      char value[64];
      std::snprintf(value, sizeof value, "%g", q[i]);
      char range[64];
      std::snprintf(range, sizeof range, "[0, %g]", m.q_max);
      throw Error(m.source + ": grade " + where + " is " + value + ", outside " + range +
                  " (q_max = log C / log λ); the grades are damaged or were edited — every "
                  "certificate and compilation assumes grades within the clip. Use an earlier "
                  "checkpoint or fix the grades");
    }
  };
  check(m.level_grades, "mlge.level_grades", 0);
  check(m.attn_grades, "attn_grades", m.planes > 0 ? m.planes : 0);
}

std::vector<ComponentCertificate> certify(const ModelGrades& m,
                                          const std::vector<AnyProfiles>& profiles) {
  check_grades_within_clip(m);
  std::vector<ComponentCertificate> out;
  const AnyProfiles* emb = nullptr;
  const AnyProfiles* heads = nullptr;
  for (const auto& a : profiles) {
    if (a.kind == "embedding" && !emb) emb = &a;
    if (a.kind == "heads" && !heads) heads = &a;
  }
  const std::string src = m.source;
  if (!m.level_grades.empty()) {
    const std::string comp = "mlge.level_grades";
    if (!emb) {
      out.push_back(not_certified(
          comp, src,
          "no embedding profiles loaded: give a `gllm profiles` file estimated at d = " +
              std::to_string(m.width)));
    } else if (emb->embedding.profiles.d() != static_cast<int>(m.level_grades.size())) {
      throw Error(
          emb->path + ": the profiles have d = " + std::to_string(emb->embedding.profiles.d()) +
          " but " + src + " has MLGE grades of width " + std::to_string(m.level_grades.size()) +
          "; they do not belong together — estimate profiles at the model's width");
    } else {
      ComponentCertificate c = certify_grades(m.level_grades, emb->embedding, m.lambda, m.clip);
      c.component = comp;
      c.grades_source = src;
      c.profiles = emb->path;
      // The grades act in the model's basis P; the certificate is computed in the profiles' basis
      // B. Their distance says how far the two coordinate systems have drifted apart.
      const auto& B = emb->embedding.basis;  // row j = direction j
      const int d = static_cast<int>(m.level_grades.size());
      if (!B.empty() && m.level_basis.size() == static_cast<size_t>(d) * d) {
        double dev = 0;
        for (int j = 0; j < d; ++j)
          for (int i = 0; i < d; ++i)
            dev = std::max(dev, std::abs(m.level_basis[static_cast<size_t>(i) * d + j] -
                                         B[static_cast<size_t>(j) * d + i]));
        c.basis_deviation = dev;
      }
      out.push_back(c);
    }
  }
  if (!m.attn_grades.empty()) {
    for (int l = 0; l < m.layers; ++l)
      for (int h = 0; h < m.heads; ++h) {
        const std::string comp =
            "attn_grades[" + std::to_string(l) + "][" + std::to_string(h) + "]";
        std::vector<double> q(
            m.attn_grades.begin() + (static_cast<int64_t>(l) * m.heads + h) * m.planes,
            m.attn_grades.begin() + (static_cast<int64_t>(l) * m.heads + h + 1) * m.planes);
        if (!heads) {
          out.push_back(
              not_certified(comp, src,
                            "no head profiles loaded: head grades act in the head's own "
                            "coordinates; estimate them with `gllm profiles --checkpoint CKPT`"));
          continue;
        }
        const HeadProfiles& hp = heads->heads;
        if (hp.layers != m.layers || hp.heads != m.heads || hp.planes != m.planes)
          throw Error(heads->path + ": the head profiles are for " + std::to_string(hp.layers) +
                      " layer(s) × " + std::to_string(hp.heads) + " heads of " +
                      std::to_string(hp.planes) + " planes but " + src + " has " +
                      std::to_string(m.layers) + " × " + std::to_string(m.heads) + " of " +
                      std::to_string(m.planes) +
                      "; they do not belong together — estimate head profiles of this checkpoint "
                      "with `gllm profiles --checkpoint`");
        ComponentCertificate c = certify_grades(q, hp.at(l, h), m.lambda, m.clip);
        c.component = comp;
        c.grades_source = src;
        c.profiles = heads->path;
        out.push_back(c);
      }
  }
  if (m.has_output_grades)
    out.push_back(not_certified(
        "output_grades", src,
        "the graded loss's per-type grades have no Eq. 15 certificate: evaluation applies the "
        "matched tilt (Prop. 9), so they reweight the objective without changing its minimiser"));
  return out;
}

nlohmann::json to_json(const ComponentCertificate& c) {
  nlohmann::json j = {
      {"component", c.component}, {"grades_source", c.grades_source}, {"certified", c.certified}};
  if (!c.certified) {
    j["reason"] = c.reason;
    return j;
  }
  j["profiles"] = c.profiles;
  j["d"] = c.d;
  j["inner_product"] = c.certificate;
  j["sign"] = c.sign;
  j["admissible"] = c.admissible;
  j["lambda_q"] = c.lambda_q;
  j["gain"] = c.gain;
  j["bc"] = c.bc;
  j["bc_per"] = "coordinate (the grades are per coordinate of the graded basis)";
  j["verdict"] = c.verdict;
  if (c.has_heldout) {
    j["inner_product_heldout"] = c.certificate_heldout;
    j["lambda_q_heldout"] = c.lambda_q_heldout;
    j["gain_heldout"] = c.gain_heldout;
    j["verdict_heldout"] = c.verdict_heldout;
  }
  if (!c.coordinates.empty()) j["coordinates"] = c.coordinates;
  j["bootstrap_sign_fraction"] =
      c.sign_fraction >= 0 ? nlohmann::json(c.sign_fraction) : nlohmann::json(nullptr);
  j["bootstrap_resamples"] = c.resamples;
  if (c.basis_deviation >= 0) j["basis_deviation"] = c.basis_deviation;
  return j;
}

}  // namespace gllm::grading
