// `gllm overhead`: the parameter overhead of the graded parts (seed 000 §8.1.3):
// d² + K·H·d_k + d + |V|, and its fraction of the model's N parameters.
#include <iomanip>

#include "app/gllm/command_registry.h"
#include "engine/grading/overhead.h"

namespace {

gllm::cli::RegisterCommand reg("overhead", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("overhead", "Parameter overhead of MLGE projections and grades (seed 000 §8.1.3)");
  auto in = std::make_shared<gllm::grading::OverheadInput>();
  auto json = std::make_shared<bool>(false);
  // Bounds keep every product below 2^63: d² ≤ 2^48, K·H·d_k = K·d ≤ 2^44.
  cmd->add_option("--d", in->d, "Model width d")
      ->required()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  cmd->add_option("--layers", in->layers, "Blocks K")
      ->required()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  cmd->add_option("--heads", in->heads, "Heads per block H (d_k = d/H)")
      ->required()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  cmd->add_option("--levels", in->levels,
                  "MLGE levels L (Σ d_l = d, so the count does not change d²)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  cmd->add_option("--vocab", in->vocab, "Vocabulary size |V|")
      ->required()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 32));
  cmd->add_option("--total-params", in->total_params, "Model parameters N")
      ->required()
      ->check(CLI::Range(int64_t(1), int64_t(1000000000000000)));
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([in, json] {
    auto o = gllm::grading::compute_overhead(*in);
    if (*json) {
      gllm::cli::print_json({{"overhead_params", o.total},
                             {"fraction", o.fraction},
                             {"percent", 100 * o.fraction},
                             {"overhead_params_paper_rounding", o.total_rounded_components},
                             {"projections", o.projections},
                             {"head_grades", o.head_grades},
                             {"level_grades", o.level_grades},
                             {"output_grades", o.output_grades},
                             {"head_dim", o.head_dim},
                             {"total_params", in->total_params}});
      return;
    }
    std::cout << "P_l projections  d²        " << o.projections << "\n"
              << "head grades      K·H·d_k   " << o.head_grades << "\n"
              << "level grades     d         " << o.level_grades << "\n"
              << "output grades    |V|       " << o.output_grades << "\n"
              << "total                      " << o.total << "  (" << std::fixed << std::setprecision(3)
              << o.total / 1e6 << "M, " << std::setprecision(2) << 100 * o.fraction << "% of N)\n"
              << "summing the components rounded to 3 digits, as §8.1.3 prints it: " << std::setprecision(2)
              << o.total_rounded_components / 1e6 << "M" << std::endl;
  });
});

}  // namespace
