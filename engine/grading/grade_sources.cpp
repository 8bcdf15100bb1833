// Grade-source resolution (grade_sources.h): the grades file, the ladder arm with the basis of its
// profiles, and output grades from part-of-speech statistics or a file, checked against the model.
#include "engine/grading/grade_sources.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/grading/cone.h"
#include "engine/grading/ladder.h"
#include "engine/grading/reference_table.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/sha512.h"

namespace gllm::grading {

namespace {

nlohmann::json read_json(const std::string& path, const std::string& key) {
  if (!file_exists(path))
    throw ConfigError(key, "file '" + path +
                               "' does not exist; fix the path (relative paths are read beside the "
                               "preset) or regenerate the file");
  try {
    return read_json_file(path, "fix or regenerate it",
                          large_json_limits());  // bounded size and depth
  } catch (const Error& e) {
    throw ConfigError(key, e.what());
  }
}

void check_range(const std::vector<double>& q, double q_max, const std::string& key,
                 const std::string& what) {
  for (double v : q)
    if (!std::isfinite(v) || v < 0 || v > q_max * (1 + 1e-9))
      throw ConfigError(key, what + " has a grade " + std::to_string(v) +
                                 " outside the clip box [0, " + std::to_string(q_max) +
                                 "]; regenerate it for this clip and base");
}

std::vector<double> head_grades_from_file(const RunConfig& c) {
  const auto& g = c.grading;
  const int L = c.model.layers(), H = c.model.heads(), planes = c.model.head_dim() / 2;
  auto j = read_json(g.grades_file, "grading.grades_file");
  const std::string shape =
      "[" + std::to_string(L) + "][" + std::to_string(H) + "][" + std::to_string(planes) + "]";
  if (!j.is_object() || !j.contains("attn_grades") || !j["attn_grades"].is_array())
    throw ConfigError("grading.grades_file", "'" + g.grades_file +
                                                 "' has no \"attn_grades\" array; it must hold " +
                                                 shape + " numbers (layers × heads × RoPE planes)");
  std::vector<double> flat;
  const auto& layers = j["attn_grades"];
  bool ok = layers.size() == static_cast<size_t>(L);
  for (size_t l = 0; ok && l < layers.size(); ++l) {
    ok = layers[l].is_array() && layers[l].size() == static_cast<size_t>(H);
    for (size_t h = 0; ok && h < layers[l].size(); ++h) {
      const auto& head = layers[l][h];
      ok = head.is_array() && head.size() == static_cast<size_t>(planes);
      for (size_t p = 0; ok && p < head.size(); ++p) {
        ok = head[p].is_number();
        if (ok) flat.push_back(head[p].get<double>());
      }
    }
  }
  if (!ok)
    throw ConfigError("grading.grades_file",
                      "attn_grades in '" + g.grades_file + "' must be " + shape +
                          " numbers (layers × heads × RoPE planes) for this model");
  return flat;
}

std::vector<double> output_grades(const RunConfig& c, int64_t vocab,
                                  const std::string& tokenizer_hash, double q_max_out,
                                  nlohmann::json& source) {
  const auto& g = c.grading;
  std::vector<double> q;
  if (g.output_grades == "file") {
    auto j = read_json(g.output_grades_file, "grading.output_grades_file");
    if (!j.is_object() || !j.contains("output_grades") || !j["output_grades"].is_array())
      throw ConfigError("grading.output_grades_file",
                        "no \"output_grades\" array in '" + g.output_grades_file + "'");
    for (const auto& v : j["output_grades"]) {
      if (!v.is_number())
        throw ConfigError("grading.output_grades_file",
                          "output_grades in '" + g.output_grades_file + "' must be numbers");
      q.push_back(v.get<double>());
    }
    source = {{"kind", "file"}, {"file", g.output_grades_file}};
  } else {  // pos: the share of open-class occurrences of each token, spread over [0, q_max_out]
    if (g.profiles_file.empty())
      throw ConfigError("grading.output_grades",
                        "\"pos\" output grades come from the part-of-speech statistics of "
                        "a profiles file; set grading.profiles_file (`gllm profiles` writes one)");
    auto j = read_json(g.profiles_file, "grading.profiles_file");
    const auto meta =
        j.is_object() ? j.value("meta", nlohmann::json::object()) : nlohmann::json::object();
    const auto og = meta.value("output_grades", nlohmann::json::object());
    const char* key = og.contains("open_share") ? "open_share" : "grades";
    if (!og.is_object() || !og.contains(key) || !og[key].is_array())
      throw ConfigError(
          "grading.profiles_file",
          "'" + g.profiles_file +
              "' has no per-token part-of-speech statistics "
              "(meta.output_grades); rerun `gllm profiles` without --no-output-grades");
    const std::string their_hash = og.value("tokenizer_hash", std::string());
    if (!tokenizer_hash.empty() && !their_hash.empty() && their_hash != tokenizer_hash)
      throw ConfigError("grading.profiles_file",
                        "its per-token statistics were counted with another tokenizer (" +
                            their_hash.substr(0, 12) + "…, this run's is " +
                            tokenizer_hash.substr(0, 12) +
                            "…); rerun `gllm profiles` with this run's data settings");
    for (const auto& v : og[key]) {
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
        throw ConfigError("grading.profiles_file",
                          "meta.output_grades." + std::string(key) + " in '" + g.profiles_file +
                              "' must be shares in [0, 1]; regenerate the file");
      q.push_back(q_max_out *
                  v.get<double>());  // an always-open-class token gets q_max_out: weight C
    }
    source = {{"kind", "pos"},
              {"file", g.profiles_file},
              {"rule", "q_out[y] = q_max_out · open-class share of y"},
              {"q_max_out", q_max_out}};
  }
  if (static_cast<int64_t>(q.size()) != vocab)
    throw ConfigError("grading.output_grades",
                      std::to_string(q.size()) + " output grades for a vocabulary of " +
                          std::to_string(vocab) + "; give one per token type");
  if (g.output_grades == "file")
    check_range(q, q_max_out, "grading.output_grades_file", "'" + g.output_grades_file + "'");
  for (double& v : q) v = std::clamp(v, 0.0, q_max_out);  // the clip λ_out^{q} ≤ C holds exactly
  return q;
}

// The token reference table named by the profiles file, checked against the model and the file.
std::vector<float> wte_reference(const RunConfig& c, const ProfilesFile& profiles, int64_t vocab,
                                 const std::string& tokenizer_hash, nlohmann::json& sources) {
  const auto& g = c.grading;
  const std::string regen = "; write the profiles with `gllm profiles --reference token_ppmi --d " +
                            std::to_string(c.model.width()) + "` using this run's data settings";
  if (!profiles.has_reference() || !profiles.reference.contains("file") ||
      !profiles.reference["file"].is_string())
    throw ConfigError("model.wte_init", "is \"reference\" but '" + g.profiles_file +
                                            "' names no token reference table (its profiles "
                                            "are not over the model's tokens)" +
                                            regen);
  std::filesystem::path file = profiles.reference["file"].get<std::string>();
  if (file.is_relative()) file = std::filesystem::path(g.profiles_file).parent_path() / file;
  TokenReference ref;
  try {
    ref = load_token_reference(file.string());
  } catch (const Error& e) {
    throw ConfigError("model.wte_init", std::string(e.what()));
  }
  const std::string want = profiles.reference.value("digest", std::string());
  if (ref.digest() != want)
    throw ConfigError("model.wte_init", "the reference table '" + file.string() + "' (digest " +
                                            ref.digest() + ") is not the one '" + g.profiles_file +
                                            "' was estimated in (digest " + want +
                                            "); use the table written with those profiles" + regen);
  if (!tokenizer_hash.empty() && !ref.tokenizer_hash.empty() &&
      ref.tokenizer_hash != tokenizer_hash)
    throw ConfigError("model.wte_init", "the reference table '" + file.string() +
                                            "' was built with another tokenizer (" +
                                            ref.tokenizer_hash.substr(0, 12) + "…, this run's is " +
                                            tokenizer_hash.substr(0, 12) + "…)" + regen);
  if (ref.vectors.rows() != vocab || ref.vectors.cols() != c.model.width())
    throw ConfigError("model.wte_init", "the reference table '" + file.string() + "' is " +
                                            std::to_string(ref.vectors.rows()) + " × " +
                                            std::to_string(ref.vectors.cols()) +
                                            " but the model's wte is " + std::to_string(vocab) +
                                            " × " + std::to_string(c.model.width()) + regen);
  std::vector<float> out(static_cast<size_t>(ref.vectors.size()));
  for (int64_t i = 0; i < ref.vectors.rows(); ++i)
    for (int64_t j = 0; j < ref.vectors.cols(); ++j)
      out[static_cast<size_t>(i * ref.vectors.cols() + j)] = static_cast<float>(ref.vectors(i, j));
  sources["wte"] = {{"kind", "reference"},
                    {"reference", ref.kind},
                    {"file", file.string()},
                    {"digest", want},
                    {"profiles_file", g.profiles_file}};
  return out;
}

}  // namespace

GradeBounds grade_bounds(const RunConfig& c) {
  GradeBounds b;
  const auto& g = c.grading;
  b.lambda = g.base_for(c.model.head_dim());
  b.q_max = g.q_max(c.model.head_dim());
  b.output_lambda = g.output_lambda > 0 ? g.output_lambda : b.lambda;
  b.output_q_max = std::log(g.clip) / std::log(b.output_lambda);
  return b;
}

std::string profiles_digest(const ProfilesFile& f) {
  nlohmann::json j = {{"alpha", f.profiles.alpha},
                      {"tau", f.profiles.tau},
                      {"level_dims", f.profiles.level_dims},
                      {"basis", f.basis}};
  const auto d = sha512(j.dump());
  return to_hex(d.data(), 16);
}

ResolvedGrades resolve_grade_sources(const RunConfig& c, int64_t vocab,
                                     const std::string& tokenizer_hash) {
  ResolvedGrades r;
  const auto& g = c.grading;
  const GradeBounds b = grade_bounds(c);
  const int d = c.model.width();

  if (g.attention && g.head_grades == "file") {
    r.attn_grades = head_grades_from_file(c);
    check_range(r.attn_grades, b.q_max, "grading.grades_file", "'" + g.grades_file + "'");
    r.sources["attn_grades"] = {{"kind", "file"}, {"file", g.grades_file}};
  }
  if (g.attention && g.head_grades == "explicit") {
    const size_t need = static_cast<size_t>(c.model.layers()) * c.model.heads() *
                        static_cast<size_t>(c.model.head_dim() / 2);
    if (g.attn_grades.size() != need)
      throw ConfigError("grading.attn_grades",
                        "has " + std::to_string(g.attn_grades.size()) +
                            " values but this model needs " + std::to_string(need) + " (" +
                            std::to_string(c.model.layers()) + " layers × " +
                            std::to_string(c.model.heads()) + " heads × " +
                            std::to_string(c.model.head_dim() / 2) +
                            " RoPE planes); edit them in the grade editor or set head_grades");
    r.attn_grades = g.attn_grades;
    check_range(r.attn_grades, b.q_max, "grading.attn_grades", "grading.attn_grades");
    r.sources["attn_grades"] = {{"kind", "explicit"}};
  }

  // The graded basis of a profiles file initialises mlge.proj; a ladder arm's grades are certified
  // in that basis, so the two must come from the same profiles.
  ProfilesFile profiles;
  std::string digest;
  const bool levels =
      g.mlge || c.model.positional == "graded_sinusoidal" || c.model.mlp == "geglu_levels";
  if (levels && !g.profiles_file.empty()) {
    try {
      profiles = load_profiles_file(g.profiles_file);
    } catch (const Error& e) {
      throw ConfigError("grading.profiles_file", e.what());
    }
    if (profiles.basis.empty())
      throw ConfigError("grading.profiles_file", "'" + g.profiles_file +
                                                     "' has no graded basis (\"basis\"); write it "
                                                     "with `gllm profiles --d " +
                                                     std::to_string(d) + "`");
    if (profiles.profiles.d() != d)
      throw ConfigError("grading.profiles_file",
                        "'" + g.profiles_file +
                            "' has d = " + std::to_string(profiles.profiles.d()) +
                            " but the model width is " + std::to_string(d) +
                            "; estimate the profiles at the model's width "
                            "(`gllm profiles --d " +
                            std::to_string(d) + "`)");
    r.level_basis = profiles.basis;
    digest = profiles_digest(profiles);
    r.sources["level_basis"] = {
        {"kind", "profiles"}, {"file", g.profiles_file}, {"profiles_digest", digest}};
  }
  if (g.mlge && g.level_grades_source == "ladder") {
    if (g.profiles_file.empty())
      throw ConfigError("grading.profiles_file",
                        "ladder grades act in the graded basis of the profiles they were "
                        "certified against; set grading.profiles_file to the ladder's profiles");
    Ladder lad;
    try {
      lad = load_ladder_file(g.ladder_file);
    } catch (const Error& e) {
      throw ConfigError("grading.ladder_file", e.what());
    }
    if (lad.d != d)
      throw ConfigError("grading.ladder_file",
                        "'" + g.ladder_file + "' has grades for d = " + std::to_string(lad.d) +
                            " but the model width is " + std::to_string(d) +
                            "; rebuild the ladder from profiles at the model's width");
    if (std::abs(lad.lambda - b.lambda) > 1e-12 * b.lambda ||
        std::abs(lad.clip - g.clip) > 1e-12 * g.clip)
      throw ConfigError(
          "grading.ladder_file",
          "'" + g.ladder_file + "' was built for λ = " + std::to_string(lad.lambda) + ", C = " +
              std::to_string(lad.clip) + " but the model uses λ = " + std::to_string(b.lambda) +
              ", C = " + std::to_string(g.clip) +
              "; rebuild it with `gllm ladder --lambda … --clip …` or match the config");
    if (!lad.profiles_digest.empty() && lad.profiles_digest != digest)
      throw ConfigError("grading.profiles_file",
                        "'" + g.profiles_file + "' is not the profiles file '" + g.ladder_file +
                            "' was certified against (digest " + digest + " ≠ " +
                            lad.profiles_digest + "); use the ladder's own profiles");
    const LadderArm& arm = lad.arm(g.ladder_arm);
    if (!arm.available)
      throw ConfigError("grading.ladder_arm", "arm '" + g.ladder_arm + "' is unavailable in '" +
                                                  g.ladder_file + "': " + arm.reason);
    r.level_grades = arm.grades;
    check_range(r.level_grades, b.q_max, "grading.ladder_file", "arm '" + arm.name + "'");
    r.sources["level_grades"] = {
        {"kind", "ladder"},       {"file", g.ladder_file},          {"arm", arm.name},
        {"program", arm.program}, {"certificate", arm.certificate}, {"profiles_digest", digest}};
  }

  if (c.model.wte_init == "reference") {
    if (profiles.profiles.alpha.empty()) {
      try {
        profiles = load_profiles_file(g.profiles_file);
      } catch (const Error& e) {
        throw ConfigError("grading.profiles_file", e.what());
      }
    }
    r.wte_reference = wte_reference(c, profiles, vocab, tokenizer_hash, r.sources);
  }

  if (g.graded_loss && g.output_grades != "uniform") {
    nlohmann::json source;
    r.output_grades = output_grades(c, vocab, tokenizer_hash, b.output_q_max, source);
    r.sources["output_grades"] = source;
  }
  return r;
}

}  // namespace gllm::grading
