// The task endpoint: the linear probe's fit (separable data → no error, label noise → chance, the
// optimum checked against an objective computed here), the task-file reader's errors, and probing
// every checkpoint of a run into probe.jsonl once, per task and layer.
#include <torch/torch.h>

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/data/probe_task.h"
#include "engine/io/error.h"
#include "engine/io/paths.h"
#include "engine/train/probe.h"
#include "engine/train/run_store.h"
#include "engine/train/trainer.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

using namespace gllm;

namespace {

// Rows of `dim` features: class = sign of feature 0 (shifted by ±8 SD), the rest noise.
void blobs(int n, int dim, bool random_labels, uint32_t seed, std::vector<float>& x,
           std::vector<int>& y) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::bernoulli_distribution coin(0.5);
  for (int i = 0; i < n; ++i) {
    const int c = coin(rng) ? 1 : 0;
    for (int j = 0; j < dim; ++j) x.push_back(g(rng) + (j == 0 ? (c ? 8.0f : -8.0f) : 0.0f));
    y.push_back(random_labels ? (coin(rng) ? 1 : 0) : c);
  }
}

// The regularised mean cross-entropy of (W, b) on standardised x, computed without torch.
double objective(const std::vector<float>& x, const std::vector<int>& y, int dim, int classes,
                 const std::vector<double>& W, const std::vector<double>& b, double l2) {
  const size_t n = y.size();
  std::vector<double> mean(dim, 0), sd(dim, 0);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < dim; ++j) mean[j] += x[i * dim + j] / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < dim; ++j) sd[j] += std::pow(x[i * dim + j] - mean[j], 2) / n;
  for (auto& s : sd) s = std::sqrt(s);
  double loss = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> z(classes);
    for (int c = 0; c < classes; ++c) {
      z[c] = b[c];
      for (int j = 0; j < dim; ++j) z[c] += (x[i * dim + j] - mean[j]) / sd[j] * W[j * classes + c];
    }
    const double m = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - m);
    loss += (m + std::log(s) - z[y[i]]) / static_cast<double>(n);
  }
  double w2 = 0;
  for (double w : W) w2 += w * w;
  return loss + 0.5 * l2 * w2;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class TestTrainProbe : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    ::setenv("GLLM_DATA", dir("cache").c_str(), 1);
    torch::set_num_threads(1);
  }

  void separableDataIsLearnt() {
    std::vector<float> x, tx;
    std::vector<int> y, ty;
    blobs(400, 4, false, 1, x, y);
    blobs(400, 4, false, 2, tx, ty);
    const auto f = fit_linear_probe(x, y, tx, ty, 4, 2, 1e-3, 100);
    QCOMPARE(f.train_error, 0.0);
    QCOMPARE(f.test_error, 0.0);
  }

  void noiseLabelsStayAtChance() {
    std::vector<float> x, tx;
    std::vector<int> y, ty;
    blobs(400, 4, true, 3, x, y);
    blobs(2000, 4, true, 4, tx, ty);
    const auto f = fit_linear_probe(x, y, tx, ty, 4, 2, 1e-3, 100);
    QVERIFY2(f.test_error > 0.42 && f.test_error < 0.58, qPrintable(QString::number(f.test_error)));
  }

  void theFitIsTheOptimum() {
    std::vector<float> x, tx;
    std::vector<int> y, ty;
    blobs(300, 5, true, 5, x, y);
    for (auto& v : y) v = (v + static_cast<int>(&v - y.data()) % 3) % 3;  // three classes
    const double l2 = 0.05;
    const auto f = fit_linear_probe(x, y, tx, ty, 5, 3, l2, 200);
    const double at = objective(x, y, 5, 3, f.weight, f.bias, l2);
    QVERIFY2(std::abs(at - f.objective) < 1e-9, qPrintable(QString::number(at - f.objective)));
    QVERIFY(f.gradient_norm < 1e-6);
    // Convex objective: every step away from the fit costs (to second order, ~h²).
    std::mt19937 rng(7);
    std::normal_distribution<double> g(0, 1);
    for (int k = 0; k < 5; ++k) {
      auto W = f.weight;
      auto b = f.bias;
      for (auto& w : W) w += 1e-3 * g(rng);
      for (auto& v : b) v += 1e-3 * g(rng);
      QVERIFY(objective(x, y, 5, 3, W, b, l2) > at);
    }
  }

  void taskFileFormat() {
    const std::string ok =
        "# name: toy\n# split: train\nThe\tdet\njury\tnoun\n\nsaid\tverb\n# split: test\n"
        "A\tdet\ncourt\tnoun\r\n";
    const auto t = parse_probe_task(ok, "toy.tsv");
    QCOMPARE(t.name, std::string("toy"));
    QCOMPARE(t.labels, (std::vector<std::string>{"det", "noun", "verb"}));
    QCOMPARE(t.passages.size(), size_t(3));
    QCOMPARE(t.passages[0].text.text, std::string("The jury"));
    QCOMPARE(t.passages[0].text.sentences[0].words[1].begin, uint32_t(4));
    QCOMPARE(t.passages[2].test, true);
    QCOMPARE(t.train_words(), int64_t(3));
    QCOMPARE(t.test_words(), int64_t(2));
    auto refused = [](const std::string& text, const std::string& says) {
      try {
        parse_probe_task(text, "bad.tsv");
      } catch (const Error& e) {
        return std::string(e.what()).find(says) != std::string::npos;
      }
      return false;
    };
    QVERIFY(refused("# split: train\nThe det\n", "bad.tsv:2: expected"));
    QVERIFY(refused("The\tdet\n", "before any"));
    QVERIFY(refused("# split: train\nThe\tdet\nA\tnoun\n", "both"));
    QVERIFY(refused("# split: train\nThe\tdet\n# split: test\nA\tdet\n", "two distinct"));
    QVERIFY(refused("# split: dev\n", "neither train nor test"));
    QVERIFY(refused("# split: train\nThe\tdet\textra\n", "one tab"));
    QVERIFY(refused(std::string("# split: train\n\xff\tdet\n"), "UTF-8"));
  }

  void probesEveryCheckpointOnce() {
    RunConfig c = test::tiny_text_run(8);
    c.train.checkpoint_every = 4;
    c = RunConfig::from_json(c.to_json());
    {
      struct Errors : RunObserver {
        std::string error;
        void on_error(const std::string& m) override { error = m; }
      } e;
      Trainer t;
      t.start(c, dir("run"), &e);
      t.wait();
      QVERIFY2(e.error.empty(), e.error.c_str());
    }
    QCOMPARE(read_run(dir("run")).status, std::string("completed"));
    // A task from the fixture's words: long (≥ 5 letters) or short; the first 40 lines train.
    std::ifstream in(test::fixture("runs_corpus.txt"));
    std::string line, task = "# name: word-length\n";
    int lines = 0, test_long = 0, test_short = 0, train_long = 0, train_short = 0;
    while (std::getline(in, line) && lines < 80) {
      if (line.empty()) continue;
      task += lines == 0 ? "# split: train\n" : lines == 40 ? "# split: test\n" : "";
      std::istringstream words(line);
      std::string w;
      while (words >> w) {
        while (!w.empty() && (w.back() == '.' || w.back() == ',')) w.pop_back();
        if (w.empty()) continue;
        const bool lng = w.size() >= 5;
        task += w + "\t" + (lng ? "long" : "short") + "\n";
        (lines < 40 ? (lng ? train_long : train_short) : (lng ? test_long : test_short)) += 1;
      }
      task += "\n";
      ++lines;
    }
    write(dir("task.tsv"), task);
    ProbeOptions o;
    o.task_file = dir("task.tsv");
    o.max_words = 100000;
    const auto s = probe_run(dir("run"), o);
    QCOMPARE(s.size(), size_t(2));
    QCOMPARE(s[0].step, int64_t(4));
    QCOMPARE(s[1].step, int64_t(8));
    const auto ck = list_checkpoints(dir("run"));
    QCOMPARE(s[1].tokens, ck.back().sidecar["tokens"].get<int64_t>());
    QCOMPARE(s[0].layer, 2);  // the last of tiny_text_run's two blocks
    QCOMPARE(s[0].task, std::string("word-length"));
    QCOMPARE(s[0].checkpoint, std::string("checkpoints/step_000004.safetensors"));
    // Majority: the commonest probe-train label, scored on probe-test.
    const double majority = train_long >= train_short
                                ? static_cast<double>(test_short) / (test_long + test_short)
                                : static_cast<double>(test_long) / (test_long + test_short);
    QVERIFY(std::abs(s[0].majority_error - majority) < 1e-12);
    QCOMPARE(s[0].test_words, int64_t(test_long + test_short));
    for (const auto& x : s) QVERIFY(x.task_error >= 0 && x.task_error <= 1);
    const std::string before = read_text(dir("run") + "/probe.jsonl");
    QCOMPARE(probe_run(dir("run"), o).size(), size_t(2));  // nothing new to probe
    QCOMPARE(read_text(dir("run") + "/probe.jsonl"), before);
    o.layer = 0;  // another layer is another series
    QCOMPARE(probe_run(dir("run"), o).size(), size_t(2));
    QCOMPARE(read_probe_scores(dir("run")).size(), size_t(4));
    o.layer = 9;
    QVERIFY_THROWS_EXCEPTION(Error, probe_run(dir("run"), o));
  }
};

QTEST_APPLESS_MAIN(TestTrainProbe)
#include "test_train_probe.moc"
