// Storage for the CLI subcommand registry, filled by static registrars in the cmd_*.cpp files.
// Installation order is by name so `gllm --help` lists subcommands alphabetically.
#include "app/gllm/command_registry.h"

#include <map>

namespace gllm::cli {
namespace {

std::map<std::string, Installer>& top_level() {
  static std::map<std::string, Installer> r;
  return r;
}
std::map<std::string, std::map<std::string, Installer>>& grouped() {
  static std::map<std::string, std::map<std::string, Installer>> r;
  return r;
}
const char* group_description(const std::string& group) {
  static const std::map<std::string, const char*> d = {
      {"bench", "Benchmarks that print ratios measured side by side in one run"},
      {"stats", "Statistics over runs and seeds"},
      {"check", "Self-checks of the engine on this machine (GPU paths)"},
  };
  auto it = d.find(group);
  return it == d.end() ? "" : it->second;
}

}  // namespace

RegisterCommand::RegisterCommand(const char* name, Installer install) {
  top_level()[name] = std::move(install);
}

RegisterSubcommand::RegisterSubcommand(const char* group, const char* name, Installer install) {
  grouped()[group][name] = std::move(install);
}

void install_all(CLI::App& root) {
  std::map<std::string, Installer> all = top_level();
  for (auto& [group, members] : grouped()) {
    auto members_copy = members;
    all[group] = [group = group, members_copy](CLI::App& r) {
      auto* g = r.add_subcommand(group, group_description(group));
      g->require_subcommand(1);
      for (auto& [name, install] : members_copy) install(*g);
    };
  }
  for (auto& [name, install] : all) install(root);
}

}  // namespace gllm::cli
