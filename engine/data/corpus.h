// Corpus readers: the tagged Brown corpus (word/TAG tokens, sentences, paragraphs, documents,
// genre) with a detokenizer that gives the LM natural text, and plain UTF-8 text (file or folder).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gllm {

struct DataConfig;

// One Brown token as the file spells it: "jury/nn" gives word "jury", tag "nn".
struct TaggedWord {
  std::string word;
  std::string tag;  // full Brown tag, lower case, e.g. "nn-tl", "bedz*", "ppss+md", "fw-nn"
  uint32_t begin = 0, end = 0;  // byte span of the word inside Document::text (after detokenizing)
};

struct Sentence {
  std::vector<TaggedWord> words;
  int paragraph = 0;  // index of the paragraph within its document
  int line = 0;       // 1-based line in the source file
};

struct Document {
  std::string name;   // Brown: file name ("ca01"); text: path relative to the corpus root (+ "#k")
  std::string genre;  // Brown: the file name's second letter "a".."r"; text: ""
  std::string text;   // the natural text the LM sees (Brown: detokenized, paragraphs split by "\n")
  std::vector<Sentence> sentences;  // Brown only; empty for plain text
  int paragraphs = 0;
};

struct Corpus {
  std::string kind;    // "brown" | "text"
  std::string source;  // folder or file it was read from
  std::vector<Document> documents;

  size_t words() const;  // Brown: tagged tokens; text: whitespace-separated words
  size_t bytes() const;  // Σ UTF-8 bytes of Document::text
  size_t sentences() const;
  // sha512 (hex) of kind, names and texts: keys the tokenizer and token cache.
  std::string hash() const;
};

// Reads ca01 … cr09 of a Brown folder (Form C): paragraphs are blocks separated by blank lines,
// sentences are the non-empty lines of a block, tokens are "word/tag". Throws gllm::Error naming
// file and line on unreadable, non-UTF-8, malformed or empty input.
Corpus read_brown_corpus(const std::string& dir);
// One Brown file's text (`data`, valid UTF-8) as a Document named `name`; errors name `path`.
Document parse_brown_file(std::string_view data, const std::string& path, const std::string& name);
// A Brown file's name: ca01 … cr09.
bool is_brown_file_name(const std::string& name);

// Plain UTF-8 text. A folder: every regular file below it (sorted by path) is one document.
// One file: documents are separated by one or more blank lines. Refuses unreadable, non-UTF-8
// (naming file and line) and empty input.
Corpus read_text_corpus(const std::string& path);

// The corpus a DataConfig names (brown: corpus_path or the data cache's fetched copy).
Corpus read_corpus(const DataConfig& cfg);

// The Brown folder data.corpus = brown names: corpus_path, or the data cache's copy, which must be
// present and equal to the verified package. Throws gllm::Error with the fix (`gllm data fetch`).
std::string checked_brown_dir(const DataConfig& cfg);

// Brown detokenizer: joins Brown words into natural English ("`` Only '' ." → "\"Only\"."),
// filling each word's begin/end inside the returned text.
std::string detokenize_brown(std::vector<TaggedWord>& words);

// Index of the first invalid UTF-8 byte in `s`, or npos when valid.
size_t find_invalid_utf8(std::string_view s);

}  // namespace gllm
