// brown_tags.jsonl: the POS tags of a dataset prepared from the Brown corpus, written beside its
// shards and read back aligned with the shards' documents (matched by the content hash and bytes).
#include "engine/dataset/brown_tags.h"

#include <unordered_map>

#include "engine/config/data_config.h"
#include "engine/dataset/brown_dataset.h"
#include "engine/dataset/content_hash.h"
#include "engine/dataset/dataset_manifest.h"
#include "engine/dataset/prepared_data.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/sha512.h"

namespace gllm {

namespace {

constexpr const char* kTagsKey = "brown_pos_tags";

std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

nlohmann::json document_line(const Document& d) {
  nlohmann::json sentences = nlohmann::json::array();
  for (const Sentence& s : d.sentences) {
    nlohmann::json words = nlohmann::json::array();
    for (const TaggedWord& w : s.words) {
      // [tag, begin, end], and the Brown spelling only where the text spells it otherwise (the
      // detokenizer turns `` into ", for one): the text holds every other word already.
      nlohmann::json r = {w.tag, w.begin, w.end};
      if (d.text.compare(w.begin, w.end - w.begin, w.word) != 0) r.push_back(w.word);
      words.push_back(std::move(r));
    }
    sentences.push_back({s.paragraph, s.line, std::move(words)});
  }
  return {{"name", d.name},
          {"genre", d.genre},
          {"paragraphs", d.paragraphs},
          {"split_hash", hex64(content_hash64(d.text, kSplitHashKey))},
          {"bytes", d.text.size()},
          {"sentences", std::move(sentences)}};
}

// One record of the tags file back as a Document without its text; throws naming file and line.
Document document_from_json(const nlohmann::json& j, const std::string& where) {
  Document d;
  const uint64_t bytes = json_int_or(j, "bytes", 0) < 0 ? 0 : uint64_t(json_int_or(j, "bytes", 0));
  try {
    d.name = j.at("name").get<std::string>();
    d.genre = j.at("genre").get<std::string>();
    d.paragraphs = j.at("paragraphs").get<int>();
    for (const auto& s : j.at("sentences")) {
      Sentence sentence;
      sentence.paragraph = s.at(0).get<int>();
      sentence.line = s.at(1).get<int>();
      for (const auto& w : s.at(2)) {
        TaggedWord word;
        word.tag = w.at(0).get<std::string>();
        word.begin = w.at(1).get<uint32_t>();
        word.end = w.at(2).get<uint32_t>();
        if (word.end < word.begin || word.end > bytes)
          throw Error(where + ": a word's span [" + std::to_string(word.begin) + ", " +
                      std::to_string(word.end) + ") lies outside its document of " +
                      std::to_string(bytes) + " bytes; prepare the dataset again");
        if (w.size() > 3) word.word = w.at(3).get<std::string>();
        sentence.words.push_back(std::move(word));
      }
      d.sentences.push_back(std::move(sentence));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not a Brown tags record (" + e.what() +
                "); the tags file is damaged — prepare the dataset again");
  }
  return d;
}

}  // namespace

nlohmann::json write_brown_tags(const std::vector<InputFile>& inputs,
                                const DocumentReadOptions& read, const std::string& out_dir) {
  std::string text;
  DocumentReadCounts counts;
  uint64_t words = 0, sentences = 0;
  for (const InputFile& f : inputs)
    read_brown_document(f, read, counts, [&](Document& d) {
      sentences += d.sentences.size();
      for (const Sentence& s : d.sentences) words += s.words.size();
      text += json_text(document_line(d)) + "\n";
    });
  const std::string path = join_path(out_dir, kBrownTagsFile);
  write_file_atomic(path, text);
  const auto digest = sha512(text);
  return {{kTagsKey,
           {{"file", kBrownTagsFile},
            {"sha512", to_hex(digest.data(), digest.size())},
            {"bytes", text.size()},
            {"documents", counts.documents},
            {"sentences", sentences},
            {"words", words},
            {"rule",
             "one line per Brown document in input order: name, genre, paragraphs, split_hash "
             "(content_hash64 of its text), bytes, sentences as [paragraph, line, [[tag, begin, "
             "end(, word)], …]] with byte spans inside the document's text, the word's own "
             "spelling only where the text spells it otherwise"}}}};
}

nlohmann::json brown_tags_entry(const nlohmann::json& manifest) {
  const auto a = manifest.value("annotations", nlohmann::json::object());
  if (!a.is_object() || !a.contains(kTagsKey) || !a[kTagsKey].is_object())
    return nlohmann::json::object();
  return a[kTagsKey];
}

std::string brown_tags_problem(const std::string& dir, const nlohmann::json& manifest,
                               std::string* text) {
  const nlohmann::json entry = brown_tags_entry(manifest);
  if (entry.empty()) return "";
  const std::string path = join_path(dir, json_string_or(entry, "file", kBrownTagsFile));
  if (!file_exists(path))
    return path + " is missing (the manifest lists it); prepare the dataset again";
  std::string body = read_file(path);
  const auto digest = sha512(body);
  if (to_hex(digest.data(), digest.size()) != json_string_or(entry, "sha512", ""))
    return path +
           " is not the tags file the manifest records (SHA-512 differs); restore it, or prepare "
           "the dataset again";
  if (text) *text = std::move(body);
  return "";
}

Corpus read_brown_tags(const Dataset& ds, const nlohmann::json& manifest, const std::string& dir) {
  const nlohmann::json entry = brown_tags_entry(manifest);
  if (entry.empty())
    throw Error("dataset " + dir +
                " keeps no POS tags: only a dataset prepared from the Brown corpus with --format "
                "brown does (gllm data prepare BROWN_FOLDER --format brown --out DATASET); the "
                "profiles and the probe need them");
  const std::string path = join_path(dir, json_string_or(entry, "file", kBrownTagsFile));
  std::string text;
  if (const std::string why = brown_tags_problem(dir, manifest, &text); !why.empty())
    throw Error(why);
  // Tag records by (split hash, bytes); equal texts share a hash, so a key may hold several.
  std::unordered_map<std::string, std::vector<Document>> by_key;
  size_t records = 0, line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    ++line_no;
    if (end > at) {
      const std::string line = text.substr(at, end - at);
      const std::string where = path + ":" + std::to_string(line_no);
      const nlohmann::json record =
          parse_json(line, where, "prepare the dataset again", JsonLimits{64ull << 20, 8});
      if (!record.is_object())
        throw Error(where + ": not a Brown tags record; prepare the dataset again");
      const std::string key = json_string_or(record, "split_hash", "") + "/" +
                              std::to_string(json_int_or(record, "bytes", -1));
      by_key[key].push_back(document_from_json(record, where));
      ++records;
    }
    at = end + 1;
  }
  Corpus corpus;
  corpus.kind = "brown";
  corpus.source = dir;
  const size_t n = ds.shard->num_documents();
  if (records != n)
    throw Error(path + " holds " + std::to_string(records) + " tagged documents but the dataset " +
                std::to_string(n) + "; prepare the dataset again");
  corpus.documents.resize(n);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < n; ++i) {
    const TokenShard::View v = ds.shard->document(i);
    ids.assign(v.data, v.data + v.size);
    std::string doc_text = ds.tokenizer.decode(ids);
    const std::string key =
        hex64(content_hash64(doc_text, kSplitHashKey)) + "/" + std::to_string(doc_text.size());
    auto it = by_key.find(key);
    if (it == by_key.end() || it->second.empty())
      throw Error("dataset " + dir + ": document " + std::to_string(i) +
                  " of its shards has no record in " + path + "; prepare the dataset again");
    Document& d = corpus.documents[i];
    d = std::move(it->second.back());
    it->second.pop_back();
    d.text = std::move(doc_text);
    for (Sentence& s : d.sentences)
      for (TaggedWord& w : s.words)
        if (w.word.empty()) w.word = d.text.substr(w.begin, w.end - w.begin);
  }
  return corpus;
}

TaggedData open_tagged_data(const DataConfig& cfg,
                            const std::function<void(const std::string&)>& log) {
  if (cfg.corpus != "prepared" && cfg.corpus != "brown")
    throw Error(
        "the profiles and the probe need the tagged Brown corpus: data.corpus = brown, or a "
        "dataset prepared from it (data.corpus = prepared; gllm data prepare BROWN_FOLDER "
        "--format brown --out DATASET), not '" +
        cfg.corpus + "'");
  const DataConfig prepared = cfg.corpus == "brown" ? prepared_brown_config(cfg, log) : cfg;
  TaggedData out;
  out.ds = open_prepared_dataset(prepared, log);
  out.corpus = read_brown_tags(out.ds, read_manifest(prepared.corpus_path), prepared.corpus_path);
  return out;
}

}  // namespace gllm
