// The Brown corpus as a prepared dataset: its POS tags kept beside the shards (brown_tags.jsonl),
// and the tagged corpus the profiles and the probe read, from the Brown folder or such a dataset.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/corpus.h"
#include "engine/data/dataset.h"
#include "engine/dataset/document_reader.h"

namespace gllm {

struct DataConfig;

constexpr const char* kBrownTagsFile = "brown_tags.jsonl";

// Writes <out_dir>/brown_tags.jsonl atomically: one line per Brown document of `inputs` in input
// order — its name, genre, paragraphs, the content hash that placed it in its split, its bytes,
// and its sentences as [paragraph, line, [[tag, begin, end(, word)], …]] (byte spans inside the
// document's text; the Brown spelling only where the text spells the word otherwise). Returns the
// manifest's "annotations" entry (file, SHA-512, counts).
nlohmann::json write_brown_tags(const std::vector<InputFile>& inputs,
                                const DocumentReadOptions& read, const std::string& out_dir);

// The manifest's "annotations" entry of the POS tags (file, SHA-512, documents, words); an empty
// object when the dataset keeps none.
nlohmann::json brown_tags_entry(const nlohmann::json& manifest);

// "" when the dataset keeps no tags or its tags file is the one its manifest records (then
// `text`, when given, receives the file); else what is wrong with it and the fix.
std::string brown_tags_problem(const std::string& dir, const nlohmann::json& manifest,
                               std::string* text = nullptr);

// The tagged corpus of a dataset prepared with --format brown, aligned with `ds`: document i of
// the result is the dataset's document i (its text decoded from the shards), so ds.splits index
// both. Throws gllm::Error naming the problem and the fix (no tags kept, the tags file changed or
// damaged, a document without its tags).
Corpus read_brown_tags(const Dataset& ds, const nlohmann::json& manifest, const std::string& dir);

// The tagged Brown corpus and its dataset, whichever way the data settings name it: data.corpus =
// brown the data cache's Brown dataset (prepared_brown_config), data.corpus = prepared a dataset
// prepared from the Brown corpus (--format brown), each with the tags it keeps. Anything else is
// refused, naming why.
struct TaggedData {
  Corpus corpus;  // corpus.documents[i] is ds's document i
  Dataset ds;
};
TaggedData open_tagged_data(const DataConfig& cfg,
                            const std::function<void(const std::string&)>& log = {});

}  // namespace gllm
