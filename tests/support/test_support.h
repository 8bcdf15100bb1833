// Helpers shared by the QtTest suites: scratch folders, fixtures, running `gllm` and the Python
// reference scripts. Torch-free and Qt-Core-only, so every test may use it.
#pragma once
#include <QString>
#include <QTemporaryDir>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built `gllm` CLI with arguments; optional extra environment "KEY=VALUE" entries (an
// empty VALUE, "KEY=", removes KEY) and working folder (default: the test's).
CommandResult run_cli(const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {}, int timeout_ms = 600000,
                      const std::string& cwd = "");
// Runs any program.
CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {}, int timeout_ms = 600000,
                          const std::string& cwd = "");

std::string fixture(const std::string& name);        // tests/fixtures/<name>
std::string source_file(const std::string& name);    // <source root>/<name>, e.g. README.md
std::string python_script(const std::string& name);  // tests/python/<name>
// Python interpreter that has torch (empty when none: tests that need it use
// GLLM_REQUIRE_TORCH_PYTHON, which fails under CI and skips loudly elsewhere).
std::string torch_python();
// Whether a missing reference must fail a test rather than skip it: CI is set to true or 1.
bool references_required();
// The message for a missing reference `what`, with what to install.
std::string missing_reference(const std::string& what);
std::string cli_path();        // the built `gllm`
std::string workbench_path();  // the built `gllm-workbench` (empty without the GUI)
std::string plain_python();

// The message of the gllm::Error `fn` throws; "" when it throws none (another exception escapes).
std::string error_of(const std::function<void()>& fn);
// Writes `text` to `path` as it is, replacing the file (not atomic: tests damage files on purpose).
void write_text(const std::string& path, const std::string& text);
// Reads and parses a JSON file the code under test wrote (a parse error fails the test loudly).
nlohmann::json read_json(const std::string& path);

}  // namespace gllm::test

// Stops the calling test function when a reference it compares against is not available: QFAIL
// under CI (CI=true), else a warning and QSKIP, so a broken setup never passes silently.
#define GLLM_REQUIRE_REFERENCE(available, what)                                \
  do {                                                                         \
    if (!(available)) {                                                        \
      const std::string gllm_missing_ = ::gllm::test::missing_reference(what); \
      if (::gllm::test::references_required()) QFAIL(gllm_missing_.c_str());   \
      qWarning("%s", gllm_missing_.c_str());                                   \
      QSKIP(gllm_missing_.c_str());                                            \
    }                                                                          \
  } while (0)

// The literal PyTorch references (tests/python/*_reference.py) need a Python with torch.
#define GLLM_REQUIRE_TORCH_PYTHON()                             \
  GLLM_REQUIRE_REFERENCE(!::gllm::test::torch_python().empty(), \
                         "a Python with torch for the PyTorch reference (install python3-torch)")
