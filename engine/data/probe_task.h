// Token-labelled probe tasks (seed 000's task endpoint at workbench scale): passages of text whose
// words carry a label and a split (probe-train or probe-test); the Brown part-of-speech task built
// from the held-out documents, or a task file in the documented format (docs/probe-tasks.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/corpus.h"
#include "engine/data/splits.h"

namespace gllm {

struct ProbePassage {
  Document text;            // the text the model reads; its words (byte spans) are the items
  std::vector<int> labels;  // one per word of text.sentences, in order (index into task labels)
  bool test = false;        // probe-test (scored) or probe-train (fitted)
};

struct ProbeTask {
  std::string name;                 // "brown-pos" or the file's "# name:" (else its stem)
  std::string digest;               // sha512 hex of what defines the task (file bytes, corpus)
  std::vector<std::string> labels;  // label names, index = class
  std::vector<ProbePassage> passages;
  int64_t train_words() const;
  int64_t test_words() const;
};

// The coarse part-of-speech classes of the held-out documents (noun verb adj adv det prep pron
// conj punct aux num other): documents alternate between probe-train and probe-test in split
// order, so the two share no document, and no training run read either (the held-out split is
// never trained on).
ProbeTask brown_pos_task(const Corpus& corpus, const Splits& splits);

// Reads a task file (docs/probe-tasks.md): "word<TAB>label" lines, a blank line between
// sentences, "# split: train" / "# split: test" before the sentences of each split, and an
// optional "# name: NAME". Throws gllm::Error naming the file, the line and the fix.
ProbeTask read_probe_task(const std::string& path);
// The same from text (`source` names it in errors).
ProbeTask parse_probe_task(const std::string& text, const std::string& source);

}  // namespace gllm
