// A prepared dataset as it lies on disk: manifest.json (inputs, tokenizer, splits, shards with
// their hashes) beside tokenizer.model and the llm.c shards; reading it and checking the shards.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

constexpr const char* kManifestFile = "manifest.json";

// Reads <dir>/manifest.json. Throws gllm::Error when the folder holds no finished dataset (an
// unfinished prepare says how to continue it) or the manifest is not one of this format.
nlohmann::json read_manifest(const std::string& dir);

// True when `dir` holds a manifest.json (a finished prepare).
bool is_prepared_dataset(const std::string& dir);

// Checks every shard the manifest lists: present, a regular file of the recorded size, a valid
// llm.c header with the recorded token count, and the recorded SHA-512 (all bytes read once).
// Returns one line per problem (empty: all whole). `splits`: which splits to check (empty: all).
std::vector<std::string> verify_dataset_shards(const std::string& dir,
                                               const nlohmann::json& manifest,
                                               const std::vector<std::string>& splits = {});

// The same, throwing gllm::Error that names the first problems and the fix.
void require_dataset_shards_whole(const std::string& dir, const nlohmann::json& manifest,
                                  const std::vector<std::string>& splits = {});

// One split's shard paths in order (absolute or relative to the working folder as `dir` is).
std::vector<std::string> dataset_shard_paths(const std::string& dir, const nlohmann::json& manifest,
                                             const std::string& split);

}  // namespace gllm
