// Shared parts of the benchmarks: machine/build info recorded with every result, medians, the
// source tree's folders (reference scripts, bench/results) and atomic result files. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm::bench {

// {"cpu_model", "cores", "threads", "blas", "blas_detail", "blas_library", "torch_version",
//  "project_version", "git_commit", "git_dirty", "load_average": [1, 5, 15 min], "hostname",
//  "date_utc"}: what a reader needs to compare results across machines and commits.
nlohmann::json machine_info();

// Median of the values (the mean of the two middle ones for an even count); NaN when empty.
double median(std::vector<double> values);

// The project's source root: $GLLM_SOURCE_DIR, else the parent of the source presets folder.
std::string source_dir();
// tests/python/<name> under source_dir(); throws gllm::Error naming --script when missing.
std::string reference_script(const std::string& name);
// Interpreter for the PyTorch references: /usr/bin/python3 (Debian's python3-torch) when it
// exists, else "python3" on PATH.
std::string default_python();
// bench/results under source_dir().
std::string results_dir();

// Writes `result` (indented JSON) to DIR/<kind>-YYYYmmdd-HHMMSS.json atomically (DIR created)
// and returns the path.
std::string write_result(const std::string& dir, const std::string& kind,
                         const nlohmann::json& result);

}  // namespace gllm::bench
