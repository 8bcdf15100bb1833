// Machine and build facts for benchmark results (CPU model, BLAS, torch, git commit, load),
// medians, and where the reference scripts and the bench/results folder live.
#include "engine/bench/bench_report.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/config/run_config.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/io/subprocess.h"
#include "engine/ops/kernel_choice.h"
#include "engine/runtime/runtime.h"

namespace gllm::bench {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b);
}

std::string utc_stamp(const char* fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), fmt, &tm);
  return buf;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string source_dir() {
  if (const char* env = std::getenv("GLLM_SOURCE_DIR"); env && *env) return env;
  // The source tree's presets folder is compiled into the config module; its parent is the root.
  // ($GLLM_PRESETS may point elsewhere: use its parent only when it is a source tree.)
  std::filesystem::path root = std::filesystem::path(presets_dir()).parent_path();
  if (std::filesystem::exists(root / "tests" / "python")) return root.string();
  std::string f =
      __FILE__;  // <root>/engine/bench/bench_report.cpp (absolute or relative to the build)
  const std::string tail = "engine/bench/bench_report.cpp";
  if (f.size() > tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0) {
    f.resize(f.size() - tail.size());
    if (!f.empty() && f.back() == '/') f.pop_back();
    return f.empty() ? "." : f;
  }
  return ".";
}

std::string reference_script(const std::string& name) {
  std::string p = join_path(join_path(source_dir(), "tests/python"), name);
  if (!file_exists(p))
    throw Error("the PyTorch reference script '" + p +
                "' is missing; pass --script PATH or set GLLM_SOURCE_DIR "
                "to the source tree");
  return p;
}

std::string default_python() {
  return file_exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

std::string results_dir() {
  return join_path(source_dir(), "bench/results");
}

nlohmann::json machine_info() {
  RuntimeInfo r = runtime_info();
  nlohmann::json j;
  j["cpu_model"] = cpu_model();
  j["isa"] = ops::kernels::isa_name(ops::kernels::cpu_isa());  // the widest the CPU runs
  j["kernel_isa"] = ops::kernels::isa_name(ops::kernels::active_isa());
  j["blas_core_type"] = ops::kernels::blas_core_type();
  j["openblas_coretype"] = ops::kernels::openblas_coretype();  // as set; "" when unset
  j["cores"] = r.cores;
  j["threads"] = r.threads;
  j["kernel_threads"] = r.kernel_threads;
  j["blas"] = r.blas;
  j["blas_detail"] = r.blas_detail;
  j["blas_library"] = r.blas_library;
  j["torch_version"] = r.torch_version;
  j["project_version"] = r.project_version;
  j["cuda_available"] = r.cuda_available;
  const std::string src = source_dir();
  auto head = run_process({"git", "-C", src, "rev-parse", "HEAD"});
  j["git_commit"] = head.exit_code == 0 ? trim(head.output) : "unknown";
  auto dirty = run_process({"git", "-C", src, "status", "--porcelain", "--untracked-files=no"});
  j["git_dirty"] = dirty.exit_code == 0 ? !trim(dirty.output).empty() : false;
  std::vector<double> load(3, NAN);
  if (getloadavg(load.data(), 3) != 3) load.assign(3, NAN);
  j["load_average"] = load;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) j["hostname"] = host;
  j["date_utc"] = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  return j;
}

std::string write_result(const std::string& dir, const std::string& kind,
                         const nlohmann::json& result) {
  make_directories(dir);
  std::string path = join_path(dir, kind + "-" + utc_stamp("%Y%m%d-%H%M%S") + ".json");
  write_file_atomic(path, result.dump(2) + "\n");
  return path;
}

}  // namespace gllm::bench
