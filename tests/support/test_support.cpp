// Process helpers for tests (QProcess with a timeout) and locations of fixtures and scripts,
// baked in at configure time so tests run from any folder.
#include "tests/support/test_support.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

namespace gllm::test {

CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env, int timeout_ms) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const auto& kv : env) {
    auto pos = kv.find('=');
    e.insert(QString::fromStdString(kv.substr(0, pos)), QString::fromStdString(kv.substr(pos + 1)));
  }
  p.setProcessEnvironment(e);
  QStringList qargs;
  for (const auto& a : args) qargs << QString::fromStdString(a);
  p.start(QString::fromStdString(program), qargs);
  CommandResult r;
  if (!p.waitForStarted(30000)) {
    r.err = "cannot start " + program;
    return r;
  }
  p.closeWriteChannel();
  if (!p.waitForFinished(timeout_ms)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out: " + program;
  }
  r.out = p.readAllStandardOutput().toStdString();
  r.err += p.readAllStandardError().toStdString();
  r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : 128;
  return r;
}

CommandResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
                      int timeout_ms) {
  return run_program(GLLM_CLI_PATH, args, env, timeout_ms);
}

std::string fixture(const std::string& name) { return std::string(GLLM_FIXTURES_DIR) + "/" + name; }
std::string python_script(const std::string& name) {
  return std::string(GLLM_TESTS_DIR) + "/python/" + name;
}
std::string torch_python() { return GLLM_TORCH_PYTHON; }
std::string cli_path() { return GLLM_CLI_PATH; }
std::string workbench_path() { return GLLM_WORKBENCH_PATH; }
std::string plain_python() { return GLLM_PLAIN_PYTHON; }

}  // namespace gllm::test
