// `gllm data import`: llm.c token shards made elsewhere (llm.c, modded-nanogpt, a peer's gllm)
// with the sentencepiece model that made them → a prepared dataset the trainer reads as its own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/dataset/prepare.h"

namespace gllm {

struct ImportOptions {
  std::vector<std::string> inputs;    // shard files, or folders of *.bin shards
  std::string tokenizer_model;        // the sentencepiece .model the shards were encoded with
  std::string out_dir;                // the dataset folder
  uint64_t heldout_tokens = 1000000;  // carved from the end of the train shards (BOS included)
  bool copy = false;                  // copy the shards even where a hard link is possible
};

// Which split a shard's file name puts it in: "val" when `val` is one of its words (separated by
// '_', '-', '.' or the name's ends: fineweb_val_000000.bin, val.bin), else "train".
std::string imported_shard_split(const std::string& file_name);

// Imports the shards into `o.out_dir`: validation shards (by file name) are validation; held-out
// is the last documents of the train shards, at least `heldout_tokens`, written as shards of its
// own (the train shard it cuts is rewritten without them); every other shard is hard-linked (or
// copied) as it is. Each shard is checked (header, BOS first, ids inside the model's vocabulary),
// its documents counted at BOS and its bytes summed from the model's pieces; the manifest is
// written last. A folder that holds this very import is left as it is (already_complete); one of
// other inputs is refused. Throws gllm::Error naming the shard, the problem and the fix.
PrepareResult import_shards(const ImportOptions& o, const PrepareHooks& hooks = {});

// The options that decide an import's content, as its manifest records them.
nlohmann::json import_options_json(const ImportOptions& o);

}  // namespace gllm
