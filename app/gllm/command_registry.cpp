// Storage for the CLI subcommand registry, filled by static registrars in the cmd_*.cpp files
// (installed by name, so `gllm --help` is alphabetical), and the one parser of count options.
#include "app/gllm/command_registry.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "engine/io/error.h"

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
      {"data", "Corpora and datasets: fetch Brown, prepare a corpus into token shards, report"},
      {"stats", "Statistics over runs and seeds"},
      {"cluster", "SLURM cluster profiles for gllm submit (partition, time limit, GPUs, …)"},
      {"check", "Self-checks of the engine on this machine (GPU paths)"},
  };
  auto it = d.find(group);
  return it == d.end() ? "" : it->second;
}

}  // namespace

int64_t parse_count(const std::string& text, const std::string& option, int64_t lo, int64_t hi) {
  const std::string how = "; write a whole number such as 345000000, 345e6, 3.45e8, 345M or 7B";
  auto fail = [&](const std::string& why) -> int64_t {
    throw Error(option + " = \"" + text + "\" " + why + how);
  };
  // digits [. digits] [e|E [+|-] digits] [k|M|B|G|T]: the value is `mantissa` · 10^exp10, exactly.
  size_t i = 0;
  const size_t n = text.size();
  if (i < n && (text[i] == '+' || text[i] == '-')) {
    if (text[i] == '-') fail("is negative: counts are not");
    ++i;
  }
  std::string mantissa;
  int64_t exp10 = 0;
  bool any_digit = false;
  for (; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
    mantissa += text[i], any_digit = true;
  if (i < n && text[i] == '.') {
    for (++i; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      mantissa += text[i], --exp10, any_digit = true;
  }
  if (!any_digit) fail("is not a number");
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    if (i == n || !std::isdigit(static_cast<unsigned char>(text[i])))
      fail("has no exponent after 'e'");
    int64_t e = 0;
    for (; i < n && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      e = std::min<int64_t>(e * 10 + (text[i] - '0'), 1000);
    exp10 += neg ? -e : e;
  }
  if (i < n) {
    const char s = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    const int shift = s == 'K' ? 3 : s == 'M' ? 6 : (s == 'B' || s == 'G') ? 9 : s == 'T' ? 12 : -1;
    if (shift < 0 || i + 1 != n)
      fail("is not a count (unknown suffix '" + text.substr(i) + "'; use k, M, B or T)");
    exp10 += shift;
    ++i;
  }
  // Strip leading zeros; a negative power must only remove trailing zeros (else not whole).
  mantissa.erase(0, std::min(mantissa.find_first_not_of('0'), mantissa.size()));
  if (mantissa.empty()) {
    if (lo > 0) fail("is below the smallest accepted value " + std::to_string(lo));
    return 0;
  }
  while (exp10 < 0) {
    if (mantissa.back() != '0') fail("is not a whole number");
    mantissa.pop_back();
    ++exp10;
  }
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (static_cast<int64_t>(mantissa.size()) + exp10 > 19)
    fail("is too large: it must lie in " + range);
  unsigned __int128 v = 0;
  for (char d : mantissa) v = v * 10 + static_cast<unsigned>(d - '0');
  for (int64_t k = 0; k < exp10; ++k) v *= 10;
  if (v > static_cast<unsigned __int128>(hi) || static_cast<__int128>(v) < lo)
    fail((v > static_cast<unsigned __int128>(hi) ? "is too large" : "is too small") +
         std::string(": it must lie in ") + range);
  return static_cast<int64_t>(v);
}

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

std::string number_text(const char* format, double v) {
  if (!std::isfinite(v)) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace gllm::cli
