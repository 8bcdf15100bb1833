// Process helpers for tests (QProcess with a timeout) and locations of fixtures and scripts,
// baked in at configure time so tests run from any folder.
#include "tests/support/test_support.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/io/error.h"

namespace gllm::test {

CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::vector<std::string>& env, int timeout_ms,
                          const std::string& cwd) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const auto& kv : env) {
    auto pos = kv.find('=');
    const QString key = QString::fromStdString(kv.substr(0, pos));
    if (pos == std::string::npos || pos + 1 == kv.size())
      e.remove(key);
    else
      e.insert(key, QString::fromStdString(kv.substr(pos + 1)));
  }
  p.setProcessEnvironment(e);
  if (!cwd.empty()) p.setWorkingDirectory(QString::fromStdString(cwd));
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
                      int timeout_ms, const std::string& cwd) {
  return run_program(GLLM_CLI_PATH, args, env, timeout_ms, cwd);
}

std::string fixture(const std::string& name) {
  return std::string(GLLM_FIXTURES_DIR) + "/" + name;
}
std::string source_file(const std::string& name) {
  return std::string(GLLM_TESTS_DIR) + "/../" + name;
}
std::string python_script(const std::string& name) {
  return std::string(GLLM_TESTS_DIR) + "/python/" + name;
}
std::string torch_python() {
  // GLLM_TEST_NO_TORCH_PYTHON=1 hides it, to check what a machine without one sees.
  const char* hide = std::getenv("GLLM_TEST_NO_TORCH_PYTHON");
  if (hide && std::string(hide) == "1") return "";
  return GLLM_TORCH_PYTHON;
}
bool references_required() {
  const char* ci = std::getenv("CI");
  return ci && (std::string(ci) == "true" || std::string(ci) == "1");
}
std::string missing_reference(const std::string& what) {
  return "REFERENCE MISSING: " + what + " was not found; this check did not run" +
         (references_required() ? " and CI=true makes that a failure"
                                : " (skipped; CI=true fails instead)");
}
std::string cli_path() {
  return GLLM_CLI_PATH;
}
std::string workbench_path() {
  return GLLM_WORKBENCH_PATH;
}
std::string plain_python() {
  return GLLM_PLAIN_PYTHON;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const gllm::Error& e) {
    return e.what();
  }
  return "";
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace gllm::test
