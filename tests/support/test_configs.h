// Small RunConfigs shared by the tests: a tiny model of a given shape, and a short CPU training run
// on the text fixture. Tests adjust the few fields they exercise on top of these.
#pragma once
#include "engine/config/run_config.h"

namespace gllm::test {

// A model with explicit shape (model.depth 0): layers, width, heads, vocabulary, sequence length;
// every other field keeps the RunConfig default.
RunConfig tiny_model(int layers, int width, int heads, int vocab, int sequence_len);

// A short training run on tests/fixtures/runs_corpus.txt: 2 layers, width 32, 2 heads, graded
// attention, sequence 32, BPE vocabulary 300, 10 % validation and 10 % held-out, `steps` steps of
// `grad_accum` micro-batches of `device_batch` rows, evaluation every 4 steps on 512 tokens, no
// periodic checkpoints, CPU, one thread. Validated (RunConfig::from_json).
RunConfig tiny_text_run(int steps, int device_batch = 4, int grad_accum = 2);

}  // namespace gllm::test
