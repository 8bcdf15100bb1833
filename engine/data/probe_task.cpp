// Probe tasks (probe_task.h): the Brown POS task from held-out documents and the task-file reader.
#include "engine/data/probe_task.h"

#include <filesystem>
#include <map>

#include "engine/data/level_features.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/regular_file.h"
#include "engine/io/sha512.h"

namespace gllm {

namespace {
std::string sha512_hex(std::string_view bytes) {
  const auto d = sha512(bytes);
  return to_hex(d.data(), d.size());
}
}  // namespace

int64_t ProbeTask::train_words() const {
  int64_t n = 0;
  for (const auto& p : passages)
    if (!p.test) n += static_cast<int64_t>(p.labels.size());
  return n;
}

int64_t ProbeTask::test_words() const {
  int64_t n = 0;
  for (const auto& p : passages)
    if (p.test) n += static_cast<int64_t>(p.labels.size());
  return n;
}

ProbeTask brown_pos_task(const Corpus& corpus, const Splits& splits) {
  if (corpus.kind != "brown")
    throw Error("the part-of-speech probe needs the tagged Brown corpus; this run reads '" +
                corpus.kind + "' — give a task file with --task (docs/probe-tasks.md)");
  ProbeTask t;
  t.name = "brown-pos";
  t.labels = {"noun", "verb", "adj",   "adv", "det", "prep",
              "pron", "conj", "punct", "aux", "num", "other"};
  std::string key = "brown-pos/1 " + corpus.hash();
  for (size_t k = 0; k < splits.heldout.size(); ++k) {
    const auto& doc = corpus.documents[splits.heldout[k]];
    ProbePassage p;
    p.text = doc;
    p.test = k % 2 == 1;
    for (const auto& s : doc.sentences)
      for (const auto& w : s.words) p.labels.push_back(brown_coarse_class(brown_base_tag(w.tag)));
    key += " " + doc.name;
    if (!p.labels.empty()) t.passages.push_back(std::move(p));
  }
  t.digest = sha512_hex(key);
  if (t.train_words() == 0 || t.test_words() == 0)
    throw Error(
        "the held-out split has too few documents for a probe-train and a probe-test "
        "half; raise data.heldout_fraction (for a prepared dataset: prepare it with a larger "
        "--heldout-tokens)");
  return t;
}

ProbeTask parse_probe_task(const std::string& text, const std::string& source) {
  const size_t bad = find_invalid_utf8(text);
  if (bad != std::string::npos)
    throw Error(source + ": not UTF-8 text (byte " + std::to_string(bad) +
                "); save the task file as UTF-8");
  ProbeTask t;
  t.name = std::filesystem::path(source).stem().string();
  std::map<std::string, int> label_index;
  int split = -1;  // −1 unset, 0 train, 1 test
  ProbePassage cur;
  int line_no = 0;
  auto finish = [&]() {
    if (cur.labels.empty()) return;
    cur.test = split == 1;
    cur.text.paragraphs = 1;
    t.passages.push_back(std::move(cur));
    cur = ProbePassage{};
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = source + ":" + std::to_string(line_no);
    if (line.empty()) {
      finish();
      if (end == text.size()) break;
      continue;
    }
    if (line[0] == '#') {
      const auto colon = line.find(':');
      std::string k = colon == std::string::npos ? "" : line.substr(1, colon - 1);
      std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
      auto trim = [](std::string s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
        return s;
      };
      k = trim(k);
      v = trim(v);
      if (k == "split") {
        finish();
        if (v != "train" && v != "test")
          throw Error(where + ": split '" + brief_text(v, 40) +
                      "' is neither train nor test; write \"# split: train\" or \"# split: test\"");
        split = v == "test" ? 1 : 0;
      } else if (k == "name") {
        if (v.empty() || v.size() > 64)
          throw Error(where + ": give the task a name of 1 to 64 characters");
        t.name = v;
      }
      if (end == text.size()) break;
      continue;  // other comments are free text
    }
    const auto tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 >= line.size() ||
        line.find('\t', tab + 1) != std::string::npos)
      throw Error(where +
                  ": expected \"word<TAB>label\" (one tab between a non-empty word and "
                  "a non-empty label), got '" +
                  brief_text(line, 60) + "'");
    if (split < 0)
      throw Error(where +
                  ": a word before any \"# split: train\" or \"# split: test\" line; "
                  "say which split the sentences belong to");
    const std::string word = line.substr(0, tab), label = line.substr(tab + 1);
    if (word.find(' ') != std::string::npos)
      throw Error(where + ": the word '" + brief_text(word, 40) +
                  "' holds a space; one word per line");
    auto it = label_index.find(label);
    if (it == label_index.end()) {
      if (label_index.size() >= 1000)
        throw Error(where + ": more than 1000 distinct labels; a probe task has a few classes");
      it = label_index.emplace(label, static_cast<int>(t.labels.size())).first;
      t.labels.push_back(label);
    }
    if (cur.text.sentences.empty()) cur.text.sentences.emplace_back();
    auto& words = cur.text.sentences.back().words;
    if (!cur.text.text.empty()) cur.text.text += ' ';
    TaggedWord w;
    w.word = word;
    w.tag = label;
    w.begin = static_cast<uint32_t>(cur.text.text.size());
    cur.text.text += word;
    w.end = static_cast<uint32_t>(cur.text.text.size());
    words.push_back(std::move(w));
    cur.labels.push_back(it->second);
    if (end == text.size()) break;
  }
  finish();
  t.digest = sha512_hex(text);
  if (t.labels.size() < 2)
    throw Error(source + ": a probe task needs at least two distinct labels");
  if (t.train_words() == 0 || t.test_words() == 0)
    throw Error(source +
                ": the task needs sentences under both \"# split: train\" and "
                "\"# split: test\"");
  return t;
}

ProbeTask read_probe_task(const std::string& path) {
  check_regular_file(path);
  const std::string text =
      read_file_limited(path, 256ull << 20, "a probe task file is at most 256 MiB");
  return parse_probe_task(text, path);
}

}  // namespace gllm
