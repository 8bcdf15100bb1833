// DataConfig: which corpus, which tokenizer, and how documents split into train / val / held-out.
// Part of RunConfig; torch-free.
#pragma once
#include <cstdint>
#include <string>

#include "engine/io/config_schema.h"

namespace gllm {

struct DataConfig {
  std::string corpus = "brown";  // brown | text | prepared
  std::string corpus_path;  // text: a UTF-8 file or folder; prepared: the dataset folder; brown:
                            // a Brown folder, empty = the data cache's (prepared once into
                            // <data cache>/datasets/brown-…, see engine/dataset/brown_dataset.h)
  int vocab_size = 8192;    // tokenizer vocabulary (BPE, byte fallback, 4 specials)
  double val_fraction = 0.05;      // brown: of the tokens (content-hash split); text: documents
  double heldout_fraction = 0.05;  // as val_fraction
  int split_seed = 1234;           // text only: the seeded document split
  // Training windows: documents (a row starts at a document's BOS, best-fit packed) or
  // contiguous (consecutive windows of the token stream across documents, as llm.c reads).
  std::string windows = "documents";

  static const Schema<DataConfig>& schema();
};

}  // namespace gllm
