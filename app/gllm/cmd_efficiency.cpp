// `gllm efficiency RUN... --target BPB [--metric val_bpb] [--uniform ARM] [--json]`: tokens at
// which each run first reaches the target and the ratio to the uniform arm (seed 000 §8.2.2).
#include <cstdio>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/text_table.h"
#include "engine/train/compare.h"

namespace {

gllm::cli::RegisterCommand reg_efficiency("efficiency", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "efficiency", "Tokens to a target BPB per run and the ratio to the uniform arm");
  struct O {
    std::vector<std::string> runs;
    double target = 0;
    std::string metric = "val_bpb", uniform;
    bool json = false;
  };
  auto o = std::make_shared<O>();
  cmd->add_option("runs", o->runs, "Run folders (or folders of runs)")->required();
  cmd->add_option("--target", o->target, "Target BPB")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--metric", o->metric, "val_bpb | heldout_bpb")
      ->check(CLI::IsMember({"val_bpb", "heldout_bpb"}));
  cmd->add_option("--uniform", o->uniform,
                  "Arm (config name) of the uniform control; default: the arm named *uniform*");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o] {
    std::vector<gllm::RunInfo> runs;
    for (const auto& d : o->runs) {
      std::vector<std::string> errors;
      auto rs = gllm::list_runs(d, &errors);
      // A damaged folder among many is reported and skipped, not the end of the whole listing.
      for (const auto& e : errors) std::fprintf(stderr, "gllm: warning: skipped %s\n", e.c_str());
      if (rs.empty()) throw gllm::Error(d + " holds no readable run folder");
      runs.insert(runs.end(), rs.begin(), rs.end());
    }
    auto j = gllm::token_efficiency(runs, o->metric, o->target, o->uniform);
    if (o->json) {
      gllm::cli::print_json(j);
      return;
    }
    std::printf("tokens to %s <= %.4f (uniform arm: %s)\n", o->metric.c_str(), o->target,
                j["uniform_arm"].is_null() ? "none" : j["uniform_arm"].get<std::string>().c_str());
    using gllm::Align;
    gllm::TextTable table({"  arm", "seed", "tokens", "step", "ratio to uniform"},
                          {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right});
    for (const auto& r : j["runs"]) {
      std::vector<std::string> row{"  " + r["arm"].get<std::string>(),
                                   std::to_string(r["seed"].get<int>())};
      if (!r["reached"].get<bool>()) {
        row.insert(row.end(), {"not reached", "", ""});
      } else {
        char ratio[32] = "";
        if (!r["ratio_to_uniform"].is_null())
          std::snprintf(ratio, sizeof ratio, "%.3f", r["ratio_to_uniform"].get<double>());
        row.insert(row.end(), {std::to_string(r["tokens"].get<int64_t>()),
                               std::to_string(r["step"].get<int64_t>()), ratio});
      }
      table.add_row(row);
    }
    std::cout << table.render() << std::flush;
    if (j.contains("note")) std::printf("note: %s\n", j["note"].get<std::string>().c_str());
  });
});

}  // namespace
