// The CLI's subcommand registry: each app/gllm/cmd_*.cpp adds its subcommands at static-init time,
// and main() installs them on the CLI11 app in name order. Shared helpers: JSON output, counts.
#pragma once
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

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

// Thrown by a command that ends with a particular exit status and message (not an error): main()
// prints the message on stderr and returns `code`.
struct ExitStatus {
  int code;
  std::string message;
};

// One number in a printf format ("%.3f"); "—" when it is not finite (a measure not reached).
std::string number_text(const char* format, double v);

// Prints JSON (indented) to stdout; used by every --json flag.
inline void print_json(const nlohmann::json& j) {
  // Invalid UTF-8 (a folder name with stray bytes) is replaced, never the end of the listing.
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

// A count as researchers write it: 345000000, 345e6, 3.45e8, 345M, 7B, 1.5k (suffixes k, M, B or G,
// T; any case). The value must be a whole number in [lo, hi]; 1.5, -3, 1e-2 and values past the
// range are errors (gllm::Error naming `option` and the accepted spellings).
int64_t parse_count(const std::string& text, const std::string& option, int64_t lo = 0,
                    int64_t hi = INT64_MAX);

// Adds an option that reads a count with parse_count into `target` (any integer type; the range
// is clipped to the type's).
template <class Int>
CLI::Option* add_count_option(CLI::App* cmd, const std::string& name, Int& target,
                              const std::string& help, int64_t lo = 0, int64_t hi = INT64_MAX) {
  static_assert(std::is_integral_v<Int>, "counts are integers");
  hi = std::min<int64_t>(hi, static_cast<int64_t>(std::numeric_limits<Int>::max()));
  lo = std::max<int64_t>(lo, static_cast<int64_t>(std::numeric_limits<Int>::min()));
  const std::string flag = name.substr(0, name.find(','));
  return cmd
      ->add_option_function<std::string>(
          name,
          [&target, flag, lo, hi](const std::string& s) {
            target = static_cast<Int>(parse_count(s, flag, lo, hi));
          },
          help)
      ->type_name("COUNT");
}

}  // namespace gllm::cli
