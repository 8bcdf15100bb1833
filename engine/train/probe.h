// The task endpoint (seed 000 §8.2.2 at workbench scale): a linear probe on a checkpoint's frozen
// hidden states, fitted on probe-train words and scored on probe-test words, at every checkpoint.
// Torch-free interface (the GUI calls it from a worker thread).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gllm {

struct ProbeOptions {
  std::string task_file;  // "" = brown-pos (the run's held-out documents); else a task file
  int layer = -1;         // hidden state after this many blocks; −1 = the last (lm_head input)
  int64_t max_words = 12000;  // per split: the first words of the passages, in order
  double l2 = 1e-3;           // ridge on the probe's weights (standardised features)
  int iterations = 100;       // L-BFGS iterations
  std::string corpus_path;    // Brown folder; empty = the run's data section
};

// One probe of one checkpoint: a line of run_dir/probe.jsonl.
struct ProbeScore {
  std::string task, task_digest;
  int layer = 0;
  int64_t step = -1, tokens = 0;
  double task_error = 0;      // probe-test error (the endpoint)
  double train_error = 0;     // probe-train error
  double majority_error = 0;  // probe-test error of always answering the commonest train label
  int64_t train_words = 0, test_words = 0;
  int classes = 0;
  std::string checkpoint;  // relative to the run folder when inside it
  nlohmann::json to_json() const;
  static ProbeScore from_json(const nlohmann::json& j);
};

// Multinomial logistic regression (softmax of x·W + b, ridge l2/2·‖W‖² on the mean loss) on
// features standardised with the training mean and SD, fitted by full-batch L-BFGS in double
// precision. x are row-major (n, dim).
struct LinearProbeFit {
  double train_error = 0, test_error = 0;
  double objective = 0;        // the regularised mean loss at the end
  double gradient_norm = 0;    // its gradient's max-norm at the end (0 at the optimum)
  std::vector<double> weight;  // (dim, classes) row-major, on the standardised features
  std::vector<double> bias;    // (classes)
};
LinearProbeFit fit_linear_probe(const std::vector<float>& train_x, const std::vector<int>& train_y,
                                const std::vector<float>& test_x, const std::vector<int>& test_y,
                                int dim, int classes, double l2, int iterations);

// Probes every committed checkpoint of a run not yet in its probe.jsonl for this task (digest)
// and layer, oldest first, appending each score as it is done (the file is rewritten atomically).
// Returns every score of this task and layer in step order. `cancel` stops between checkpoints.
std::vector<ProbeScore> probe_run(const std::string& run_dir, const ProbeOptions& options,
                                  const std::function<void(const std::string&)>& log = {},
                                  const std::atomic<bool>* cancel = nullptr);

// Reads run_dir/probe.jsonl (empty when absent).
std::vector<ProbeScore> read_probe_scores(const std::string& run_dir);

}  // namespace gllm
