// The benchmark harness computes what it reports: medians, ratio, GFLOP/s and peak fraction from
// the recorded rounds; the engine and the PyTorch eager script agree on the loss; the result JSON
// has its fields.
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "engine/bench/attention_bench.h"
#include "engine/bench/bench_report.h"
#include "engine/bench/train_bench.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

using namespace gllm;

namespace {

RunConfig tiny_config() {
  RunConfig c = gllm::test::tiny_model(2, 32, 2, 0, 16);  // vocabulary: data.vocab_size
  c.name = "bench-test";
  c.model.window_pattern = "SL";
  c.grading.attention = true;
  c.grading.head_grades = "random";
  c.train.device_batch = 2;
  c.data.vocab_size = 64;
  return c;
}

bool close_rel(double a, double b, double tol = 1e-12) {
  return std::abs(a - b) <= tol * std::max(std::abs(a), std::abs(b));
}

}  // namespace

class TestBenchHarness : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void median_of_odd_and_even() {
    QCOMPARE(bench::median({3, 1, 2}), 2.0);
    QCOMPARE(bench::median({4, 1, 3, 2}), 2.5);
    QVERIFY(std::isnan(bench::median({})));
  }

  void summary_from_rounds() {
    std::vector<bench::TrainRound> r{{100, 50}, {300, 80}, {200, 400}};
    auto s = bench::summarize_rounds(r, 1e6, 2.0);  // 1 MFLOP per token, 2 GFLOP/s peak
    QCOMPARE(s.engine_tokens_per_s, 200.0);
    QCOMPARE(s.python_tokens_per_s, 80.0);
    QCOMPARE(s.ratio, 2.5);
    QVERIFY(close_rel(s.engine_gflops, 0.2));
    QVERIFY(close_rel(s.python_gflops, 0.08));
    QVERIFY(close_rel(s.peak_fraction, 0.1));
    QVERIFY(close_rel(s.python_peak_fraction, 0.04));
    auto e = bench::summarize_rounds({{100, 0}}, 1e6, 0);  // engine only, no peak
    QCOMPARE(e.ratio, 0.0);
    QCOMPARE(e.peak_fraction, 0.0);
  }

  void paired_overhead_is_median_of_ratios() {
    // ratios 1.1, 1.0, 1.5 → median 1.1 → overhead 0.1 (not the ratio of medians, 1.2/1.0)
    QVERIFY(close_rel(bench::paired_overhead({1.1, 2.0, 1.5}, {1.0, 2.0, 1.0}), 0.1, 1e-9));
    QVERIFY_THROWS_EXCEPTION(std::exception, bench::paired_overhead({1.0}, {}));
  }

  void train_bench_reports_consistent_figures() {
    const std::string py = test::torch_python();
    bench::TrainBenchOptions o;
    o.config = tiny_config();
    o.preset = "inline";
    o.steps = 2;
    o.warmup = 1;
    o.rounds = 3;
    o.threads = 1;
    o.gemm_n = 64;
    o.profile = true;
    o.vs_python = !py.empty();
    o.python = py;
    auto j = bench::run_train_bench(o);
    for (const char* k : {"engine_tokens_per_s", "flops_per_token", "engine_gflops",
                          "gemm_peak_gflops", "peak_fraction", "rounds_detail", "phases_ms",
                          "full_step", "machine", "loss_engine", "tokens_per_step"})
      QVERIFY2(j.contains(k), k);
    QCOMPARE(j["tokens_per_step"].get<int64_t>(), int64_t(2 * 16));
    QCOMPARE(j["flops_per_token"].get<double>(), estimate_cost(o.config, 64).flops_per_token);
    std::vector<double> e, p, g;
    for (const auto& r : j["rounds_detail"]) {
      e.push_back(r["engine_tokens_per_s"].get<double>());
      g.push_back(r["gemm_gflops"].get<double>());
      if (o.vs_python) {
        p.push_back(r["python_tokens_per_s"].get<double>());
        QVERIFY(close_rel(r["ratio"].get<double>(), e.back() / p.back()));
      }
    }
    QCOMPARE(e.size(), size_t(3));
    const double ev = j["engine_tokens_per_s"].get<double>();
    QCOMPARE(ev, bench::median(e));
    const double best = *std::max_element(g.begin(), g.end());
    QCOMPARE(j["gemm_peak_gflops"].get<double>(),
             best);  // the best round: a median would flatter the fraction
    QCOMPARE(j["gemm_median_gflops"].get<double>(), bench::median(g));
    QVERIFY(
        close_rel(j["engine_gflops"].get<double>(), ev * j["flops_per_token"].get<double>() / 1e9));
    QVERIFY(close_rel(j["peak_fraction"].get<double>(), j["engine_gflops"].get<double>() / best));
    QVERIFY(j["machine"]["cores"].get<int>() >= 1);
    QVERIFY(!j["machine"]["torch_version"].get<std::string>().empty());
    // The step's matrix products, counted from the model's structure: per layer the q, k, v and
    // output projections and the two MLP matrices (one product forward, two backward), the two
    // attention products (score and value; two each backward), the value-embedding gates, lm_head.
    {
      GPTOptions mo;
      mo.vocab_size = 64;
      GPT m(o.config, mo);
      int gates = 0;
      for (int l = 0; l < m->n_layer(); ++l) gates += m->has_value_embed(l);
      const int L = m->n_layer();
      const int expected = 3 * (6 * L + gates + 1) + 3 * 2 * L;
      const auto& gb = j["gemm_bound"];
      QVERIFY2(gb.is_object(), "no gemm_bound in the result");
      QCOMPARE(gb["products_per_step"].get<int>(), expected);
      double sum_ms = 0;
      int sum_count = 0;
      for (const auto& sh : gb["shapes"]) {
        sum_ms += sh["count"].get<int>() * sh["ms"].get<double>();
        sum_count += sh["count"].get<int>();
      }
      QCOMPARE(sum_count, expected);
      QVERIFY(close_rel(gb["gemm_ms"].get<double>(), sum_ms, 1e-9));
      QVERIFY(close_rel(gb["step_ms"].get<double>(),
                        1000.0 * 32 / j["engine_tokens_per_s"].get<double>(), 1e-9));
      QVERIFY(close_rel(gb["fraction"].get<double>(),
                        gb["gemm_ms"].get<double>() / gb["step_ms"].get<double>(), 1e-9));
      // The ceiling: the step's model FLOPs over its products' time alone, against the same peak.
      const double flops_per_step =
          j["flops_per_token"].get<double>() * j["tokens_per_step"].get<double>();
      QVERIFY(close_rel(gb["peak_fraction_ceiling"].get<double>(),
                        flops_per_step / (gb["gemm_ms"].get<double>() / 1000.0) / 1e9 / best,
                        1e-9));
    }
    QVERIFY(j["profile"]["engine"].size() > 0);
    bool saw_mm = false;
    for (const auto& r : j["profile"]["engine"])
      saw_mm |= r["op"].get<std::string>().find("mm") != std::string::npos;
    QVERIFY2(saw_mm, "the engine profile lists no matrix product");
    GLLM_REQUIRE_TORCH_PYTHON();  // the PyTorch side below
    const double pv = j["python_tokens_per_s"].get<double>();
    QCOMPARE(pv, bench::median(p));
    QVERIFY(close_rel(j["ratio"].get<double>(), ev / pv));
    QCOMPARE(j["python_implementation"].get<std::string>(), std::string("eager"));
    QCOMPARE(j["python_threads"].get<int>(), 1);
    // The two sides compute the same objective on the same weights and batch.
    const double le = j["loss_engine"].get<double>();
    QVERIFY2(std::abs(le - j["loss_python"].get<double>()) < 1e-4 * std::max(1.0, std::abs(le)),
             ("engine " + std::to_string(le) + " vs eager " +
              std::to_string(j["loss_python"].get<double>()))
                 .c_str());
    QVERIFY(std::abs(le - j["loss_reference"].get<double>()) < 1e-4 * std::max(1.0, std::abs(le)));
    QVERIFY(j["profile"]["python"].size() > 0);
  }

  void attention_bench_grid_shape() {
    bench::AttentionBenchOptions o;
    o.lengths = {8, 16, 2048};
    o.widths = {8};
    o.head_dim = 4;
    o.repeats = 1;
    o.threads = 1;
    o.compiled_config = tiny_config();
    o.preset = "inline";
    o.compiled_batch = 1;
    auto j = bench::run_attention_bench(o);
    QCOMPARE(j["schema"].get<std::string>(), std::string("gllm-bench-attention-1"));
    QCOMPARE(j["overhead"].size(), size_t(1));
    QCOMPARE(j["overhead"][0].size(), size_t(3));
    for (size_t c = 0; c < 3; ++c) {
      const double s = j["standard_ms"][0][c].get<double>(), g = j["graded_ms"][0][c].get<double>();
      QVERIFY(s > 0 && g > 0);
      // One repetition: the overhead is exactly that pair's ratio − 1, and medians are the pair
      // itself.
      QVERIFY(close_rel(1.0 + j["overhead"][0][c].get<double>(), g / s, 1e-9));
    }
    QVERIFY(j["overhead_at_target"].contains("8"));
    QCOMPARE(j["meets_target"].get<bool>(), j["overhead"][0][2].get<double>() <= 0.03);
    const auto& c = j["compiled"];
    QVERIFY(c["max_abs_logit_diff"].get<double>() <
            1e-3);  // the compiled model computes the graded logits
    // Whole-model forwards are noisier than one attention cell: the compiled check takes at least
    // 15 paired runs whatever --repeats says; its ratio is a median of paired ratios (tested
    // above).
    QCOMPARE(c["repeats"].get<int>(), 15);
    QVERIFY(c["ratio"].get<double>() > 0 && std::isfinite(c["ratio"].get<double>()));
    QVERIFY_THROWS_EXCEPTION(std::exception, [] {
      bench::AttentionBenchOptions bad;
      bad.widths = {30};
      bad.head_dim = 4;
      bench::run_attention_bench(bad);
    }());
  }
};

QTEST_APPLESS_MAIN(TestBenchHarness)
#include "test_bench_harness.moc"
