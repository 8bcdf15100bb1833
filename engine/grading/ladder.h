// The selection ladder of seed 000 Table 2: grade vectors for the six arms (uniform, random,
// taxonomic, part-of-speech, educated q*_C, oracle) with their certificates ⟨q, α̂−τ̂⟩, ordered.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/grading/profiles.h"

namespace gllm::grading {

// Ladder JSON (`gllm ladder --out FILE`; presets name it in grading.ladder_file + ladder_arm).
// Grades are MLGE per-coordinate grades in the graded basis of the profiles (d = n_embd), the
// coordinates where the certificate is computed; names below stay put (scripts read them):
//   { "format": "gllm-ladder/1", "lambda": λ, "clip": C, "q_max": …, "d": d, "levels": L,
//     "level_dims": [...], "bc": BC(α̂,τ̂), "lambda_star": BC², "seed": s,
//     "alpha": [d], "tau": [d]  the profiles every certificate below is computed against,
//     "profiles_digest": grade_sources.h profiles_digest() of those profiles (with their basis),
//     "profiles_file": where they were read, relative to the ladder's folder when inside it,
//     "arms": [ { "name": "uniform"|"random"|"taxonomic"|"pos"|"educated"|"oracle",
//                 "available": bool, "reason": "…" (when not available, or a note),
//                 "program": what produced the grades (e.g. "d-variable program (Prop. 10)",
//                            "L-level program (Prop. 11)", "POS statistics …"),
//                 "grades": [d] per-coordinate grades in [0, q_max],
//                 "level_grades": [L] mean grade per level,
//                 "certificate": ⟨q, α̂−τ̂⟩, "sign": −1|0|1, "lambda_q": Λ(q), "gain": 1/Λ(q),
//                 "in_cone": Λ(q) < 1,
//                 "verdict": cone_verdict_key (in_cone | first_order_only | outside),
//                 "certificate_heldout", "lambda_q_heldout", "gain_heldout", "verdict_heldout"
//                 (scored on the held-out profiles, when the file has them),
//                 "bootstrap_sign_fraction", "certificate_low"/"_high", "lambda_q_low"/"_high",
//                 "certificate_heldout_low"/"_high", "interval_method" (when bootstrap resamples
//                 exist; each resample refits the arm's program on the resampled profiles),
//                 "rank": 1… } … ],
//     "program_kind": "coordinates" (d-variable program: BC, Λ* per coordinate) | "levels"
//                 (L-level program: BC, Λ* of the level aggregates), "bc_levels", "bc_heldout",
//     "fit": what the fit profiles are, "scoring": what the held-out profiles are,
//     "reference": the profiles file's reference section (its coordinates) when it has one,
//     "order": [arm names by certificate, largest first; unavailable arms omitted] }
// Arms in ladder order; "random", "random-2", "random-3" are independent draws (seeds s, s+1, s+2).
inline const std::vector<std::string>& ladder_arm_names() {
  static const std::vector<std::string> names{"uniform",   "random", "random-2", "random-3",
                                              "taxonomic", "pos",    "educated", "oracle"};
  return names;
}
inline constexpr int kRandomDraws = 3;

struct LadderOptions {
  double lambda = 0;            // base λ > 1
  double clip = 2;              // C > 1
  uint64_t seed = 0;            // random arm
  double magnitude_weight = 0;  // for the educated/oracle optimum
  bool level_program =
      false;  // educated/oracle from the L-level program (Prop. 11), not the d-variable one
};

struct LadderArm {
  std::string name;
  bool available = true;
  std::string reason;
  std::string program;  // what produced the grades
  std::vector<double> grades;
  std::vector<double> level_grades;
  double certificate = 0;
  int sign = 0;
  double lambda_q = 1;
  double gain = 1;
  bool in_cone = false;
  bool has_heldout = false;
  double certificate_heldout = 0;
  double lambda_q_heldout = 1;
  double gain_heldout = 1;
  double bootstrap_sign_fraction = -1;  // < 0: no resamples
  // Bootstrap intervals (each resample refits the arm's program): certificate and Λ in-sample, and
  // the held-out certificate of the refit grades. Empty interval_method: no resamples.
  double certificate_low = 0, certificate_high = 0, lambda_q_low = 1, lambda_q_high = 1;
  double certificate_heldout_low = 0, certificate_heldout_high = 0;
  std::string interval_method;
  int rank = 0;  // 1 = largest certificate; 0 = unavailable
};

struct Ladder {
  double lambda = 0, clip = 0, q_max = 0, bc = 0, lambda_star = 0;
  std::string program_kind = "coordinates";  // what bc and lambda_star are per: coordinates|levels
  double bc_coordinates = 0, bc_levels = 0, bc_heldout = 0;  // BC per coordinate, per level, held
  std::string fit, scoring;                                  // what the two profile sets are
  nlohmann::json reference;  // the profiles' reference section (null: word-type reference)
  uint64_t seed = 0;
  int d = 0;
  std::vector<int> level_dims;
  std::vector<double> alpha, tau;  // the profiles the certificates are computed against
  std::string profiles_digest;     // profiles_digest() of the profiles file (empty in old files)
  std::string profiles_file;       // the profiles file as `gllm ladder` read it (may be empty)
  std::vector<LadderArm> arms;     // in ladder_arm_names() order
  std::vector<std::string> order;  // available arms, certificate descending

  const LadderArm& arm(const std::string& name) const;  // throws on unknown names
};

// Random arm: q_j uniform in [0, q_max] from a portable SplitMix64 stream (same on every platform).
std::vector<double> random_grades(int d, double q_max, uint64_t seed);
// Taxonomic arm: affine and increasing in level, v_l = q_max · l / (L − 1) (v = 0 when L = 1).
std::vector<double> taxonomic_grades(const Profiles& p, double q_max);
// Part-of-speech arm (§8.1.2): per-coordinate open-class energy shares s_j (profiles "pos_grades")
// spread over the clip box, q_j = q_max · (s_j − min s)/(max s − min s): the coordinates carrying
// open-class types get high grades, those carrying function words low ones. All zero when s is
// flat.
std::vector<double> pos_arm_grades(const std::vector<double>& shares, double q_max);

Ladder build_ladder(const ProfilesFile& f, const LadderOptions& opt);
nlohmann::json ladder_to_json(const Ladder& l);
Ladder ladder_from_json(const nlohmann::json& j);
Ladder load_ladder_file(const std::string& path);
void save_ladder_file(const std::string& path, const Ladder& l);

}  // namespace gllm::grading
