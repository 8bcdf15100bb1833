// Runs an external program (npm, tar) without a shell: argv is passed as is, output captured.
// Used by the corpus fetcher; never used on a hot path.
#pragma once
#include <string>
#include <vector>

namespace gllm {

struct ProcessResult {
  int exit_code = -1;      // -1 when the program could not be started
  std::string output;      // stdout and stderr together
  bool timed_out = false;  // killed after the timeout (exit_code 137)
};

// Runs argv[0] (searched on PATH) with the given arguments in `workdir` (empty = current).
// A positive `timeout_s` kills the program (SIGKILL) when it runs longer: scheduler commands
// (squeue, sbatch) against a controller that does not answer must not hang their caller.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir = "",
                          double timeout_s = 0);

// True when `program` is found on PATH.
bool program_available(const std::string& program);

}  // namespace gllm
