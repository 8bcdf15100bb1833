// Where the workbench keeps things: the data cache (GLLM_DATA, default ~/.cache/gllm) and the
// runs folder (GLLM_RUNS, default ./runs). One place so CLI, GUI and tests agree.
#pragma once
#include <string>

namespace gllm {

std::string data_cache_dir();  // $GLLM_DATA or $XDG_CACHE_HOME/gllm or ~/.cache/gllm
std::string runs_dir();        // $GLLM_RUNS or ./runs
std::string join_path(const std::string& a, const std::string& b);

}  // namespace gllm
