// Level annotations from the Brown corpus (seed 000 §7.1 as docs/design.md fixes it): feature maps
// φ_l for l = 0 tag/affix/case, 1 syntactic context from tags, 2 sentence, 3 discourse; a scalar
// probe target per level; and part-of-speech classes (open vs closed, §8.1.2).
#pragma once
#include <string>
#include <vector>

#include "engine/data/corpus.h"

namespace gllm {

constexpr int kBrownLevels = 4;

// "nn-tl" → "nn", "fw-vbd" → "vbd", "bedz*" → "bedz", "nn$" → "nn", "ppss+md" → "ppss".
std::string brown_base_tag(const std::string& tag);
// Open class: nouns (nn, nns, np, nps, nr, nrs), lexical verbs (vb, vbd, vbg, vbn, vbz),
// adjectives (jj, jjr, jjs, jjt), adverbs (rb, rbr, rbt). Everything else is closed.
bool brown_open_class(const std::string& base_tag);
// Coarse class used for neighbour features: noun verb adj adv det prep pron conj punct aux num
// other.
int brown_coarse_class(const std::string& base_tag);
constexpr int kCoarseClasses = 12;
bool brown_negation(const TaggedWord& w);  // not, n't, never, no-forms (tags with '*')

// Builds the feature maps. The tag inventory (most frequent base tags) is read from the corpus so
// every run on the same corpus has the same feature layout.
class LevelFeaturizer {
 public:
  explicit LevelFeaturizer(const Corpus& corpus, int max_tags = 60);
  int dims(int level) const { return dims_[level]; }
  const std::vector<std::string>& feature_names(int level) const { return names_[level]; }
  // Names of the per-level probe targets: noun, verb_distance, negation, document_position.
  static const std::vector<std::string>& target_names();

  // Features of every word of one sentence: out[l] gets words × dims(l) values (row-major), and
  // targets gets words × kBrownLevels values (one probe target per level).
  void sentence_features(const Document& doc, size_t sentence, std::vector<float> out[kBrownLevels],
                         std::vector<float>& targets) const;

 private:
  std::vector<std::string> tags_;  // level-0 tag inventory (last slot = other)
  std::vector<std::string> genres_;
  int dims_[kBrownLevels] = {0, 0, 0, 0};
  std::vector<std::string> names_[kBrownLevels];
};

}  // namespace gllm
