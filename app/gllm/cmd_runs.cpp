// `gllm runs [DIR] [--json]`: lists the run folders under DIR (default runs/) with their preset,
// seed, status, step and results, and any problem reading them.
#include <cstdio>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/paths.h"
#include "engine/train/run_store.h"

namespace {

gllm::cli::RegisterCommand reg("runs", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("runs", "List run folders with their presets and results");
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Folder holding runs, or one run folder (default: runs/)");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([dir, json] {
    std::string d = dir->empty() ? gllm::runs_dir() : *dir;
    std::vector<std::string> errors;
    auto runs = gllm::list_runs(d, &errors);
    if (*json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& r : runs) arr.push_back(gllm::to_json(r));
      gllm::cli::print_json({{"dir", d}, {"runs", arr}, {"errors", errors}});
      return;
    }
    if (runs.empty() && errors.empty()) {
      std::cout << "no runs in " << d << " (start one with `gllm train tiny-cpu`)\n";
      return;
    }
    std::printf("%-44s %-22s %5s %-11s %11s %9s %9s %9s\n", "run", "preset", "seed", "status", "step", "loss",
                "val BPB", "held BPB");
    auto num = [](double v) {
      char b[32];
      if (v < 0) return std::string("-");
      std::snprintf(b, sizeof b, "%.4f", v);
      return std::string(b);
    };
    for (const auto& r : runs) {
      std::string name = r.dir.size() > 44 ? "…" + r.dir.substr(r.dir.size() - 43) : r.dir;
      std::string steps = std::to_string(r.step) + "/" + std::to_string(r.total_steps);
      std::printf("%-44s %-22s %5d %-11s %11s %9s %9s %9s\n", name.c_str(), r.name.c_str(), r.seed,
                  r.status.c_str(), steps.c_str(), num(r.final_loss).c_str(), num(r.val_bpb).c_str(),
                  num(r.heldout_bpb).c_str());
      for (const auto& w : r.warnings) std::printf("    warning: %s\n", w.c_str());
    }
    for (const auto& e : errors) std::printf("error: %s\n", e.c_str());
  });
});

}  // namespace
