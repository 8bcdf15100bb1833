// The shared test configurations of tests/support/test_configs.h, built on RunConfig's defaults
// so a test states only what it exercises.
#include "tests/support/test_configs.h"

#include "tests/support/test_support.h"

namespace gllm::test {

RunConfig tiny_model(int layers, int width, int heads, int vocab, int sequence_len) {
  RunConfig c;
  c.model.depth = 0;
  c.model.n_layer = layers;
  c.model.n_embd = width;
  c.model.n_head = heads;
  c.model.vocab_size = vocab;
  c.model.sequence_len = sequence_len;
  return c;
}

RunConfig tiny_text_run(int steps, int device_batch, int grad_accum) {
  RunConfig c;
  c.name = "tiny-test";
  c.model.n_layer = 2;
  c.model.n_embd = 32;
  c.model.n_head = 2;
  c.model.sequence_len = 32;
  c.grading.attention = true;
  c.data.corpus = "text";
  c.data.corpus_path = fixture("runs_corpus.txt");
  c.data.vocab_size = 300;
  c.data.val_fraction = 0.1;
  c.data.heldout_fraction = 0.1;
  c.train.steps = steps;
  c.train.device_batch = device_batch;
  c.train.grad_accum = grad_accum;
  c.train.eval_every = 4;
  c.train.eval_tokens = 512;
  c.train.heldout_tokens = 512;
  c.train.checkpoint_every = 0;
  c.train.device = "cpu";
  c.train.threads = 1;
  return RunConfig::from_json(c.to_json());
}

}  // namespace gllm::test
