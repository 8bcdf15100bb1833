// A child process timed from the outside for the benchmarks: wall time, its own peak resident
// memory (wait4's rusage), and each line of its stderr with the second it arrived.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gllm::bench {

struct MeasuredProcess {
  int exit_code = -1;  // 128 + signal when killed by one
  double wall_s = 0;
  double peak_rss_mib = 0;  // the child's maximum resident set (not its children's)
  // stderr lines with seconds since the start, when captured (stderr_path empty).
  std::vector<std::pair<double, std::string>> stderr_lines;
};

// A started child; finish() waits for it.
class ChildProcess {
 public:
  // Starts argv[0] (searched on PATH) with stdin from `stdin_path` (empty: /dev/null), stdout to
  // `stdout_path` (empty: /dev/null) and stderr to `stderr_path` or, when empty, to a pipe read
  // by finish(). Throws gllm::Error naming the program when it cannot start.
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdin_path = "",
               const std::string& stdout_path = "", const std::string& stderr_path = "");
  ~ChildProcess();  // kills and reaps a child that finish() did not wait for
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  MeasuredProcess finish();

 private:
  int pid_ = -1;
  int err_fd_ = -1;
  double start_ = 0;
};

// Starts and finishes one child.
MeasuredProcess run_measured(const std::vector<std::string>& argv,
                             const std::string& stdin_path = "",
                             const std::string& stdout_path = "");

}  // namespace gllm::bench
