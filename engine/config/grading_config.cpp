// Schema of GradingConfig with the paper's defaults: λ = e^{1/d_k}, C = 2 (seed 000 §8.1.1).
// Bad values (λ ≤ 1, C ≤ 1, unknown arms) are refused with the allowed range.
#include "engine/config/grading_config.h"

#include <cmath>

namespace gllm {

double GradingConfig::base_for(int head_dim) const {
  return lambda > 0 ? lambda : std::exp(1.0 / static_cast<double>(head_dim));
}

double GradingConfig::q_max(int head_dim) const {
  return std::log(clip) / std::log(base_for(head_dim));
}

const Schema<GradingConfig>& GradingConfig::schema() {
  static const Schema<GradingConfig> s = [] {
    Schema<GradingConfig> s;
    s.real("lambda", &GradingConfig::lambda, 0, 1e6, "Grading base λ > 1; 0 = e^{1/d_k}")
        .real("clip", &GradingConfig::clip, 1.000001, 1e6,
              "Clip C > 1: grades stay in [0, log C / log λ]")
        .flag("attention", &GradingConfig::attention, "Graded attention (EG-MHSA)")
        .flag("grades_trainable", &GradingConfig::grades_trainable,
              "Refine grades end-to-end, projected back into the clip box after every step")
        .real("grade_lr", &GradingConfig::grade_lr, 0, 10, "Learning rate of trainable grades")
        .choice("head_grades", &GradingConfig::head_grades,
                {"uniform", "random", "file", "explicit", "ladder"},
                "Where head grades come from (uniform, random, a grades file, or the explicit "
                "attn_grades)")
        .text("grades_file", &GradingConfig::grades_file,
              "JSON with attn_grades[layer][head][plane]")
        .reals("attn_grades", &GradingConfig::attn_grades, 0, 1e6,
               "Explicit head grades (head_grades = explicit): layers × heads × RoPE planes "
               "values, layer-major then head then plane")
        .integer("random_seed", &GradingConfig::random_seed, 0, 2147483647, "Seed of random grades")
        .flag("mlge", &GradingConfig::mlge, "Multi-level graded embedding (seed 000 §4.1)")
        .integer("levels", &GradingConfig::levels, 1, 64, "Number of levels L")
        .integers("level_dims", &GradingConfig::level_dims, 1, 65536,
                  "Dimension of each level subspace; empty = equal split of d")
        .reals("level_grades", &GradingConfig::level_grades, 0, 1e6, "Grade of each level")
        .choice("level_grades_source", &GradingConfig::level_grades_source, {"levels", "ladder"},
                "MLGE grades: one per level (level_grades), or an arm of a selection ladder "
                "(per-coordinate grades in the profiles' graded basis)")
        .text("ladder_file", &GradingConfig::ladder_file, "Ladder JSON written by `gllm ladder`")
        .choice("ladder_arm", &GradingConfig::ladder_arm,
                {"", "uniform", "random", "random-2", "random-3", "taxonomic", "pos", "educated",
                 "oracle"},
                "Arm of the selection ladder (seed 000 Table 2)")
        .text("profiles_file", &GradingConfig::profiles_file,
              "Profiles JSON from `gllm profiles`; its graded basis initialises P")
        .flag("basis_trainable", &GradingConfig::basis_trainable,
              "Train the level basis P (false: P stays the profiles' graded basis, where ladder "
              "grades were certified)")
        .flag("graded_loss", &GradingConfig::graded_loss, "Weight the loss by λ_out^{q_out[y]}")
        .choice("output_grades", &GradingConfig::output_grades, {"uniform", "pos", "file"},
                "Source of per-type output grades")
        .text("output_grades_file", &GradingConfig::output_grades_file,
              "JSON with output_grades[V] when output_grades = file")
        .real("output_lambda", &GradingConfig::output_lambda, 0, 1e6,
              "Base of the output weights; 0 = same as lambda")
        .real("orth_weight", &GradingConfig::orth_weight, 0, 1e6, "Weight of Ω_orth")
        .real("diversity_weight", &GradingConfig::diversity_weight, 0, 1e6,
              "Weight of the repulsive head-diversity term")
        .real("magnitude_weight", &GradingConfig::magnitude_weight, 0, 1e6, "Weight of ‖q‖²");
    s.check([](const GradingConfig& g, const std::string& path) {
      auto key = [&](const char* k) { return path.empty() ? std::string(k) : path + "." + k; };
      if (g.lambda != 0 && g.lambda <= 1)
        throw ConfigError(key("lambda"), "must be > 1 (or 0 for the default e^{1/d_k})");
      if (g.output_lambda != 0 && g.output_lambda <= 1)
        throw ConfigError(key("output_lambda"), "must be > 1 (or 0 to reuse lambda)");
      if (g.head_grades == "ladder")
        throw ConfigError(
            key("head_grades"),
            "\"ladder\" is no longer a source of head grades: ladder grades are MLGE "
            "per-coordinate grades (d = n_embd) certified in the profiles' graded basis, "
            "and a head's coordinates are not that basis. Set grading.mlge = true, "
            "grading.level_grades_source = \"ladder\" and grading.profiles_file to the "
            "ladder's profiles (see presets/ladder-*.json)");
      if (g.level_grades_source == "ladder" &&
          (!g.mlge || g.ladder_file.empty() || g.ladder_arm.empty() || g.profiles_file.empty()))
        throw ConfigError(key("level_grades_source"),
                          "\"ladder\" needs grading.mlge = true, ladder_file, ladder_arm and "
                          "profiles_file (the profiles the ladder was certified against)");
      if (g.head_grades == "explicit" && g.attn_grades.empty())
        throw ConfigError(key("attn_grades"),
                          "head_grades = explicit needs attn_grades (layers × heads × RoPE "
                          "planes values); or choose head_grades = uniform, random or file");
      if (g.head_grades != "explicit" && !g.attn_grades.empty())
        throw ConfigError(key("attn_grades"),
                          "is given but head_grades = \"" + g.head_grades +
                              "\" ignores it; set head_grades = explicit or remove attn_grades");
      if (g.head_grades == "file" && g.grades_file.empty())
        throw ConfigError(key("grades_file"), "head_grades = file needs grades_file");
      if (!g.level_dims.empty() && static_cast<int>(g.level_dims.size()) != g.levels)
        throw ConfigError(key("level_dims"),
                          "has " + std::to_string(g.level_dims.size()) +
                              " entries but levels = " + std::to_string(g.levels));
      if (!g.level_grades.empty() && static_cast<int>(g.level_grades.size()) != g.levels)
        throw ConfigError(key("level_grades"),
                          "has " + std::to_string(g.level_grades.size()) +
                              " entries but levels = " + std::to_string(g.levels));
      if (g.output_grades == "file" && g.output_grades_file.empty())
        throw ConfigError(key("output_grades_file"), "output_grades = file needs a file");
    });
    return s;
  }();
  return s;
}

}  // namespace gllm
