// Seed 000 profiles: target energy α and data variance τ over d coordinates (Def. 2), their level
// aggregates (a_l, s_l), the geometric level profiles of Cor. 3, and the profiles JSON file format.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::grading {

// ---------------------------------------------------------------------------------------------
// The profiles file (written by `gllm profiles`, read by `gllm cone`, `gllm ladder`, the cone
// panel and MLGE initialisation). One JSON object; every key below is known, any other key is an
// error (add new keys to ProfilesFile and to profiles.cpp, in the section marked "ProfilesFile
// keys", and document them here).
//
//   "format"       "gllm-profiles/1" (optional on read; always written)
//   "d"            integer ≥ 1: number of coordinates
//   "levels"       integer L ≥ 1 (optional; 0 or absent = no level structure)
//   "level_dims"   [d_0, …, d_{L−1}], Σ d_l = d; coordinates of level l are contiguous, level 0
//   first "alpha"        [d] α̂_j ≥ 0, Σ = 1: target energy (§7.2, α̂_j = ŵ_j² / ‖ŵ‖²) "tau" [d] τ̂_j
//   ≥ 0, Σ = 1: data variance (§7.2, τ̂_j = σ̂_j² / Σ σ̂_k²) "level_alpha"  [L] a_l = Σ_{j∈V_l} α_j
//   (optional; checked against alpha when both present) "level_tau"    [L] s_l = Σ_{j∈V_l} τ_j
//   (optional; checked likewise) "bc"           BC(α, τ) (optional; checked against alpha/tau to
//   1e-6 when present) "targets"      { name: {"alpha": [d], "bc": number (optional)} } further
//   probe targets
//                  (e.g. one per level); each alpha a probability vector over the same coordinates
//   "heldout"      {"alpha": [d], "tau": [d]} profiles re-estimated on held-out data (oracle arm)
//   "pos_grades"   [d] per-coordinate grades ≥ 0 from part-of-speech statistics (POS ladder arm)
//   "bootstrap"    [ {"alpha": [d], "tau": [d]}, … ] profiles refit on resampled sentences
//   "basis"        [d·d] graded basis, row-major: row j is coordinate j's unit vector in the
//                  reference representation (optional; initialises MLGE's P)
//   "meta"         free-form object: corpus, reference, target name, seed, sizes (provenance)
//   "reference"    the token reference the profiles live in (absent for word-type references):
//                  {"kind": "token_ppmi" | "wte", "digest": sha512 prefix of its float32 table,
//                   "tokenizer_hash", "vocab_size", "d", "file": the table (token_ppmi; relative
//                   to the profiles file), "checkpoint", "step" (wte), …}
// ---------------------------------------------------------------------------------------------

// α and τ over d coordinates with an optional level structure (contiguous blocks of level_dims).
struct Profiles {
  std::vector<double> alpha;    // target energy, probability vector
  std::vector<double> tau;      // data variance, probability vector
  std::vector<int> level_dims;  // empty = no levels; else Σ = d

  int d() const { return static_cast<int>(alpha.size()); }
  int levels() const { return static_cast<int>(level_dims.size()); }
  bool has_levels() const { return !level_dims.empty(); }
  // Level index of each coordinate (throws when there is no level structure).
  std::vector<int> level_of_coordinate() const;
  // First coordinate of each level (size L + 1, last = d).
  std::vector<int> level_offsets() const;
  // a_l = Σ_{j∈V_l} α_j and s_l = Σ_{j∈V_l} τ_j.
  std::vector<double> level_alpha() const;
  std::vector<double> level_tau() const;
  // The L-level reduced profiles (a, s) as Profiles with one coordinate per level.
  Profiles level_profiles() const;
};

// Checks that p is a probability vector: non-empty, of `expected_size` (if > 0), finite, ≥ 0,
// summing to 1 within `tol`. Throws gllm::Error naming `what` and saying how to fix it.
void validate_distribution(const std::vector<double>& p, const std::string& what,
                           size_t expected_size = 0, double tol = 1e-6);
// Validates α, τ (same length, distributions) and level_dims (positive, Σ = d).
void validate(const Profiles& p);
// Rescales a non-negative finite vector to sum 1 (throws when its sum is not positive).
std::vector<double> normalized(const std::vector<double>& v, const std::string& what);

// Def. 2: coordinates where α_j = 0 or τ_j = 0 are deleted and both profiles renormalised over
// the kept ones. level_dims shrink accordingly (a level left empty is dropped and reported).
struct Deletion {
  Profiles kept_profiles;
  std::vector<int> kept;                // original indices kept, increasing
  std::vector<int> deleted;             // original indices deleted, increasing
  std::vector<int> deleted_alpha_zero;  // subset of deleted with α_j = 0
  std::vector<int> deleted_tau_zero;    // subset of deleted with τ_j = 0
  std::vector<int> dropped_levels;      // levels with no coordinate left
  bool any() const { return !deleted.empty(); }
  std::string summary() const;  // one line for logs and the GUI
};
Deletion delete_degenerate(const Profiles& p, double zero_tol = 0.0);

// Cor. 3: a_l ∝ ν^{L−1−l}, s_l ∝ μ^l, normalised (ν, μ in (0, ∞), L ≥ 1).
std::vector<double> geometric_level_alpha(double nu, int levels);
std::vector<double> geometric_level_tau(double mu, int levels);
// Level-stratified profiles over coordinates: α_j = a_l / d_l, τ_j = s_l / d_l on V_l.
// With level_dims empty, one coordinate per level (d = L).
Profiles geometric_profiles(double nu, double mu, int levels,
                            const std::vector<int>& level_dims = {});

// BC(α, τ) = Σ √(α_j τ_j) (§7.3). Lengths must agree.
double bhattacharyya(const std::vector<double>& alpha, const std::vector<double>& tau);

// The whole profiles file. Optional parts are empty when absent.
struct ProfilesFile {
  Profiles profiles;  // "d", "levels", "level_dims", "alpha", "tau"
  struct Target {
    std::vector<double> alpha;
    double bc = -1;  // < 0: not given (recompute with bhattacharyya)
  };
  std::map<std::string, Target> targets;
  Profiles heldout;                 // alpha/tau empty when absent
  std::vector<double> pos_grades;   // empty when absent
  std::vector<Profiles> bootstrap;  // resampled profiles (level_dims copied from profiles)
  std::vector<double> basis;        // d·d row-major or empty
  nlohmann::json meta = nlohmann::json::object();
  nlohmann::json reference;  // null when absent (see "reference" above)

  bool has_heldout() const { return !heldout.alpha.empty(); }
  bool has_reference() const { return reference.is_object(); }
};

// Parses and validates (throws gllm::Error with the key and the remedy).
ProfilesFile profiles_from_json(const nlohmann::json& j);
nlohmann::json profiles_to_json(const ProfilesFile& f);
ProfilesFile load_profiles_file(const std::string& path);
void save_profiles_file(const std::string& path, const ProfilesFile& f);  // atomic write

}  // namespace gllm::grading
