// Resolution of the data cache and runs folders from the environment, with documented defaults.
// No folder is created here; callers create what they write.
#include "engine/io/paths.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "engine/io/error.h"

namespace gllm {

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (!b.empty() && b[0] == '/') return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string folder_name(const std::string& name) {
  std::string safe;
  for (char ch : name) {
    if (safe.size() >= 96) break;
    // '+' and '=' stay: a run label such as tiny-cpu+storage=bf16 is its folder's name too.
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' ||
                      ch == '.' || ch == '+' || ch == '=';
    safe += keep && !(safe.empty() && ch == '.') ? ch : '_';
  }
  return safe.empty() ? std::string("run") : safe;
}

std::string data_cache_dir() {
  if (const char* d = std::getenv("GLLM_DATA"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return join_path(x, "gllm");
  if (const char* h = std::getenv("HOME"); h && *h) return join_path(h, ".cache/gllm");
  return ".cache/gllm";
}

std::string runs_dir() {
  if (const char* d = std::getenv("GLLM_RUNS"); d && *d) return d;
  return "runs";
}

std::string this_program_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || p.empty())
    throw Error("cannot find this program's path (/proc/self/exe: " + ec.message() +
                "); run it from a system with /proc mounted");
  return p.string();
}

}  // namespace gllm
