// Resolves the files a RunConfig's grading section names (grades file, ladder, profiles basis,
// output grades) into plain arrays before the model is built, so weight initialisation reads no
// file.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/grading/profiles.h"

namespace gllm::grading {

// What the grading section's files say, in the model's own layout. Empty arrays mean "not given
// by a file": the model then follows its config rule (uniform, random, per-level values, a seeded
// basis, zero output grades).
struct ResolvedGrades {
  std::vector<double> attn_grades;    // (n_layer, H, Dh/2) row-major, from grading.grades_file
  std::vector<double> level_grades;   // (d) MLGE per-coordinate grades, from the ladder's arm
  std::vector<double> level_basis;    // (d, d) row-major: row j is the direction grade j scales
                                      // (the profiles file's "basis"), i.e. column j of mlge.proj
  std::vector<double> output_grades;  // (V) graded-loss grades q_out in [0, q_max_out]
  std::vector<float> wte_reference;   // (V, d) row-major: model.wte_init = "reference", the token
                                      // reference table of grading.profiles_file
  nlohmann::json sources = nlohmann::json::object();  // provenance per array: files, arm, digests
};

// Reads every file the config names and checks it against the model: widths, the ladder's λ and
// C against the config's, the ladder's profiles against grading.profiles_file, the output grades'
// and the token reference's tokenizer against `tokenizer_hash` (empty = not checked) and `vocab`,
// the reference table against the digest its profiles file recorded. Throws ConfigError naming
// the key, the file and the fix.
ResolvedGrades resolve_grade_sources(const RunConfig& config, int64_t vocab,
                                     const std::string& tokenizer_hash = "");

// A digest of the profiles a certificate is computed against (α, τ, level dims and basis), so a
// ladder can name the profiles it was built from and a model the basis it was given.
std::string profiles_digest(const ProfilesFile& f);

// The grade bases of a config: λ (heads and MLGE), q_max, and the graded loss's λ_out, q_max_out.
struct GradeBounds {
  double lambda = 0, q_max = 0, output_lambda = 0, output_q_max = 0;
};
GradeBounds grade_bounds(const RunConfig& config);

}  // namespace gllm::grading
