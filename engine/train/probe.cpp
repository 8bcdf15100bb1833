// Linear probes on frozen hidden states (probe.h): the task's words read through a checkpoint, one
// feature per word (its last token's hidden state), a softmax probe fitted by L-BFGS, probe.jsonl.
#include "engine/train/probe.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "engine/config/run_paths.h"
#include "engine/data/dataset.h"
#include "engine/data/probe_task.h"
#include "engine/data/profile_estimation.h"
#include "engine/dataset/brown_tags.h"
#include "engine/dataset/prepared_data.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "engine/model/gpt.h"
#include "engine/train/run_store.h"

namespace gllm {

namespace fs = std::filesystem;

nlohmann::json ProbeScore::to_json() const {
  return {{"task", task},
          {"task_digest", task_digest},
          {"layer", layer},
          {"step", step},
          {"tokens", tokens},
          {"task_error", task_error},
          {"train_error", train_error},
          {"majority_error", majority_error},
          {"train_words", train_words},
          {"test_words", test_words},
          {"classes", classes},
          {"checkpoint", checkpoint}};
}

ProbeScore ProbeScore::from_json(const nlohmann::json& j) {
  ProbeScore s;
  s.task = j.value("task", std::string());
  s.task_digest = j.value("task_digest", std::string());
  s.layer = j.value("layer", 0);
  s.step = j.value("step", int64_t(-1));
  s.tokens = j.value("tokens", int64_t(0));
  s.task_error = j.value("task_error", 0.0);
  s.train_error = j.value("train_error", 0.0);
  s.majority_error = j.value("majority_error", 0.0);
  s.train_words = j.value("train_words", int64_t(0));
  s.test_words = j.value("test_words", int64_t(0));
  s.classes = j.value("classes", 0);
  s.checkpoint = j.value("checkpoint", std::string());
  return s;
}

LinearProbeFit fit_linear_probe(const std::vector<float>& train_x, const std::vector<int>& train_y,
                                const std::vector<float>& test_x, const std::vector<int>& test_y,
                                int dim, int classes, double l2, int iterations) {
  const int64_t n = static_cast<int64_t>(train_y.size()), m = static_cast<int64_t>(test_y.size());
  if (dim < 1 || classes < 2 || n < 2 || train_x.size() != static_cast<size_t>(n * dim) ||
      test_x.size() != static_cast<size_t>(m * dim))
    throw Error("fit_linear_probe: inconsistent sizes");
  for (int y : train_y)
    if (y < 0 || y >= classes) throw Error("fit_linear_probe: a label outside 0 … classes−1");
  torch::NoGradGuard outer;
  auto as_tensor = [&](const std::vector<float>& v, int64_t rows) {
    return torch::from_blob(const_cast<float*>(v.data()), {rows, dim}, torch::kFloat)
        .to(torch::kDouble);  // (rows, dim)
  };
  auto X = as_tensor(train_x, n);                           // (n, dim)
  const auto mean = X.mean(0, true);                        // (1, dim)
  const auto sd = X.std({0}, false, true).clamp_min(1e-8);  // (1, dim)
  X = (X - mean) / sd;
  auto Y = torch::from_blob(const_cast<int*>(train_y.data()), {n}, torch::kInt).to(torch::kLong);
  auto W = torch::zeros({dim, classes}, torch::kDouble).requires_grad_(true);  // (dim, C)
  auto b = torch::zeros({classes}, torch::kDouble).requires_grad_(true);       // (C)
  auto objective = [&]() {
    auto logits = torch::matmul(X, W) + b;  // (n, C)
    return torch::nn::functional::cross_entropy(logits, Y) + 0.5 * l2 * W.pow(2).sum();
  };
  {
    torch::AutoGradMode grad(true);
    torch::optim::LBFGS opt({W, b}, torch::optim::LBFGSOptions(1.0)
                                        .max_iter(std::max(1, iterations))
                                        .history_size(20)
                                        .tolerance_grad(1e-10)
                                        .tolerance_change(1e-14)
                                        .line_search_fn("strong_wolfe"));
    opt.step([&]() {
      opt.zero_grad();
      auto loss = objective();
      loss.backward();
      return loss;
    });
  }
  LinearProbeFit fit;
  {
    torch::AutoGradMode grad(true);
    W.mutable_grad() = torch::Tensor();
    b.mutable_grad() = torch::Tensor();
    auto loss = objective();
    loss.backward();
    fit.objective = loss.item<double>();
    fit.gradient_norm =
        std::max(W.grad().abs().max().item<double>(), b.grad().abs().max().item<double>());
  }
  auto error = [&](const torch::Tensor& x, const std::vector<int>& y) {
    if (y.empty()) return 0.0;
    auto pred = (torch::matmul(x, W) + b).argmax(1).contiguous();  // (rows)
    const int64_t* p = pred.data_ptr<int64_t>();
    int64_t wrong = 0;
    for (size_t i = 0; i < y.size(); ++i) wrong += p[i] != y[i];
    return static_cast<double>(wrong) / static_cast<double>(y.size());
  };
  fit.train_error = error(X, train_y);
  fit.test_error = m > 0 ? error((as_tensor(test_x, m) - mean) / sd, test_y) : 0.0;
  auto Wc = W.detach().contiguous();
  auto bc = b.detach().contiguous();
  fit.weight.assign(Wc.data_ptr<double>(), Wc.data_ptr<double>() + Wc.numel());
  fit.bias.assign(bc.data_ptr<double>(), bc.data_ptr<double>() + bc.numel());
  return fit;
}

namespace {

// What stays the same across a run's checkpoints: the task and the token ids of its words.
struct ProbeInputs {
  ProbeTask task;
  struct Chunk {
    std::vector<int64_t> ids;  // BOS + up to T−1 tokens
    std::vector<int> rows;     // per position: the item (word) it stands for, or −1
  };
  std::vector<Chunk> chunks;
  std::vector<int> labels;
  std::vector<bool> test;
  int64_t train_words = 0, test_words = 0;
};

ProbeInputs prepare_inputs(const RunConfig& cfg, const ProbeOptions& opt,
                           const std::function<void(const std::string&)>& say) {
  ProbeInputs in;
  DataConfig data = cfg.data;
  if (!opt.corpus_path.empty()) data.corpus_path = opt.corpus_path;
  // The Brown POS task needs the tagged corpus; a task file only the dataset's tokenizer.
  TaggedData tagged;
  if (opt.task_file.empty())
    tagged = open_tagged_data(data, say);
  else
    tagged.ds = open_configured_dataset(data, say);
  const Dataset& ds = tagged.ds;
  in.task = opt.task_file.empty() ? brown_pos_task(tagged.corpus, ds.splits)
                                  : read_probe_task(opt.task_file);
  const int64_t T = cfg.model.sequence_len;
  const auto& token_bytes = ds.tokenizer.token_bytes();
  for (const auto& p : in.task.passages) {
    int64_t& taken = p.test ? in.test_words : in.train_words;
    if (taken >= opt.max_words) continue;
    const auto ids32 = ds.tokenizer.encode(p.text.text);
    std::vector<uint16_t> ids(ids32.begin(), ids32.end());
    const auto word_of = align_tokens_to_words(p.text, ids.data(), ids.size(), token_bytes);
    // Each word's feature is the hidden state at its last token (a causal model has read the
    // whole word there).
    std::vector<int64_t> last(p.labels.size(), -1);
    for (size_t k = 0; k < word_of.size(); ++k)
      if (word_of[k] >= 0 && static_cast<size_t>(word_of[k]) < last.size())
        last[static_cast<size_t>(word_of[k])] = static_cast<int64_t>(k);
    std::vector<int> item_at(ids.size(), -1);
    for (size_t w = 0; w < last.size() && taken < opt.max_words; ++w) {
      if (last[w] < 0) continue;
      item_at[static_cast<size_t>(last[w])] = static_cast<int>(in.labels.size());
      in.labels.push_back(p.labels[w]);
      in.test.push_back(p.test);
      ++taken;
    }
    // Chunks of T−1 tokens led by BOS, as the loader's rows are.
    for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(T - 1)) {
      const size_t len = std::min(ids.size() - start, static_cast<size_t>(T - 1));
      ProbeInputs::Chunk c;
      c.ids.push_back(ds.tokenizer.bos_id());
      c.rows.push_back(-1);
      bool any = false;
      for (size_t k = 0; k < len; ++k) {
        c.ids.push_back(ids[start + k]);
        c.rows.push_back(item_at[start + k]);
        any = any || item_at[start + k] >= 0;
      }
      if (any) in.chunks.push_back(std::move(c));
    }
  }
  if (in.train_words < 10 || in.test_words < 10)
    throw Error("the probe task " + in.task.name + " has " + std::to_string(in.train_words) +
                " probe-train and " + std::to_string(in.test_words) +
                " probe-test words the tokenizer could place; it needs at least 10 of each");
  return in;
}

ProbeScore probe_checkpoint(const CheckpointInfo& ck, const ProbeInputs& in,
                            const ProbeOptions& opt, const std::string& run_dir) {
  verify_checkpoint(ck);
  GPT model = load_model(ck.weights_path);
  model->eval();
  for (const auto& [name, t] : model->state_tensors())
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>())
      throw Error(ck.weights_path + ": tensor '" + name +
                  "' holds NaN or infinite values; a probe of it would be a number about nothing");
  const int layer = opt.layer < 0 ? model->n_layer() : opt.layer;
  if (layer > model->n_layer())
    throw Error("--layer " + std::to_string(layer) + ": the model has " +
                std::to_string(model->n_layer()) + " blocks (layers 0 … " +
                std::to_string(model->n_layer()) + ")");
  const int d = model->width();
  std::vector<float> feats(in.labels.size() * static_cast<size_t>(d));
  torch::NoGradGuard no_grad;
  for (const auto& c : in.chunks) {
    auto x = torch::from_blob(const_cast<int64_t*>(c.ids.data()),
                              {1, static_cast<int64_t>(c.ids.size())}, torch::kLong)
                 .clone();  // (1, t)
    auto h = model->hidden_states(x, layer)
                 .to(torch::kCPU, torch::kFloat)
                 .reshape({static_cast<int64_t>(c.ids.size()), d})
                 .contiguous();  // (t, d)
    const float* p = h.data_ptr<float>();
    for (size_t k = 0; k < c.rows.size(); ++k)
      if (c.rows[k] >= 0)
        std::copy(p + k * static_cast<size_t>(d), p + (k + 1) * static_cast<size_t>(d),
                  feats.begin() + static_cast<int64_t>(c.rows[k]) * d);
  }
  std::vector<float> trx, tex;
  std::vector<int> try_, tey;
  for (size_t i = 0; i < in.labels.size(); ++i) {
    auto& x = in.test[i] ? tex : trx;
    x.insert(x.end(), feats.begin() + static_cast<int64_t>(i) * d,
             feats.begin() + static_cast<int64_t>(i + 1) * d);
    (in.test[i] ? tey : try_).push_back(in.labels[i]);
  }
  const int classes = static_cast<int>(in.task.labels.size());
  const auto fit = fit_linear_probe(trx, try_, tex, tey, d, classes, opt.l2, opt.iterations);
  std::vector<int64_t> count(static_cast<size_t>(classes), 0);
  for (int y : try_) ++count[static_cast<size_t>(y)];
  const int majority =
      static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
  int64_t wrong = 0;
  for (int y : tey) wrong += y != majority;
  ProbeScore s;
  s.task = in.task.name;
  s.task_digest = in.task.digest;
  s.layer = layer;
  s.step = ck.step;
  s.tokens = ck.sidecar.value("tokens", int64_t(0));
  s.task_error = fit.test_error;
  s.train_error = fit.train_error;
  s.majority_error = static_cast<double>(wrong) / static_cast<double>(tey.size());
  s.train_words = static_cast<int64_t>(try_.size());
  s.test_words = static_cast<int64_t>(tey.size());
  s.classes = classes;
  std::error_code ec;
  const auto rel = fs::path(ck.weights_path).lexically_relative(fs::path(run_dir));
  s.checkpoint =
      !rel.empty() && rel.native().rfind("..", 0) != 0 ? rel.generic_string() : ck.weights_path;
  return s;
}

}  // namespace

std::vector<ProbeScore> read_probe_scores(const std::string& run_dir) {
  const std::string path = join_path(run_dir, "probe.jsonl");
  if (!file_exists(path)) return {};
  std::vector<ProbeScore> out;
  for (const auto& r : read_metrics(path).records) out.push_back(ProbeScore::from_json(r));
  return out;
}

std::vector<ProbeScore> probe_run(const std::string& run_dir, const ProbeOptions& opt,
                                  const std::function<void(const std::string&)>& log,
                                  const std::atomic<bool>* cancel) {
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  if (opt.max_words < 20 || opt.max_words > 10000000)
    throw Error("--max-words must be 20 … 10000000");
  if (opt.iterations < 1 || opt.iterations > 100000) throw Error("--iterations must be 1 … 100000");
  if (!(opt.l2 >= 0) || opt.l2 > 1e6) throw Error("--l2 must be 0 … 1e6");
  const RunInfo info = read_run(run_dir);
  const auto ckpts = list_checkpoints(run_dir);
  if (ckpts.empty())
    throw Error(run_dir +
                " has no committed checkpoint to probe; train with "
                "train.checkpoint_every > 0 (the ladder presets keep one every 20 steps)");
  RunConfig cfg;
  try {
    cfg = RunConfig::from_json(info.config);
  } catch (const Error& e) {
    throw Error(run_dir + "/config.json: " + e.what());
  }
  resolve_run_files(cfg, run_dir);
  ProbeInputs in = prepare_inputs(cfg, opt, say);
  const int layer = opt.layer < 0 ? cfg.model.n_layer : opt.layer;
  std::vector<ProbeScore> all = read_probe_scores(run_dir);
  auto same = [&](const ProbeScore& s) {
    return s.task_digest == in.task.digest && s.layer == layer;
  };
  const std::string path = join_path(run_dir, "probe.jsonl");
  for (const auto& ck : ckpts) {
    if (cancel && cancel->load()) break;
    if (std::any_of(all.begin(), all.end(),
                    [&](const ProbeScore& s) { return same(s) && s.step == ck.step; }))
      continue;
    ProbeScore s = probe_checkpoint(ck, in, opt, run_dir);
    say(run_dir + ": step " + std::to_string(s.step) + ", " + in.task.name + " layer " +
        std::to_string(s.layer) + ": task error " + std::to_string(s.task_error) + " (train " +
        std::to_string(s.train_error) + ", majority " + std::to_string(s.majority_error) + ")");
    all.push_back(s);
    std::string text;
    for (const auto& r : all) text += r.to_json().dump() + "\n";
    write_file_atomic(path, text);
  }
  std::vector<ProbeScore> out;
  for (const auto& s : all)
    if (same(s)) out.push_back(s);
  std::sort(out.begin(), out.end(),
            [](const ProbeScore& a, const ProbeScore& b) { return a.step < b.step; });
  return out;
}

}  // namespace gllm
