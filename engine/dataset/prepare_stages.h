// The stages of prepare_dataset shared by prepare.cpp (plan, sample, tokenizer, manifest) and
// prepare_encode.cpp (parallel encoding, the split of the evaluation candidates, the shards).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/dataset/prepare.h"

namespace gllm {

class Tokenizer;
struct ShardRecord;

// Empty when `record` (a manifest or a plan, of a prepare or an import) was made from `files` — the
// same paths, sizes and change times — with `options`; else why not (which input changed, or "it
// was made with other options").
std::string record_differs(const nlohmann::json& record, const std::vector<InputFile>& files,
                           const nlohmann::json& options);

// The manifest's "shard_format": llm.c's header (magic, version, 256 int32), uint16 tokens, a
// BOS (`bos_id`) before each document.
nlohmann::json shard_format_json(int32_t bos_id);

// A shard as a manifest lists it: file, tokens, bytes, sha512.
nlohmann::json shard_record_json(const ShardRecord& r);

// What the first pass learned, kept in <dataset>/prepare.json until the manifest is written.
struct PreparePlan {
  nlohmann::json options;  // prepare_options_json
  std::vector<InputFile> inputs;
  std::vector<std::string> input_sha512;
  DocumentReadCounts counts;  // of the first pass
  // Documents whose split bucket is below region_end are the evaluation candidates: validation
  // and held-out are drawn from them in content-hash order, the rest of them train.
  uint32_t region_end = 0;
};

// Calls `fn(index, text)` for every document of the plan's inputs in order (index counts from 0
// over all inputs), checking that no input changed since the first pass and the stop flag.
void for_each_document(const PrepareOptions& o, const PreparePlan& plan, const PrepareHooks& hooks,
                       const std::function<void(uint64_t index, std::string& text)>& fn);

// Throws the resumable stop error when hooks.stop is set.
void check_stop(const PrepareHooks& hooks);

// The encode stage (resumable through <dataset>/progress.json): every document encoded in
// parallel, train documents streamed into train shards, evaluation candidates spilled to disk and
// split by content hash into val / held-out (sized in tokens) and train. Returns the "splits"
// section of the manifest. Sets `resumed` when it continued an earlier run.
nlohmann::json encode_dataset(const PrepareOptions& o, const PreparePlan& plan,
                              const Tokenizer& tokenizer, const PrepareHooks& hooks, bool& resumed);

// The first pass's record (PreparePlan as JSON), kept until the manifest is written.
constexpr const char* kPlanFile = "prepare.json";

// Files the encode stage leaves in the dataset folder until the manifest is written.
constexpr const char* kProgressFile = "progress.json";
constexpr const char* kRegionTokensFile = "region.tokens";
constexpr const char* kRegionIndexFile = "region.index";

int effective_threads(int threads);

// One prepare or import writes a dataset folder at a time (flock on <dir>/.prepare.lock, released
// when the process ends, however it ends). Throws gllm::Error when another one holds it.
class DatasetFolderLock {
 public:
  explicit DatasetFolderLock(const std::string& dir);
  ~DatasetFolderLock();
  DatasetFolderLock(const DatasetFolderLock&) = delete;
  DatasetFolderLock& operator=(const DatasetFolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace gllm
