// Schema of DataConfig; fractions are checked so train, validation and held-out are all non-empty.
// The split itself lives in engine/data.
#include "engine/config/data_config.h"

namespace gllm {

const Schema<DataConfig>& DataConfig::schema() {
  static const Schema<DataConfig> s = [] {
    Schema<DataConfig> s;
    s.choice("corpus", &DataConfig::corpus, {"brown", "text", "prepared"},
             "Corpus: the tagged Brown corpus (prepared once into a dataset in the data cache, its "
             "POS tags kept), plain UTF-8 text, or a dataset made by `gllm data prepare` (its own "
             "tokenizer and splits)")
        .text("corpus_path", &DataConfig::corpus_path,
              "Text file or folder (corpus = text); the dataset folder (corpus = prepared); "
              "Brown: a Brown folder, empty = the data cache's (either is prepared once into a "
              "dataset in the data cache)")
        .integer("vocab_size", &DataConfig::vocab_size, 2, 65536,
                 "BPE vocabulary size (brown, text: 4 specials + 256 bytes + at least 1 merge, "
                 "at most 65,535; prepared: the dataset's, whatever model made its shards)")
        .real("val_fraction", &DataConfig::val_fraction, 0, 0.5,
              "Validation split: this fraction of the tokens, whole documents chosen by content "
              "hash (brown), or of the documents, drawn with split_seed (text)")
        .real("heldout_fraction", &DataConfig::heldout_fraction, 0, 0.5,
              "Held-out split for final evaluation: this fraction of the tokens (brown) or of the "
              "documents (text), chosen as the validation split is")
        .integer("split_seed", &DataConfig::split_seed, 0, 2147483647,
                 "Seed of a text corpus's document split (brown and prepared datasets split by "
                 "content hash)")
        .choice("windows", &DataConfig::windows, {"documents", "contiguous"},
                "Training windows: documents (each row starts at a document's BOS, documents "
                "best-fit packed) or contiguous (consecutive windows of the token stream across "
                "document boundaries, as llm.c and modded-nanogpt read their shards); evaluation "
                "always scores whole documents");
    s.check([](const DataConfig& d, const std::string& path) {
      if (d.val_fraction + d.heldout_fraction >= 0.9)
        throw ConfigError(
            path.empty() ? "val_fraction" : path + ".val_fraction",
            "val_fraction + heldout_fraction must stay below 0.9 so training has data");
      if (d.corpus == "text" && d.corpus_path.empty())
        throw ConfigError(path.empty() ? "corpus_path" : path + ".corpus_path",
                          "corpus = text needs corpus_path (a UTF-8 file or folder)");
      if (d.corpus != "prepared" && (d.vocab_size < 261 || d.vocab_size > 65535))
        throw ConfigError(path.empty() ? "vocab_size" : path + ".vocab_size",
                          std::to_string(d.vocab_size) +
                              " is out of range; the workbench's BPE "
                              "tokenizer needs [261, 65535] (4 specials + 256 bytes + at least 1 "
                              "merge, uint16 ids)");
      if (d.corpus == "prepared" && d.corpus_path.empty())
        throw ConfigError(path.empty() ? "corpus_path" : path + ".corpus_path",
                          "corpus = prepared needs corpus_path (a folder made by `gllm data "
                          "prepare INPUT… --out DATASET`)");
    });
    return s;
  }();
  return s;
}

}  // namespace gllm
