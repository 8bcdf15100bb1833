// Brown level feature maps (l = 0 … 3), probe targets, base tags and open/closed classes.
#include "engine/data/level_features.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace gllm {

std::string brown_base_tag(const std::string& tag) {
  std::string t = tag;
  size_t plus = t.find('+');
  if (plus != std::string::npos && plus > 0) t = t.substr(0, plus);
  if (t.rfind("fw-", 0) == 0 && t.size() > 3) t = t.substr(3);
  for (const char* suf : {"-hl", "-tl", "-nc", "-hl", "-tl"}) {
    size_t n = std::string(suf).size();
    if (t.size() > n && t.compare(t.size() - n, n, suf) == 0) t = t.substr(0, t.size() - n);
  }
  while (t.size() > 1 && (t.back() == '*' || t.back() == '$')) t.pop_back();
  return t;
}

bool brown_open_class(const std::string& b) {
  static const char* open[] = {"nn",  "nns", "np", "nps", "nr",  "nrs", "vb", "vbd", "vbg",
                               "vbn", "vbz", "jj", "jjr", "jjs", "jjt", "rb", "rbr", "rbt"};
  for (const char* o : open)
    if (b == o) return true;
  return false;
}

int brown_coarse_class(const std::string& b) {
  if (b.empty()) return 11;
  if (b[0] == 'n' && b != "not") return 0;                        // nouns
  if (b.rfind("vb", 0) == 0) return 1;                            // lexical verbs
  if (b.rfind("jj", 0) == 0) return 2;                            // adjectives
  if (b.rfind("rb", 0) == 0 || b == "ql" || b == "rp") return 3;  // adverbs
  if (b == "at" || b.rfind("dt", 0) == 0 || b.rfind("ab", 0) == 0 || b == "ap")
    return 4;                            // determiners
  if (b == "in" || b == "to") return 5;  // prepositions
  if (b.rfind("pp", 0) == 0 || b == "pn" || b.rfind("wp", 0) == 0 || b == "ex")
    return 6;                                                        // pronouns
  if (b == "cc" || b == "cs" || b == "wdt" || b == "wrb") return 7;  // conjunctions, wh
  if (!std::isalpha(static_cast<unsigned char>(b[0]))) return 8;     // punctuation
  if (b == "md" || b.rfind("be", 0) == 0 || b.rfind("hv", 0) == 0 || b.rfind("do", 0) == 0)
    return 9;                             // aux
  if (b == "cd" || b == "od") return 10;  // numbers
  return 11;
}

bool brown_negation(const TaggedWord& w) {
  if (w.tag.find('*') != std::string::npos) return true;  // not, n't forms, never
  std::string l = w.word;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  return l == "no" || l == "never" || l == "nobody" || l == "nothing" || l == "none" ||
         l == "neither" || l == "nor" || l == "nowhere";
}

namespace {
const std::vector<std::string>& suffixes() {
  static const std::vector<std::string> s = {"ing", "ed",   "ly",   "tion", "sion", "ment", "ness",
                                             "ity", "able", "ible", "ful",  "less", "ous",  "ive",
                                             "al",  "est",  "er",   "'s",   "s"};
  return s;
}
bool is_verbish(const std::string& b) {
  int c = brown_coarse_class(b);
  return c == 1 || c == 9;
}
bool is_quantifier(const std::string& b) {
  return b == "abn" || b == "abx" || b == "ap" || b == "dti" || b == "dts" || b == "cd" ||
         b == "abl";
}
bool is_subordinator(const std::string& b) {
  return b == "cs" || b == "wdt" || b == "wps" || b == "wpo" || b == "wrb";
}
}  // namespace

const std::vector<std::string>& LevelFeaturizer::target_names() {
  static const std::vector<std::string> t = {"noun", "verb_distance", "negation",
                                             "document_position"};
  return t;
}

LevelFeaturizer::LevelFeaturizer(const Corpus& corpus, int max_tags) {
  std::map<std::string, size_t> counts;
  std::map<std::string, int> genres;
  for (const auto& d : corpus.documents) {
    genres[d.genre] = 1;
    for (const auto& s : d.sentences)
      for (const auto& w : s.words) ++counts[brown_base_tag(w.tag)];
  }
  std::vector<std::pair<size_t, std::string>> by;
  for (auto& kv : counts) by.push_back({kv.second, kv.first});
  std::sort(by.begin(), by.end(), [](auto& a, auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; i < by.size() && static_cast<int>(i) < max_tags; ++i)
    tags_.push_back(by[i].second);
  for (auto& g : genres) genres_.push_back(g.first);

  // Level 0: tag one-hot (+ other), suffix class (+ none), case (lower, title, upper, digit,
  // other), length in bytes / 10, open class.
  for (auto& t : tags_) names_[0].push_back("tag=" + t);
  names_[0].push_back("tag=other");
  for (auto& s : suffixes()) names_[0].push_back("suffix=" + s);
  names_[0].push_back("suffix=none");
  for (const char* c : {"case=lower", "case=title", "case=upper", "case=digit", "case=other"})
    names_[0].push_back(c);
  names_[0].push_back("length");
  names_[0].push_back("open_class");
  // Level 1: previous / next coarse class (+ boundary), signed distance to the nearest verb
  // (−4+ … +4+, self, none), after a subordinator, after a comma, relative position in sentence.
  static const char* coarse[] = {"noun", "verb",  "adj", "adv", "det",   "prep",    "pron",
                                 "conj", "punct", "aux", "num", "other", "boundary"};
  for (const char* c : coarse) names_[1].push_back(std::string("prev=") + c);
  for (const char* c : coarse) names_[1].push_back(std::string("next=") + c);
  for (const char* c : {"verb=-4+", "verb=-3", "verb=-2", "verb=-1", "verb=self", "verb=+1",
                        "verb=+2", "verb=+3", "verb=+4+", "verb=none"})
    names_[1].push_back(c);
  names_[1].push_back("after_subordinator");
  names_[1].push_back("after_comma");
  names_[1].push_back("position_in_sentence");
  // Level 2: negation, quantifier, modal, passive (be … vbn), question, exclamation, quote,
  // log length, length buckets (≤5, ≤10, ≤20, ≤40, >40).
  for (const char* c : {"negation", "quantifier", "modal", "passive", "question", "exclamation",
                        "quote", "log_length", "len<=5", "len<=10", "len<=20", "len<=40", "len>40"})
    names_[2].push_back(c);
  // Level 3: sentence position in document, paragraph position, first sentence of paragraph,
  // sentence index in paragraph (capped, /10), genre one-hot.
  for (const char* c :
       {"document_position", "paragraph_position", "paragraph_start", "index_in_paragraph"})
    names_[3].push_back(c);
  for (auto& g : genres_) names_[3].push_back("genre=" + g);
  for (int l = 0; l < kBrownLevels; ++l) dims_[l] = static_cast<int>(names_[l].size());
}

void LevelFeaturizer::sentence_features(const Document& doc, size_t si,
                                        std::vector<float> out[kBrownLevels],
                                        std::vector<float>& targets) const {
  const Sentence& s = doc.sentences[si];
  const size_t n = s.words.size();
  for (int l = 0; l < kBrownLevels; ++l) out[l].assign(n * dims_[l], 0.0f);
  targets.assign(n * kBrownLevels, 0.0f);
  std::vector<std::string> base(n);
  std::vector<int> coarse(n);
  for (size_t i = 0; i < n; ++i) {
    base[i] = brown_base_tag(s.words[i].tag);
    coarse[i] = brown_coarse_class(base[i]);
  }
  // Sentence-level facts.
  bool neg = false, quant = false, modal = false, passive = false, quote = false;
  for (size_t i = 0; i < n; ++i) {
    neg |= brown_negation(s.words[i]);
    quant |= is_quantifier(base[i]);
    modal |= base[i] == "md";
    quote |= s.words[i].word == "``" || s.words[i].word == "''";
    if (base[i] == "vbn")
      for (size_t k = i; k-- > 0 && i - k <= 3;)
        if (base[k].rfind("be", 0) == 0) passive = true;
  }
  const std::string& last = n ? s.words[n - 1].word : std::string();
  bool question = last == "?", excl = last == "!";
  // Discourse facts.
  int para = s.paragraph;
  size_t first_in_para = si;
  while (first_in_para > 0 && doc.sentences[first_in_para - 1].paragraph == para) --first_in_para;
  float doc_pos = doc.sentences.size() > 1 ? float(si) / float(doc.sentences.size() - 1) : 0.0f;
  float para_pos = doc.paragraphs > 1 ? float(para) / float(doc.paragraphs - 1) : 0.0f;
  int genre_idx =
      static_cast<int>(std::find(genres_.begin(), genres_.end(), doc.genre) - genres_.begin());

  bool after_sub = false, after_comma = false;
  for (size_t i = 0; i < n; ++i) {
    const TaggedWord& w = s.words[i];
    float* f0 = out[0].data() + i * dims_[0];
    float* f1 = out[1].data() + i * dims_[1];
    float* f2 = out[2].data() + i * dims_[2];
    float* f3 = out[3].data() + i * dims_[3];
    // Level 0
    int T = static_cast<int>(tags_.size());
    int ti = static_cast<int>(std::find(tags_.begin(), tags_.end(), base[i]) - tags_.begin());
    f0[std::min(ti, T)] = 1;
    std::string lw = w.word;
    std::transform(lw.begin(), lw.end(), lw.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    int sfx = static_cast<int>(suffixes().size());
    for (size_t k = 0; k < suffixes().size(); ++k) {
      const std::string& x = suffixes()[k];
      if (lw.size() > x.size() + 1 && lw.compare(lw.size() - x.size(), x.size(), x) == 0) {
        sfx = static_cast<int>(k);
        break;
      }
    }
    f0[T + 1 + sfx] = 1;
    int cs = T + 1 + static_cast<int>(suffixes().size()) + 1;
    unsigned char c0 = w.word.empty() ? 0 : static_cast<unsigned char>(w.word[0]);
    bool all_upper =
        w.word.size() > 1 &&
        std::all_of(w.word.begin(), w.word.end(),
                    [](unsigned char c) { return !std::islower(c); }) &&
        std::any_of(w.word.begin(), w.word.end(), [](unsigned char c) { return std::isupper(c); });
    int casei = std::isdigit(c0)   ? 3
                : all_upper        ? 2
                : std::isupper(c0) ? 1
                : std::islower(c0) ? 0
                                   : 4;
    f0[cs + casei] = 1;
    f0[cs + 5] = float(w.word.size()) / 10.0f;
    f0[cs + 6] = brown_open_class(base[i]) ? 1.0f : 0.0f;
    // Level 1
    f1[i > 0 ? coarse[i - 1] : 12] = 1;
    f1[13 + (i + 1 < n ? coarse[i + 1] : 12)] = 1;
    int best = 0;
    bool found = false;
    for (size_t k = 0; k < n; ++k)
      if (is_verbish(base[k])) {
        int dist = static_cast<int>(k) - static_cast<int>(i);
        if (!found || std::abs(dist) < std::abs(best) ||
            (std::abs(dist) == std::abs(best) && dist < best))
          best = dist;
        found = true;
      }
    int vb = !found ? 9 : best == 0 ? 4 : best < 0 ? std::max(0, 4 + best) : std::min(8, 4 + best);
    f1[26 + vb] = 1;
    f1[36] = after_sub ? 1.0f : 0.0f;
    f1[37] = after_comma ? 1.0f : 0.0f;
    f1[38] = n > 1 ? float(i) / float(n - 1) : 0.0f;
    if (is_subordinator(base[i])) after_sub = true;
    if (w.word == "." || w.word == ";") after_sub = false;
    if (w.word == ",") after_comma = true;
    // Level 2
    f2[0] = neg;
    f2[1] = quant;
    f2[2] = modal;
    f2[3] = passive;
    f2[4] = question;
    f2[5] = excl;
    f2[6] = quote;
    f2[7] = std::log(float(n) + 1.0f);
    f2[8 + (n <= 5 ? 0 : n <= 10 ? 1 : n <= 20 ? 2 : n <= 40 ? 3 : 4)] = 1;
    // Level 3
    f3[0] = doc_pos;
    f3[1] = para_pos;
    f3[2] = si == first_in_para ? 1.0f : 0.0f;
    f3[3] = std::min<float>(float(si - first_in_para), 10.0f) / 10.0f;
    if (genre_idx < static_cast<int>(genres_.size())) f3[4 + genre_idx] = 1;
    // Probe targets, one per level.
    float* tg = targets.data() + i * kBrownLevels;
    tg[0] = coarse[i] == 0 ? 1.0f : 0.0f;
    tg[1] = found ? float(std::max(-5, std::min(5, best))) / 5.0f : 0.0f;
    tg[2] = neg ? 1.0f : 0.0f;
    tg[3] = doc_pos;
  }
}

}  // namespace gllm
