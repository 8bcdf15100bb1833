// The engine's one exception type: every message names the problem and says what to do next.
// CLI and GUI catch gllm::Error at their boundary and show its text as is.
#pragma once
#include <stdexcept>
#include <string>

namespace gllm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Error in a configuration value: `path` is the JSON key path ("model.n_head").
class ConfigError : public Error {
 public:
  ConfigError(const std::string& path, const std::string& what)
      : Error(path.empty() ? what : path + ": " + what), key_path(path) {}
  std::string key_path;
};

}  // namespace gllm
