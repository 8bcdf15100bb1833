// data.corpus = "brown" as a prepared dataset like any other: the Brown folder prepared once into
// the data cache (llm.c shards, manifest, POS tags kept), then opened as data.corpus = prepared.
#pragma once
#include <functional>
#include <string>

#include "engine/config/data_config.h"

namespace gllm {

// Where the Brown dataset of these settings lives: <data cache>/datasets/brown-<folder
// key>-v<vocab> -val<fraction>-heldout<fraction> (the folder key hashes the Brown folder's absolute
// path).
std::string brown_dataset_dir(const DataConfig& cfg);

// Prepares the Brown corpus of `cfg` (its folder checked as checked_brown_dir does) into
// brown_dataset_dir(cfg) when it is not there yet: format brown, vocabulary data.vocab_size,
// validation and held-out data.val_fraction / data.heldout_fraction of its tokens, split by
// content hash. Processes that ask at once wait for the one preparing (a lock beside the folder).
// A cached dataset whose Brown files changed since is prepared again. Returns settings that name
// it as data.corpus = prepared (corpus_path the dataset, the rest as given).
DataConfig prepared_brown_config(const DataConfig& cfg,
                                 const std::function<void(const std::string&)>& log = {});

}  // namespace gllm
