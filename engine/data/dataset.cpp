// open_dataset: corpus → tokenizer (trained once, cached) → token cache (rebuilt only when an input
// changes) → document splits; plus loaders over a split.
#include "engine/data/dataset.h"

#include "engine/config/data_config.h"
#include "engine/data/corpus.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"

namespace gllm {

namespace {

// Empty when tokenizer.json says this model was trained on this corpus for this vocabulary; else
// why not. A cache without tokenizer.json (older versions) is accepted when the model has the
// vocabulary size asked for.
std::string tokenizer_mismatch(const std::string& side, const Tokenizer& t,
                               const std::string& corpus_hash, int requested_vocab) {
  if (!file_exists(side))
    return t.vocab_size() == requested_vocab
               ? std::string()
               : "it has " + std::to_string(t.vocab_size()) + " ids, not the " +
                     std::to_string(requested_vocab) + " asked for";
  nlohmann::json j;
  try {
    j = read_json_file(side, "", JsonLimits{1 << 20, 4});
  } catch (const Error& e) {
    return e.what();
  }
  if (json_string_or(j, "model_sha512", "") != t.hash())
    return "tokenizer.model was replaced after training";
  if (json_string_or(j, "corpus_hash", "") != corpus_hash)
    return "it was trained on another corpus";
  if (json_int_or(j, "requested_vocab", -1) != requested_vocab)
    return "it was trained for vocab_size " + std::to_string(json_int_or(j, "requested_vocab", -1));
  return "";
}

}  // namespace

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
  std::string model_side = join_path(ds.cache_dir, "tokenizer.json");
  bool have_model = false;
  if (file_exists(model)) {
    try {
      ds.tokenizer = Tokenizer::load(model);
      const std::string why = tokenizer_mismatch(model_side, ds.tokenizer, chash, cfg.vocab_size);
      if (why.empty()) {
        have_model = true;
      } else {
        say("tokenizer " + model + " does not belong here (" + why + "); retraining it");
      }
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
  if (!file_exists(model_side) ||
      !tokenizer_mismatch(model_side, ds.tokenizer, chash, cfg.vocab_size).empty())
    write_file_atomic(model_side, nlohmann::json{{"format", 1},
                                                 {"corpus_hash", chash},
                                                 {"requested_vocab", cfg.vocab_size},
                                                 {"vocab_size", ds.tokenizer.vocab_size()},
                                                 {"model_sha512", ds.tokenizer.hash()}}
                                          .dump(1) +
                                      "\n");
  bool rebuild = !file_exists(bin) || !token_cache_current(side, chash, ds.tokenizer.hash());
  if (!rebuild) {
    const std::string why = token_cache_mismatch(bin, side);
    if (!why.empty()) {
      say("token cache changed after it was written (" + why + "); rebuilding it");
      rebuild = true;
    }
  }
  if (rebuild) {
    say("tokenizing the corpus into " + bin);
    write_token_cache(corpus, ds.tokenizer, bin, side);
    ds.rebuilt = true;
  }
  // The shard must hold one entry per document and ids the tokenizer knows; a cache that does not
  // (both files edited consistently) is rebuilt once.
  for (int attempt = 0;; ++attempt) {
    ds.shard = TokenShard::open(bin);
    std::string why;
    if (ds.shard->num_documents() != corpus.documents.size())
      why = "it holds " + std::to_string(ds.shard->num_documents()) + " documents, the corpus " +
            std::to_string(corpus.documents.size());
    else if (ds.shard->num_tokens() > 0 && ds.shard->max_id() >= ds.tokenizer.vocab_size())
      why = "it holds token id " + std::to_string(ds.shard->max_id()) +
            " but the tokenizer has only " + std::to_string(ds.tokenizer.vocab_size()) + " ids";
    if (why.empty()) break;
    if (attempt > 0)
      throw Error("token cache " + bin + " does not match the corpus (" + why + "); delete " +
                  ds.cache_dir + " and retry");
    say("token cache " + bin + " does not match (" + why + "); rebuilding it");
    ds.shard.reset();
    write_token_cache(corpus, ds.tokenizer, bin, side);
    ds.rebuilt = true;
  }
  ds.info = read_json_file(side, "delete " + ds.cache_dir + " so that it is rebuilt",
                           JsonLimits{64ull << 20, 8});
  if (!ds.info.is_object())
    throw Error(side + " is not a JSON object; delete " + ds.cache_dir + " so that it is rebuilt");
  ds.info.erase("names");
  ds.info["cache_dir"] = ds.cache_dir;
  ds.splits = split_documents(corpus.documents.size(), cfg.val_fraction, cfg.heldout_fraction,
                              static_cast<uint64_t>(cfg.split_seed));
  return ds;
}

PackingLoader Dataset::loader(const std::string& split, int64_t batch_rows, int64_t T,
                              PackingLoader::Mode mode, uint64_t seed,
                              PackingLoader::Windows windows) const {
  return PackingLoader(shard, splits.get(split), batch_rows, T, mode, seed, tokenizer.bos_id(),
                       tokenizer.pad_id(), 1000, windows);
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
