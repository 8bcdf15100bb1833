// The prepared-dataset side of `gllm data`: `prepare` (cmd_data_prepare.cpp) and the report that
// `gllm data info DATASET` prints from a dataset's manifest.
#pragma once
#include <string>

namespace gllm::cli {

// Prints the manifest of the prepared dataset in `dir` (a table, or the manifest itself with
// --json); with `verify`, every shard is checked against its recorded size and SHA-512 first.
void print_dataset_info(const std::string& dir, bool json, bool verify);

}  // namespace gllm::cli
