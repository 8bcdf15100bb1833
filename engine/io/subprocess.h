// Runs an external program (npm, tar) without a shell: argv is passed as is, output captured.
// Used by the corpus fetcher; never used on a hot path.
#pragma once
#include <string>
#include <vector>

namespace gllm {

struct ProcessResult {
  int exit_code = -1;  // -1 when the program could not be started
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (searched on PATH) with the given arguments in `workdir` (empty = current).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& workdir = "");

// True when `program` is found on PATH.
bool program_available(const std::string& program);

}  // namespace gllm
