// The CLI's subcommand registry: each app/gllm/cmd_*.cpp adds its subcommands at static-init time,
// and main() installs them on the CLI11 app in name order. Shared helpers for JSON output.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

namespace gllm::cli {

// Receives the app (or group) to add a subcommand to.
using Installer = std::function<void(CLI::App& parent)>;

// Top-level command: RegisterCommand reg("cone", [](CLI::App& root) { root.add_subcommand(...); });
struct RegisterCommand {
  RegisterCommand(const char* name, Installer install);
};

// Command inside a group shared by several files, e.g. RegisterSubcommand("bench", "cone", ...).
// The group ("gllm bench") is created once, with the description from group_description().
struct RegisterSubcommand {
  RegisterSubcommand(const char* group, const char* name, Installer install);
};

void install_all(CLI::App& root);

// Prints JSON (indented) to stdout; used by every --json flag.
inline void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << std::endl; }

}  // namespace gllm::cli
