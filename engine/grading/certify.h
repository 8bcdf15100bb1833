// Certificates of the grades a model holds (read back from the model or a checkpoint), each in
// the coordinates where it acts: MLGE grades against embedding profiles, head grades against
// profiles estimated in that head's own coordinates (`gllm profiles --checkpoint`).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/grading/profiles.h"

namespace gllm::grading {

// The grade tensors of one model, as plain arrays (engine/model/model_grades.h reads them).
struct ModelGrades {
  std::string source;  // "model built from preset X", "checkpoint FILE (step N)"
  double lambda = 0, clip = 0, q_max = 0;
  int width = 0;                     // d
  std::vector<double> level_grades;  // mlge.level_grades (d); empty without MLGE grades
  std::vector<double> level_basis;   // mlge.proj (d, d) row-major as the model holds it: column j
                                     // is the direction grade j scales; empty without levels
  int layers = 0, heads = 0, planes = 0;
  std::vector<double> attn_grades;  // attn_grades (layers, heads, planes); empty without EG-MHSA
  bool has_output_grades = false;   // graded loss (its grades have no Eq. 15 certificate)
  nlohmann::json sources;           // provenance of each array (grading::ResolvedGrades::sources)
};

// Profiles of every head of a checkpoint, estimated in the head's own coordinates (after RoPE and
// QK-norm), one grade plane per coordinate pair. File format "gllm-head-profiles/1":
//   { "format", "layers", "heads", "planes", "features": "keys" | "queries",
//     "heads_profiles": [ {"layer": l, "head": h, "alpha": [planes], "tau": [planes],
//                          "bc": BC, "bootstrap": [ {"alpha": [...], "tau": [...]}, … ]}, … ],
//     "meta": { checkpoint, corpus, target, seed, … } }
struct HeadProfiles {
  int layers = 0, heads = 0, planes = 0;
  std::string features = "keys";
  std::vector<ProfilesFile> per_head;  // index layer·heads + head; profiles + bootstrap
  nlohmann::json meta = nlohmann::json::object();
  const ProfilesFile& at(int layer, int head) const {
    return per_head.at(static_cast<size_t>(layer * heads + head));
  }
};
nlohmann::json head_profiles_to_json(const HeadProfiles& h);
HeadProfiles head_profiles_from_json(const nlohmann::json& j);
// Reads either kind of profiles file; `kind` is "embedding" (gllm-profiles/1) or "heads".
struct AnyProfiles {
  std::string path, kind;
  ProfilesFile embedding;
  HeadProfiles heads;
};
AnyProfiles load_any_profiles(const std::string& path);
void save_head_profiles(const std::string& path, const HeadProfiles& h);

// One graded component's certificate: the cone Q₊ = {Λ(q) < 1} (Prop. 8) and its first-order test,
// the sign of ⟨q, α̂−τ̂⟩ (Eq. 15), both shown (`verdict`), on the fit profiles and on the held-out
// profiles when the file has them.
struct ComponentCertificate {
  std::string component;      // "mlge.level_grades", "attn_grades[l][h]", "output_grades"
  std::string grades_source;  // where the grades were read
  std::string profiles;       // the profiles file used ("" when none)
  bool certified = false;     // false: `reason` says why there is no number
  std::string reason;
  int d = 0;               // coordinates certified
  double certificate = 0;  // ⟨q, α̂−τ̂⟩
  int sign = 0;
  bool admissible = false;  // certificate > 0 (Eq. 15: q enters the cone to first order only)
  double lambda_q = 1, gain = 1, bc = 1;
  double sign_fraction = -1;  // bootstrap resamples keeping the sign; < 0 without resamples
  int resamples = 0;
  double basis_deviation = -1;  // MLGE: max |P − B| between the model's basis and the profiles'
  std::string verdict;          // cone_verdict_text on the fit profiles
  bool has_heldout = false;     // the profiles file has held-out profiles
  double certificate_heldout = 0, lambda_q_heldout = 1, gain_heldout = 1;
  std::string verdict_heldout;
  std::string coordinates;  // the reference the profiles live in (token reference or word types)
};

// Throws gllm::Error naming the source, the component and the value when a grade of `m` is not
// finite or lies outside [0, q_max] (the clip every certificate and compilation assumes).
void check_grades_within_clip(const ModelGrades& m);

// Certifies every graded component of `m` against the profiles given (any number, either kind).
// Components without profiles are listed with certified = false and the reason; grades outside
// the clip, and profiles of another width or head shape than the model's, are refused (Error).
std::vector<ComponentCertificate> certify(const ModelGrades& m,
                                          const std::vector<AnyProfiles>& profiles);
nlohmann::json to_json(const ComponentCertificate& c);

// Where the profiles of `f` live, in words: a route-1 token reference (exact at step 0, the seed's
// transport assumption beyond), a checkpoint's own embedding (route 2), or word types (no model).
std::string coordinates_text(const ProfilesFile& f);

// The certificate of grades q (size d) against a profiles file with its bootstrap, as the ladder
// and the certify command compute it.
ComponentCertificate certify_grades(const std::vector<double>& q, const ProfilesFile& f,
                                    double lambda, double clip);

}  // namespace gllm::grading
