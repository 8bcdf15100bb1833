// Helpers shared by the QtTest suites: scratch folders, fixtures, running `gllm` and the Python
// reference scripts. Torch-free and Qt-Core-only, so every test may use it.
#pragma once
#include <QString>
#include <QTemporaryDir>
#include <string>
#include <vector>

namespace gllm::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built `gllm` CLI with arguments; optional extra environment "KEY=VALUE" entries.
CommandResult run_cli(const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {}, int timeout_ms = 600000);
// Runs any program.
CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {}, int timeout_ms = 600000);

std::string fixture(const std::string& name);   // tests/fixtures/<name>
std::string python_script(const std::string& name);  // tests/python/<name>
// Python interpreter that has torch (empty when none: tests that need it QSKIP).
std::string torch_python();
std::string cli_path();        // the built `gllm`
std::string workbench_path();  // the built `gllm-workbench` (empty without the GUI)
std::string plain_python();

}  // namespace gllm::test
