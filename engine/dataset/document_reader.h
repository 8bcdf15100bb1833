// Documents out of one input file, streamed: plain text (a whole file, or blank-line-separated
// paragraphs) or JSON Lines (one object per line, a chosen string field), with the bad-input rules.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "engine/dataset/inputs.h"

namespace gllm {

class Sha512;
struct Document;

struct DocumentReadOptions {
  DocumentUnit unit = DocumentUnit::Auto;
  std::string field = "text";            // JSON Lines: the string field that holds the document
  bool replace_invalid_utf8 = false;     // false: refuse, naming file, line and byte offset
  bool skip_bad_lines = false;           // JSON Lines: skip (and count) a line that is not usable
  size_t max_document_bytes = 64 << 20;  // a longer document is refused (memory stays bounded)
};

// What reading found besides the documents it handed on; summed over files and passes' first.
struct DocumentReadCounts {
  uint64_t documents = 0;        // handed on
  uint64_t bytes = 0;            // their UTF-8 bytes
  uint64_t empty_documents = 0;  // blank (whitespace only) documents, not handed on
  uint64_t replaced_bytes = 0;   // invalid UTF-8 bytes replaced by U+FFFD
  uint64_t skipped_lines = 0;    // JSON Lines lines skipped (--skip-bad-lines)
  std::string first_skip;        // why the first skipped line was skipped (file:line: …)
  void add(const DocumentReadCounts& o);
};

// Plain text units: a file found in a folder is one document under Auto; a file given by name
// splits into documents at blank lines (lines of spaces, tabs or CR only), whose lines are joined
// by "\n" — the same rule as the "text" corpus of engine/data/corpus.
DocumentUnit effective_unit(const InputFile& f, DocumentUnit unit);

// Reads every document of `f` in order and calls `on_document` with its text (which it may move
// from). `raw_digest` (optional) receives the file's raw bytes. Throws gllm::Error naming the file,
// the line and the byte offset (of the decompressed stream) for invalid UTF-8 (unless replaced),
// a JSON Lines line that is not a JSON object with the string field (unless skipped), a truncated
// or corrupt gzip/zstd stream, and a document longer than max_document_bytes.
void read_documents(const InputFile& f, const DocumentReadOptions& options,
                    DocumentReadCounts& counts, Sha512* raw_digest,
                    const std::function<void(std::string& text)>& on_document);

// A Brown Form C input (format Brown) parsed whole: words, tags and their byte spans in the text
// read_documents gives for it, under the same rules and counts (a blank one is counted, not
// handed on).
void read_brown_document(const InputFile& f, const DocumentReadOptions& options,
                         DocumentReadCounts& counts,
                         const std::function<void(Document&)>& on_document);

// Replaces each invalid UTF-8 byte of `s` by U+FFFD; returns how many were replaced.
uint64_t replace_invalid_utf8(std::string& s);

}  // namespace gllm
