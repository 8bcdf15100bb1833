// `gllm cluster list|show|set|remove`: the named SLURM profiles `gllm submit --cluster NAME` and
// the Runs panel use, kept in <config>/clusters/NAME.json (GLLM_CONFIG, else ~/.config/gllm).
#include <iostream>
#include <map>

#include "app/gllm/command_registry.h"
#include "engine/cluster/cluster_profile.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/text_table.h"

namespace {

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

gllm::cli::RegisterSubcommand reg_list("cluster", "list", [](CLI::App& group) {
  auto* cmd = group.add_subcommand("list", "List the cluster profiles");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([json] {
    std::vector<std::string> problems;
    const auto names = gllm::list_cluster_profiles(&problems);
    if (*json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& n : names) {
        auto j = gllm::load_cluster_profile(n).to_json();
        j["name"] = n;
        arr.push_back(j);
      }
      gllm::cli::print_json(
          {{"dir", gllm::cluster_profiles_dir()}, {"profiles", arr}, {"errors", problems}});
      return;
    }
    if (names.empty() && problems.empty()) {
      std::cout << "no cluster profiles in " << gllm::cluster_profiles_dir()
                << " (make one: gllm cluster set NAME --partition P --time-limit 02:00:00)\n";
      return;
    }
    using gllm::Align;
    gllm::TextTable t(
        {"profile", "partition", "time", "nodes", "GPUs/node", "runs root"},
        {Align::Left, Align::Left, Align::Left, Align::Right, Align::Right, Align::Left});
    for (const auto& n : names) {
      const auto p = gllm::load_cluster_profile(n);
      t.add_row({n, p.partition.empty() ? "(default)" : p.partition,
                 p.time_limit.empty() ? "(default)" : p.time_limit, std::to_string(p.nodes),
                 std::to_string(p.gpus_per_node),
                 p.runs_root.empty() ? "(local runs)" : p.runs_root});
    }
    std::cout << t.render();
    for (const auto& e : problems) std::cout << "error: " << e << "\n";
  });
});

gllm::cli::RegisterSubcommand reg_show("cluster", "show", [](CLI::App& group) {
  auto* cmd = group.add_subcommand("show", "Print one cluster profile as JSON");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "Profile name")->required();
  cmd->callback([name] { gllm::cli::print_json(gllm::load_cluster_profile(*name).to_json()); });
});

gllm::cli::RegisterSubcommand reg_set("cluster", "set", [](CLI::App& group) {
  auto* cmd = group.add_subcommand(
      "set", "Create a cluster profile or change some of its settings (the rest are kept)");
  auto name = std::make_shared<std::string>();
  auto values = std::make_shared<std::map<std::string, std::string>>();
  auto extra = std::make_shared<std::vector<std::string>>();
  auto setup = std::make_shared<std::vector<std::string>>();
  auto clear_lists = std::make_shared<bool>(false);
  cmd->add_option("name", *name, "Profile name")->required();
  for (const auto& f : gllm::ClusterProfile::schema().fields()) {
    const std::string key = f.info.path;
    cmd->add_option_function<std::string>(
           flag_of(key), [values, key](const std::string& v) { (*values)[key] = v; }, f.info.help)
        ->type_name(f.info.kind == gllm::FieldKind::Int    ? "N"
                    : f.info.kind == gllm::FieldKind::Bool ? "true|false"
                                                           : "TEXT");
  }
  cmd->add_option("--extra-sbatch", *extra,
                  "More sbatch options, written as --key=value (repeat the flag; replaces the "
                  "profile's list)")
      ->allow_extra_args(false);
  cmd->add_option("--setup", *setup,
                  "A shell line each task runs before the trainer, e.g. \"module load cuda\" "
                  "(repeat; replaces the profile's list)")
      ->allow_extra_args(false);
  cmd->add_flag("--clear-lists", *clear_lists, "Empty extra_sbatch and setup first");
  cmd->callback([name, values, extra, setup, clear_lists] {
    gllm::check_profile_name(*name);
    nlohmann::json j = nlohmann::json::object();
    try {
      j = gllm::load_cluster_profile(*name).to_json();
    } catch (const gllm::Error&) {
      // A profile that exists and does not read is fixed by hand, never overwritten.
      if (gllm::file_exists(gllm::join_path(gllm::cluster_profiles_dir(), *name + ".json"))) throw;
    }
    for (const auto& [key, text] : *values) {
      const auto* f = gllm::ClusterProfile::schema().find(key);
      if (f->info.kind == gllm::FieldKind::Int) {
        j[key] = gllm::cli::parse_count(text, flag_of(key), static_cast<int64_t>(f->info.min),
                                        static_cast<int64_t>(f->info.max));
      } else if (f->info.kind == gllm::FieldKind::Bool) {
        if (text != "true" && text != "false")
          throw gllm::Error(flag_of(key) + ": give true or false, not '" + text + "'");
        j[key] = text == "true";
      } else {
        j[key] = text;
      }
    }
    if (*clear_lists) j["extra_sbatch"] = j["setup"] = nlohmann::json::array();
    if (!extra->empty()) j["extra_sbatch"] = *extra;
    if (!setup->empty()) j["setup"] = *setup;
    gllm::ClusterProfile p;
    try {
      p = gllm::ClusterProfile::from_json(j, *name);
    } catch (const gllm::ConfigError& e) {
      throw gllm::Error("cluster profile " + *name + ": " + e.what());
    }
    std::cout << "wrote " << gllm::save_cluster_profile(p) << "\n";
  });
});

gllm::cli::RegisterSubcommand reg_remove("cluster", "remove", [](CLI::App& group) {
  auto* cmd = group.add_subcommand("remove", "Remove a cluster profile");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "Profile name")->required();
  cmd->callback([name] {
    if (!gllm::remove_cluster_profile(*name))
      throw gllm::Error("no cluster profile '" + *name + "' in " + gllm::cluster_profiles_dir());
    std::cout << "removed " << *name << "\n";
  });
});

}  // namespace
