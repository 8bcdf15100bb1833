// open_prepared_dataset: manifest → shard check → tokenizer → one document table over the mapped
// shards of the three splits (train first, then val, then held-out) → the Dataset the trainer uses.
#include "engine/dataset/prepared_data.h"

#include <memory>
#include <vector>

#include "engine/config/data_config.h"
#include "engine/dataset/brown_dataset.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/shard_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"

namespace gllm {
namespace {

// Cuts one split's shards into documents at each BOS; appends views to `views` and returns how
// many. A document still open at a shard's end (it runs on into the next shard, or it is the
// split's last) is copied into a vector of its own, which `owners` keeps alive.
size_t split_views(const std::vector<std::string>& paths, int32_t bos,
                   std::vector<TokenShard::View>& views,
                   std::vector<std::shared_ptr<const void>>& owners) {
  const size_t first = views.size();
  std::shared_ptr<std::vector<uint16_t>> open_doc;  // a document crossing a shard boundary
  const MappedShard* cur = nullptr;
  uint64_t start = 0;  // in `cur`: the first token of the open document (after its BOS)
  bool doc_open = false;
  auto close_doc = [&](uint64_t end) {
    if (!doc_open) return;
    if (open_doc) {
      open_doc->insert(open_doc->end(), cur->tokens() + start, cur->tokens() + end);
      views.push_back({open_doc->data(), open_doc->size()});
      owners.push_back(open_doc);
      open_doc.reset();
    } else {
      views.push_back({cur->tokens() + start, size_t(end - start)});
    }
    doc_open = false;
  };
  for (const auto& p : paths) {
    auto shard = std::make_shared<MappedShard>(p);
    owners.push_back(shard);
    cur = shard.get();
    start = 0;
    const uint16_t* t = shard->tokens();
    const uint64_t n = shard->size();
    if (views.size() == first && !doc_open && n > 0 && t[0] != bos)
      throw Error("shard " + p + " does not start with the BOS token (id " + std::to_string(bos) +
                  "), so its documents cannot be found; make it with `gllm data prepare`");
    for (uint64_t i = 0; i < n; ++i) {
      if (t[i] != bos) continue;
      close_doc(i);
      doc_open = true;
      start = i + 1;
    }
    if (doc_open) {  // carries on into the next shard (or ends with the split)
      if (!open_doc) open_doc = std::make_shared<std::vector<uint16_t>>();
      open_doc->insert(open_doc->end(), t + start, t + n);
      start = n;
    }
  }
  if (doc_open) {
    // The last document of the split: its tokens are all in open_doc already.
    views.push_back({open_doc->data(), open_doc->size()});
    owners.push_back(open_doc);
  }
  return views.size() - first;
}

}  // namespace

Dataset open_prepared_dataset(const DataConfig& cfg,
                              const std::function<void(const std::string&)>& log) {
  const std::string& dir = cfg.corpus_path;
  if (dir.empty())
    throw Error(
        "data.corpus = prepared needs data.corpus_path, the folder `gllm data prepare` "
        "wrote");
  nlohmann::json m = read_manifest(dir);
  if (log) log("checking the shards of " + dir + " against its manifest (SHA-512)");
  require_dataset_shards_whole(dir, m);
  Dataset ds;
  // A dataset imported from shards made elsewhere carries the model that made them.
  const bool foreign = m.at("tokenizer").value("layout", std::string("gllm")) == "sentencepiece";
  ds.tokenizer = foreign ? Tokenizer::load_sentencepiece(join_path(dir, "tokenizer.model"))
                         : Tokenizer::load(join_path(dir, "tokenizer.model"));
  const std::string want_hash = m.at("tokenizer").value("sha512", std::string());
  if (ds.tokenizer.hash() != want_hash)
    throw Error(join_path(dir, "tokenizer.model") +
                " is not the tokenizer its manifest records (SHA-512 differs); restore it, or "
                "prepare the dataset again");
  if (cfg.vocab_size != ds.tokenizer.vocab_size())
    throw Error("data.vocab_size is " + std::to_string(cfg.vocab_size) + " but the dataset " + dir +
                " was prepared with a vocabulary of " + std::to_string(ds.tokenizer.vocab_size()) +
                "; set data.vocab_size to " + std::to_string(ds.tokenizer.vocab_size()));
  std::vector<TokenShard::View> views;
  std::vector<std::shared_ptr<const void>> owners;
  const int32_t bos = ds.tokenizer.bos_id();
  std::vector<uint32_t>* lists[] = {&ds.splits.train, &ds.splits.val, &ds.splits.heldout};
  const char* names[] = {"train", "val", "heldout"};
  for (int s = 0; s < 3; ++s) {
    const size_t begin = views.size();
    const size_t n = split_views(dataset_shard_paths(dir, m, names[s]), bos, views, owners);
    const uint64_t want = m["splits"][names[s]].value("documents", uint64_t(0));
    if (n != want)
      throw Error("dataset " + dir + ": the " + names[s] + " shards hold " + std::to_string(n) +
                  " documents (BOS tokens), the manifest says " + std::to_string(want) +
                  "; prepare the dataset again");
    if (begin + n > 0xffffffffull)
      throw Error("dataset " + dir + " holds more than 2^32 documents; split it into several");
    for (size_t i = begin; i < begin + n; ++i) lists[s]->push_back(static_cast<uint32_t>(i));
    if (lists[s]->empty())
      throw Error("dataset " + dir + " has an empty " + names[s] +
                  " split; prepare it again with a larger corpus or smaller --val-tokens / "
                  "--heldout-tokens");
  }
  ds.shard = TokenShard::over_views(std::move(views), std::move(owners), dir);
  if (ds.shard->max_id() >= ds.tokenizer.vocab_size())
    throw Error("dataset " + dir + " holds token id " + std::to_string(ds.shard->max_id()) +
                ", outside its tokenizer's vocabulary of " +
                std::to_string(ds.tokenizer.vocab_size()) + "; prepare it again");
  ds.cache_dir = dir;
  ds.info = {{"corpus", "prepared"},
             {"dataset", dir},
             {"documents", ds.shard->num_documents()},
             {"tokens", ds.shard->num_tokens()},
             {"vocab_size", ds.tokenizer.vocab_size()},
             {"tokenizer_hash", ds.tokenizer.hash()},
             {"bytes_per_token",
              {{"train", m["splits"]["train"].value("bytes_per_token", 0.0)},
               {"val", m["splits"]["val"].value("bytes_per_token", 0.0)},
               {"heldout", m["splits"]["heldout"].value("bytes_per_token", 0.0)}}}};
  if (log)
    log("prepared dataset " + dir + ": " + std::to_string(ds.splits.train.size()) + " train, " +
        std::to_string(ds.splits.val.size()) + " val, " + std::to_string(ds.splits.heldout.size()) +
        " held-out documents, " + std::to_string(ds.shard->num_tokens()) + " tokens (BOS apart)");
  return ds;
}

Dataset open_configured_dataset(const DataConfig& cfg,
                                const std::function<void(const std::string&)>& log) {
  if (cfg.corpus == "brown") return open_prepared_dataset(prepared_brown_config(cfg, log), log);
  return cfg.corpus == "prepared" ? open_prepared_dataset(cfg, log) : open_dataset(cfg, log);
}

}  // namespace gllm
