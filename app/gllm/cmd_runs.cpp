// `gllm runs [DIR] [--json]`: lists the run folders under DIR (default runs/) with their preset,
// seed, status, step and results, and any problem reading them.
#include <cstdio>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/paths.h"
#include "engine/io/text_table.h"
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
    auto num = [](double v) {
      char b[32];
      if (v < 0) return std::string("-");
      std::snprintf(b, sizeof b, "%.4f", v);
      return std::string(b);
    };
    using gllm::Align;
    gllm::TextTable table(
        {"run", "preset", "seed", "status", "step", "loss", "val BPB", "held BPB"},
        {Align::Left, Align::Left, Align::Right, Align::Left, Align::Right, Align::Right,
         Align::Right, Align::Right});
    for (const auto& r : runs) {
      table.add_row({r.dir, r.name, std::to_string(r.seed), r.status,
                     std::to_string(r.step) + "/" + std::to_string(r.total_steps),
                     num(r.final_loss), num(r.val_bpb), num(r.heldout_bpb)});
      for (const auto& w : r.warnings) table.add_line("    warning: " + w);
    }
    std::cout << table.render();
    for (const auto& e : errors) std::printf("error: %s\n", e.c_str());
  });
});

}  // namespace
