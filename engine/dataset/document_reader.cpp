// read_documents: a line reader over ByteStream (offsets and line numbers of the decompressed
// stream), the text units, JSON Lines field extraction, and the UTF-8 refuse-or-replace rule.
#include "engine/dataset/document_reader.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/data/corpus.h"
#include "engine/dataset/byte_stream.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"

namespace gllm {

void DocumentReadCounts::add(const DocumentReadCounts& o) {
  documents += o.documents;
  bytes += o.bytes;
  empty_documents += o.empty_documents;
  replaced_bytes += o.replaced_bytes;
  skipped_lines += o.skipped_lines;
  if (first_skip.empty()) first_skip = o.first_skip;
}

DocumentUnit effective_unit(const InputFile& f, DocumentUnit unit) {
  if (unit != DocumentUnit::Auto) return unit;
  return f.in_folder ? DocumentUnit::File : DocumentUnit::Paragraphs;
}

uint64_t replace_invalid_utf8(std::string& s) {
  size_t bad = find_invalid_utf8(s);
  if (bad == std::string_view::npos) return 0;
  std::string out;
  out.reserve(s.size() + 16);
  uint64_t replaced = 0;
  std::string_view rest(s);
  while (bad != std::string_view::npos) {
    out.append(rest.data(), bad);
    out += "\xEF\xBF\xBD";
    ++replaced;
    rest.remove_prefix(bad + 1);
    bad = find_invalid_utf8(rest);
  }
  out.append(rest.data(), rest.size());
  s = std::move(out);
  return replaced;
}

namespace {

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}
bool whitespace_only(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
  });
}

// Lines of a ByteStream with the stream offset and 1-based number of each; a line longer than
// `max_line` is refused.
class LineReader {
 public:
  LineReader(ByteStream& in, size_t max_line, std::string what)
      : in_(in), max_line_(max_line), what_(std::move(what)) {}
  // The next line without its "\n"; false at the end of the stream.
  bool next(std::string_view& line) {
    for (;;) {
      size_t nl = buf_.find('\n', scan_);
      if (nl != std::string::npos) {
        emit(nl, nl + 1, line);
        return true;
      }
      scan_ = buf_.size();
      if (buf_.size() - pos_ > max_line_)
        throw Error(in_.path() + ":" + std::to_string(line_no_ + 1) + ": a line longer than " +
                    std::to_string(max_line_ >> 20) + " MiB; " + what_);
      if (eof_) {
        if (pos_ >= buf_.size()) return false;
        emit(buf_.size(), buf_.size(), line);
        return true;
      }
      if (pos_ > 0) {  // keep only the unread tail
        buf_.erase(0, pos_);
        scan_ -= pos_;
        pos_ = 0;
      }
      size_t old = buf_.size();
      buf_.resize(old + kChunk);
      size_t n = in_.read(&buf_[old], kChunk);
      buf_.resize(old + n);
      if (n == 0) eof_ = true;
    }
  }
  uint64_t line_offset() const { return line_offset_; }  // stream offset of the last line
  uint64_t line_number() const { return line_no_; }

 private:
  void emit(size_t end, size_t next, std::string_view& line) {
    line = std::string_view(buf_).substr(pos_, end - pos_);
    line_offset_ = consumed_;
    consumed_ += next - pos_;
    ++line_no_;
    pos_ = next;
    scan_ = next;
  }
  static constexpr size_t kChunk = 1 << 20;
  ByteStream& in_;
  size_t max_line_;
  std::string what_;
  std::string buf_;
  size_t pos_ = 0, scan_ = 0;
  bool eof_ = false;
  uint64_t consumed_ = 0, line_offset_ = 0, line_no_ = 0;
};

// Applies the UTF-8 rule to a piece of text that starts at stream offset `base` on line `line`.
void check_utf8(std::string& text, const std::string& path, uint64_t base, uint64_t line,
                const DocumentReadOptions& o, DocumentReadCounts& counts) {
  size_t bad = find_invalid_utf8(text);
  if (bad == std::string_view::npos) return;
  if (o.replace_invalid_utf8) {
    counts.replaced_bytes += replace_invalid_utf8(text);
    return;
  }
  const uint64_t at_line =
      line + static_cast<uint64_t>(std::count(text.begin(), text.begin() + bad, '\n'));
  throw Error(path + ":" + std::to_string(at_line) + ": not valid UTF-8 at byte offset " +
              std::to_string(base + bad) +
              " (of the decompressed text); convert the file to UTF-8 (e.g. iconv -f LATIN1 -t "
              "UTF-8), or pass --invalid-utf8 replace to replace such bytes by U+FFFD and count "
              "them");
}

std::string key_list(const nlohmann::json& obj) {
  std::string keys;
  size_t n = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it, ++n) {
    if (n == 8) {
      keys += ", …";
      break;
    }
    keys += (n ? ", " : "") + brief_text(it.key(), 40);
  }
  return keys.empty() ? "none" : keys;
}

void hand_on(std::string& text, DocumentReadCounts& counts,
             const std::function<void(std::string&)>& on_document) {
  if (whitespace_only(text)) {
    ++counts.empty_documents;
    return;
  }
  ++counts.documents;
  counts.bytes += text.size();
  on_document(text);
}

// The file's bytes exactly (as the folder rule of the "text" corpus reads it), the UTF-8 rule
// applied.
std::string read_whole(ByteStream& in, const InputFile& f, const DocumentReadOptions& o,
                       DocumentReadCounts& counts, const std::string& too_long) {
  std::string doc;
  for (;;) {
    const size_t old = doc.size(), chunk = 1 << 20;
    doc.resize(old + chunk);
    const size_t n = in.read(&doc[old], chunk);
    doc.resize(old + n);
    if (n == 0) break;
    if (doc.size() > o.max_document_bytes)
      throw Error(f.path + ": a document longer than " +
                  std::to_string(o.max_document_bytes >> 20) + " MiB; " + too_long);
  }
  check_utf8(doc, f.path, 0, 1, o, counts);
  return doc;
}

Document parse_brown_input(ByteStream& in, const InputFile& f, const DocumentReadOptions& o,
                           DocumentReadCounts& counts, const std::string& too_long) {
  const std::string name = f.path.substr(f.path.find_last_of('/') + 1);
  return parse_brown_file(read_whole(in, f, o, counts, too_long), f.path, name);
}

}  // namespace

void read_brown_document(const InputFile& f, const DocumentReadOptions& o,
                         DocumentReadCounts& counts,
                         const std::function<void(Document&)>& on_document) {
  if (f.format != InputFormat::Brown)
    throw Error(f.path + " is not read as a Brown file; its tags exist only with --format brown");
  ByteStream in(f.path, nullptr);
  Document doc = parse_brown_input(in, f, o, counts, "split the file before preparing");
  if (whitespace_only(doc.text)) {
    ++counts.empty_documents;
    return;
  }
  ++counts.documents;
  counts.bytes += doc.text.size();
  on_document(doc);
}

void read_documents(const InputFile& f, const DocumentReadOptions& o, DocumentReadCounts& counts,
                    Sha512* raw_digest, const std::function<void(std::string&)>& on_document) {
  ByteStream in(f.path, raw_digest);
  const std::string too_long = f.format == InputFormat::Jsonl
                                   ? "split such records before preparing"
                                   : "split the file, or pass --documents paragraphs";
  LineReader lines(in, o.max_document_bytes, too_long);
  std::string_view line;
  if (f.format == InputFormat::Jsonl) {
    while (lines.next(line)) {
      if (blank(line)) continue;
      const std::string where = f.path + ":" + std::to_string(lines.line_number());
      std::string raw(line);
      check_utf8(raw, f.path, lines.line_offset(), lines.line_number(), o, counts);
      std::string why;
      std::string text;
      try {
        nlohmann::json j = parse_json(raw, where, "", JsonLimits{o.max_document_bytes + 1, 64});
        if (!j.is_object())
          why = "the line is JSON but not an object";
        else if (!j.contains(o.field))
          why = "the object has no field \"" + o.field + "\" (its keys: " + key_list(j) + ")";
        else if (!j[o.field].is_string())
          why = "field \"" + o.field + "\" is " + j[o.field].type_name() + ", not a string";
        else
          text = j[o.field].get<std::string>();
      } catch (const Error& e) {
        why = std::string("not JSON (") + brief_text(e.what(), 160) + ")";
      }
      if (!why.empty()) {
        if (!o.skip_bad_lines)
          throw Error(where + ": " + why +
                      "; name the text field with --text-field KEY, fix the line, or pass "
                      "--skip-bad-lines to skip such lines and count them");
        if (counts.first_skip.empty()) counts.first_skip = where + ": " + why;
        ++counts.skipped_lines;
        continue;
      }
      if (text.size() > o.max_document_bytes)
        throw Error(where + ": a document longer than " +
                    std::to_string(o.max_document_bytes >> 20) + " MiB; " + too_long);
      hand_on(text, counts, on_document);
    }
    return;
  }
  if (f.format == InputFormat::Brown) {  // the text the "brown" corpus gives the LM
    std::string doc = parse_brown_input(in, f, o, counts, too_long).text;
    hand_on(doc, counts, on_document);
    return;
  }
  if (effective_unit(f, o.unit) == DocumentUnit::File) {
    std::string doc = read_whole(in, f, o, counts, too_long);
    hand_on(doc, counts, on_document);
    return;
  }
  std::string doc;
  uint64_t doc_offset = 0, doc_line = 0;
  auto flush = [&] {
    if (doc.empty()) return;
    check_utf8(doc, f.path, doc_offset, doc_line, o, counts);
    hand_on(doc, counts, on_document);
    doc.clear();
  };
  while (lines.next(line)) {
    if (blank(line)) {
      flush();
      continue;
    }
    if (doc.empty()) {
      doc_offset = lines.line_offset();
      doc_line = lines.line_number();
    } else {
      doc += '\n';
    }
    doc.append(line.data(), line.size());
    if (doc.size() > o.max_document_bytes)
      throw Error(f.path + ":" + std::to_string(doc_line) + ": a paragraph longer than " +
                  std::to_string(o.max_document_bytes >> 20) + " MiB; split it before preparing");
  }
  flush();
}

}  // namespace gllm
