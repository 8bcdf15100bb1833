// The trainer's view of a prepared dataset (data.corpus = "prepared"): its manifest and shards
// checked, its tokenizer loaded, its llm.c shards memory-mapped and cut at BOS into documents.
#pragma once
#include <functional>
#include <string>

#include "engine/data/dataset.h"

namespace gllm {

struct DataConfig;

// Opens the dataset in cfg.corpus_path as a Dataset: the shards of train, val and held-out are
// memory-mapped (the dataset may be many times RAM; a document that crosses a shard boundary is
// the one thing copied), every shard's size, header and SHA-512 is checked against the manifest
// first, and the splits are the manifest's. Throws gllm::Error naming the problem and the fix
// (not a prepared dataset, a shard changed since, data.vocab_size not the dataset's, a token id
// outside the tokenizer's vocabulary).
Dataset open_prepared_dataset(const DataConfig& cfg,
                              const std::function<void(const std::string&)>& log = {});

// The dataset the data settings name, whichever kind: a prepared dataset (open_prepared_dataset),
// the Brown corpus as the prepared dataset in the data cache (prepared_brown_config), or a text
// corpus with its tokenizer and token cache (open_dataset).
Dataset open_configured_dataset(const DataConfig& cfg,
                                const std::function<void(const std::string&)>& log = {});

}  // namespace gllm
