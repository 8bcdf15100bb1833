// `gllm overhead`: the parameter overhead of the graded parts (seed 000 §8.1.3):
// d² + K·H·d_k + d + |V|, and its fraction of the model's N parameters.
#include <iomanip>

#include "app/gllm/command_registry.h"
#include "engine/grading/overhead.h"
#include "engine/io/text_table.h"

namespace {

gllm::cli::RegisterCommand reg_overhead("overhead", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "overhead", "Parameter overhead of MLGE projections and grades (seed 000 §8.1.3)");
  auto in = std::make_shared<gllm::grading::OverheadInput>();
  auto json = std::make_shared<bool>(false);
  // Counts as researchers write them (345e6, 345M, 7B); the bounds keep every product below
  // 2^63: d² ≤ 2^48, K·H·d_k = K·d ≤ 2^44.
  using gllm::cli::add_count_option;
  add_count_option(cmd, "--d", in->d, "Model width d", 1, int64_t(1) << 24)->required();
  add_count_option(cmd, "--layers", in->layers, "Blocks K", 1, int64_t(1) << 20)->required();
  add_count_option(cmd, "--heads", in->heads, "Heads per block H (d_k = d/H)", 1, int64_t(1) << 24)
      ->required();
  add_count_option(cmd, "--levels", in->levels,
                   "MLGE levels L (Σ d_l = d, so the count does not change d²)", 1,
                   int64_t(1) << 24)
      ->default_str("4");
  add_count_option(cmd, "--vocab", in->vocab, "Vocabulary size |V|", 1, int64_t(1) << 32)
      ->required();
  add_count_option(cmd, "--total-params", in->total_params,
                   "Model parameters N (345e6, 345M, 7B, …)", 1, int64_t(1000000000000000))
      ->required();
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
    using gllm::Align;
    gllm::TextTable table({"part", "formula", "params"}, {Align::Left, Align::Left, Align::Right});
    table.add_row({"P_l projections", "d²", std::to_string(o.projections)});
    table.add_row({"head grades", "K·H·d_k", std::to_string(o.head_grades)});
    table.add_row({"level grades", "d", std::to_string(o.level_grades)});
    table.add_row({"output grades", "|V|", std::to_string(o.output_grades)});
    table.add_row({"total", "Σ", std::to_string(o.total)});
    std::cout << table.render() << std::fixed << std::setprecision(3) << o.total / 1e6 << "M, "
              << std::setprecision(2) << 100 * o.fraction << "% of N\n"
              << "summing the components rounded to 3 digits, as §8.1.3 prints it: "
              << std::setprecision(2) << o.total_rounded_components / 1e6 << "M" << std::endl;
  });
});

}  // namespace
