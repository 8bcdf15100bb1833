// `gllm runs [DIR] [--json]`: lists the run folders under DIR (default runs/) with their label,
// seed, status, cluster state (one scheduler poll for all), step and results, and read problems.
#include <cstdio>
#include <iostream>
#include <map>

#include "app/gllm/command_registry.h"
#include "engine/cluster/cluster_state.h"
#include "engine/config/run_identity.h"
#include "engine/io/paths.h"
#include "engine/io/text_table.h"
#include "engine/train/run_store.h"

namespace {

gllm::cli::RegisterCommand reg_runs("runs", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("runs", "List run folders with their presets and results");
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Folder holding runs, or one run folder (default: runs/)");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([dir, json] {
    std::string d = dir->empty() ? gllm::runs_dir() : *dir;
    std::vector<std::string> errors;
    auto runs = gllm::list_runs(d, &errors);
    // Cluster runs: one squeue (and at most one sacct) call for all of them.
    std::vector<gllm::ClusterRunQuery> queries;
    for (const auto& r : runs) queries.push_back({r.dir, r.status});
    std::map<std::string, gllm::ClusterRunState> cluster;
    for (auto& st : gllm::cluster_run_states(queries)) cluster[st.run_dir] = st;
    std::vector<std::string> labels;
    for (const auto& r : runs) labels.push_back(gllm::run_label_of(r.config));
    if (*json) {
      nlohmann::json arr = nlohmann::json::array();
      for (size_t i = 0; i < runs.size(); ++i) {
        auto j = gllm::to_json(runs[i]);
        j["label"] = labels[i];
        auto it = cluster.find(runs[i].dir);
        j["scheduler"] = it == cluster.end() ? nlohmann::json(nullptr) : gllm::to_json(it->second);
        arr.push_back(j);
      }
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
    const bool any_cluster = !cluster.empty();
    std::vector<std::string> head{"run", "label", "seed", "status"};
    std::vector<Align> align{Align::Left, Align::Left, Align::Right, Align::Left};
    if (any_cluster) {
      head.push_back("cluster");
      align.push_back(Align::Left);
    }
    for (const char* h : {"step", "loss", "val BPB", "held BPB"}) {
      head.push_back(h);
      align.push_back(Align::Right);
    }
    gllm::TextTable table(head, align);
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& r = runs[i];
      std::vector<std::string> row{r.dir, labels[i], std::to_string(r.seed), r.status};
      auto it = cluster.find(r.dir);
      if (any_cluster)
        row.push_back(it == cluster.end()
                          ? "-"
                          : it->second.state +
                                (it->second.detail.empty() ? "" : " (" + it->second.detail + ")"));
      for (const auto& v :
           {std::to_string(r.step) + "/" + std::to_string(r.total_steps), num(r.final_loss),
            num(r.val_bpb) + (r.val_bpb >= 0 && r.val_bpb_step >= 0 && r.val_bpb_step != r.step
                                  ? " @" + std::to_string(r.val_bpb_step)
                                  : ""),
            num(r.heldout_bpb)})
        row.push_back(v);
      table.add_row(row);
      for (const auto& w : r.warnings) table.add_line("    warning: " + w);
      if (it != cluster.end() && !it->second.log_tail.empty()) {
        table.add_line("    log " + it->second.log + ":");
        std::string tail = it->second.log_tail, line;
        for (size_t a = 0, b; a <= tail.size(); a = b + 1) {
          b = tail.find('\n', a);
          if (b == std::string::npos) b = tail.size();
          table.add_line("      " + tail.substr(a, b - a));
        }
      }
    }
    std::cout << table.render();
    for (const auto& e : errors) std::printf("error: %s\n", e.c_str());
  });
});

}  // namespace
