// Where the workbench keeps things: the data cache (GLLM_DATA, default ~/.cache/gllm) and the
// runs folder (GLLM_RUNS, default ./runs). One place so CLI, GUI and tests agree.
#pragma once
#include <string>

namespace gllm {

std::string data_cache_dir();  // $GLLM_DATA or $XDG_CACHE_HOME/gllm or ~/.cache/gllm
std::string runs_dir();        // $GLLM_RUNS or ./runs
std::string join_path(const std::string& a, const std::string& b);
// The one rule that turns a preset, arm or run name into a folder name (train, sweeps and the
// workbench alike): letters, digits, '-', '_', '.', '+' and '=' are kept, anything else (separators
// included) becomes '_', a leading '.' becomes '_' (no "..", no hidden folder), at most 96
// bytes; an empty name gives "run". The result never leaves the folder it is joined to.
std::string folder_name(const std::string& name);
// This program's absolute path (/proc/self/exe): how the CLI starts its own subcommands (ranks,
// benchmarks) and names itself in batch scripts. Throws gllm::Error when it cannot be read.
std::string this_program_path();

}  // namespace gllm
