// open_dataset: corpus → tokenizer (trained once, cached) → token cache (rebuilt only when an input
// changes) → document splits; plus loaders over a split.
#include "engine/data/dataset.h"

#include "engine/config/data_config.h"
#include "engine/data/corpus.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"

namespace gllm {

std::string token_cache_dir(const std::string& corpus_kind, const std::string& corpus_hash,
                            int vocab_size) {
  return join_path(data_cache_dir(), "tokens/" + corpus_kind + "-" + corpus_hash.substr(0, 16) +
                                         "-v" + std::to_string(vocab_size));
}

Dataset open_dataset(const DataConfig& cfg, const std::function<void(const std::string&)>& log) {
  return open_dataset(cfg, read_corpus(cfg), log);
}

Dataset open_dataset(const DataConfig& cfg, const Corpus& corpus,
                     const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  std::string chash = corpus.hash();
  Dataset ds;
  ds.cache_dir = token_cache_dir(corpus.kind, chash, cfg.vocab_size);
  make_directories(ds.cache_dir);
  std::string model = join_path(ds.cache_dir, "tokenizer.model");
  std::string bin = join_path(ds.cache_dir, "tokens.bin");
  std::string side = join_path(ds.cache_dir, "tokens.json");
  bool have_model = false;
  if (file_exists(model)) {
    try {
      ds.tokenizer = Tokenizer::load(model);
      have_model = true;
    } catch (const Error& e) {
      say(std::string("tokenizer model unusable, retraining: ") + e.what());
    }
  }
  if (!have_model) {
    say("training BPE tokenizer (vocab " + std::to_string(cfg.vocab_size) + ") on " +
        std::to_string(corpus.documents.size()) + " documents");
    ds.tokenizer = Tokenizer::train(corpus, cfg.vocab_size, model);
    ds.rebuilt = true;
  }
  if (!file_exists(bin) || !token_cache_current(side, chash, ds.tokenizer.hash())) {
    say("tokenizing the corpus into " + bin);
    write_token_cache(corpus, ds.tokenizer, bin, side);
    ds.rebuilt = true;
  }
  ds.info = nlohmann::json::parse(read_file(side));
  ds.info.erase("names");
  ds.info["cache_dir"] = ds.cache_dir;
  ds.shard = TokenShard::open(bin);
  if (ds.shard->num_documents() != corpus.documents.size())
    throw Error("token cache " + bin + " does not match the corpus; delete " + ds.cache_dir + " and retry");
  ds.splits = split_documents(corpus.documents.size(), cfg.val_fraction, cfg.heldout_fraction,
                              static_cast<uint64_t>(cfg.split_seed));
  return ds;
}

PackingLoader Dataset::loader(const std::string& split, int64_t batch_rows, int64_t T,
                              PackingLoader::Mode mode, uint64_t seed) const {
  return PackingLoader(shard, splits.get(split), batch_rows, T, mode, seed, tokenizer.bos_id(),
                       tokenizer.pad_id());
}

int64_t Dataset::split_bytes(const std::string& split) const {
  const auto& tb = tokenizer.token_bytes();
  int64_t n = 0;
  for (uint32_t d : splits.get(split)) {
    auto v = shard->document(d);
    for (size_t i = 0; i < v.size; ++i) n += tb[v.data[i]];
  }
  return n;
}

}  // namespace gllm
