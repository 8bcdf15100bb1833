// The monitor's MetricStore without a window: the seed-group rule (configs equal but for
// train.seed), group bands against hand computations (min–max for two seeds, the 95 % Student-t
// interval for three), the incremental EMA, and reading a run folder's metrics with its config.
#include <QtTest>
#include <cmath>

#include "widgets/metric_store.h"

using namespace gllm::gui;

namespace {

nlohmann::json config(const std::string& name, int seed, int steps = 100, double lr = 0.02) {
  return {{"name", name},
          {"model", {{"n_layer", 2}, {"n_embd", 64}}},
          {"optim", {{"matrix_lr", lr}}},
          {"train", {{"seed", seed}, {"steps", steps}}}};
}

MetricPoint at(double step, double value) {
  return {step, 1000.0 * step, 1e6 * step, 0.5 * step, value};
}

}  // namespace

class TestMetricStore : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void groupingRule() {
    MetricStore s;
    // Three seeds of one config, one run that differs in the learning rate, one in the steps, one
    // run of another name, one without a config.
    s.setRunConfig("a s1", config("arm-a", 1));
    s.setRunConfig("a s2", config("arm-a", 2));
    s.setRunConfig("lr", config("arm-a", 3, 100, 0.03));
    s.setRunConfig("a s3", config("arm-a", 3));
    s.setRunConfig("steps", config("arm-a", 4, 200));
    s.setRunConfig("b s1", config("arm-b", 1));
    s.addPoint("bare", "loss", at(1, 5));
    const auto& g = s.groups();
    QCOMPARE(int(g.size()), 5);
    QCOMPARE(g[0].runs, QStringList({"a s1", "a s2", "a s3"}));
    QCOMPARE(g[0].label, QStringLiteral("arm-a"));
    QCOMPARE(g[1].runs, QStringList({"lr"}));
    QCOMPARE(g[1].label, QStringLiteral("arm-a (2)"));  // another config of the same name
    QCOMPARE(g[2].runs, QStringList({"steps"}));
    QCOMPARE(g[2].label, QStringLiteral("arm-a (3)"));
    QCOMPARE(g[3].runs, QStringList({"b s1"}));
    QCOMPARE(g[4].runs, QStringList({"bare"}));
    QCOMPARE(g[4].label, QStringLiteral("bare"));
    QVERIFY(s.hasSeedGroups());
    QCOMPARE(s.groupOf("a s2")->label, QStringLiteral("arm-a"));
    // The key ignores the seed only: key order in the JSON does not matter either.
    nlohmann::json reordered =
        nlohmann::json::parse(R"({"train":{"steps":100,"seed":9},"optim":{"matrix_lr":0.02},
                                  "model":{"n_embd":64,"n_layer":2},"name":"arm-a"})");
    QCOMPARE(MetricStore::groupKey(reordered), MetricStore::groupKey(config("arm-a", 1)));
    QVERIFY(MetricStore::groupKey(config("arm-a", 1, 101)) !=
            MetricStore::groupKey(config("arm-a", 1)));
    // A removed run leaves its group.
    s.removeRun("a s2");
    QCOMPARE(s.groups()[0].runs, QStringList({"a s1", "a s3"}));
    s.removeRun("a s1");
    s.removeRun("a s3");
    s.removeRun("lr");
    s.removeRun("steps");
    QVERIFY(!s.hasSeedGroups());
  }

  void bandsAgainstHandComputation() {
    MetricStore s;
    s.setSmoothing(0);  // raw values: the band is of the values themselves
    for (int seed : {1, 2, 3}) s.setRunConfig(QStringLiteral("r%1").arg(seed), config("arm", seed));
    // Step 10: three seeds (4.0, 4.6, 5.2); step 20: two seeds (3.0, 3.8); step 30: one seed (2.5).
    s.addPoint("r1", "loss", at(10, 4.0));
    s.addPoint("r2", "loss", at(10, 4.6));
    s.addPoint("r3", "loss", at(10, 5.2));
    s.addPoint("r1", "loss", at(20, 3.0));
    s.addPoint("r2", "loss", at(20, 3.8));
    s.addPoint("r1", "loss", at(30, 2.5));
    const SeedGroup g = s.groups().front();
    const auto curve = s.groupCurve(g, "loss", XAxis::Tokens, MetricStore::Values::Drawn);
    QCOMPARE(int(curve.size()), 3);
    // Three seeds: mean 4.6, sample SD 0.6, t_{0.975, 2} = 4.302653 (printed tables):
    // 4.6 ± 4.302653 · 0.6 / √3 = 4.6 ± 1.490483.
    QCOMPARE(curve[0].n, 3);
    QCOMPARE(curve[0].step, 10.0);
    QCOMPARE(curve[0].x, 10000.0);
    QVERIFY(std::fabs(curve[0].mean - 4.6) < 1e-12);
    QVERIFY2(std::fabs(curve[0].low - (4.6 - 1.490483)) < 2e-6,
             qPrintable(QString::number(curve[0].low, 'g', 12)));
    QVERIFY(std::fabs(curve[0].high - (4.6 + 1.490483)) < 2e-6);
    QCOMPARE(bandKind(3), BandKind::TInterval95);
    // Two seeds: min–max.
    QCOMPARE(curve[1].n, 2);
    QVERIFY(std::fabs(curve[1].mean - 3.4) < 1e-12);
    QCOMPARE(curve[1].low, 3.0);
    QCOMPARE(curve[1].high, 3.8);
    QCOMPARE(bandKind(2), BandKind::MinMax);
    // One seed: the value, no band.
    QCOMPARE(curve[2].n, 1);
    QCOMPARE(curve[2].mean, 2.5);
    QCOMPARE(curve[2].low, 2.5);
    QCOMPARE(curve[2].high, 2.5);
    QCOMPARE(bandKind(1), BandKind::None);
    // Four seeds: t_{0.975, 3} = 3.182446; values 1, 2, 3, 6: mean 3, SD √(14/3).
    const BandPoint four = bandOf({1, 2, 3, 6});
    const double half = 3.182446 * std::sqrt(14.0 / 3.0) / 2.0;
    QVERIFY(std::fabs(four.low - (3 - half)) < 2e-6 && std::fabs(four.high - (3 + half)) < 2e-6);
  }

  void groupBandOfSmoothedCurves() {
    // With smoothing on, a training metric's band is over the seeds' EMAs (what the chart draws);
    // an evaluation's over its raw values.
    MetricStore s;
    s.setSmoothing(0.5);
    for (int seed : {1, 2}) s.setRunConfig(QStringLiteral("r%1").arg(seed), config("arm", seed));
    s.addPoint("r1", "loss", at(1, 4.0));
    s.addPoint("r1", "loss", at(2, 2.0));
    s.addPoint("r2", "loss", at(1, 6.0));
    s.addPoint("r2", "loss", at(2, 6.0));
    s.addPoint("r1", "val_bpb", at(2, 2.0));
    s.addPoint("r2", "val_bpb", at(2, 3.0));
    const SeedGroup g = s.groups().front();
    const auto loss = s.groupCurve(g, "loss", XAxis::Step, MetricStore::Values::Drawn);
    // EMA (w = 0.5, debiased) at step 2: r1 (0.25·4 + 0.5·2)/0.75 = 8/3, r2 6.
    QVERIFY(std::fabs(loss[1].low - 8.0 / 3.0) < 1e-12);
    QCOMPARE(loss[1].high, 6.0);
    const auto raw = s.groupCurve(g, "loss", XAxis::Step, MetricStore::Values::Raw);
    QCOMPARE(raw[1].low, 2.0);
    const auto bpb = s.groupCurve(g, "val_bpb", XAxis::Step, MetricStore::Values::Drawn);
    QCOMPARE(bpb[0].low, 2.0);
    QCOMPARE(bpb[0].high, 3.0);
  }

  void incrementalEmaMatchesBatch() {
    MetricStore s;
    s.setSmoothing(0.7);
    std::vector<double> v;
    for (int i = 1; i <= 50; ++i) {
      v.push_back(5.0 / i + 0.1 * std::sin(i));
      s.addPoint("r", "loss", at(i, v.back()));
      if (i % 7 == 0) (void)s.smoothed("r", "loss");  // extended in pieces
    }
    const auto batch = MetricStore::ema(v, 0.7);
    const auto& inc = s.smoothed("r", "loss");
    QCOMPARE(inc.size(), batch.size());
    for (size_t i = 0; i < inc.size(); ++i) QVERIFY(std::fabs(inc[i] - batch[i]) < 1e-12);
  }

  void readsRunFolderWithConfig() {
    QTemporaryDir dir;
    QFile m(dir.filePath("metrics.jsonl"));
    QVERIFY(m.open(QIODevice::WriteOnly));
    m.write("{\"step\":1,\"tokens\":100,\"loss\":5.0,\"flops\":1000,\"wall_s\":0.5}\n");
    m.write("{\"step\":2,\"tokens\":200,\"val_bpb\":2.5,\"wall_s\":1.0}\n");
    m.close();
    QFile c(dir.filePath("config.json"));
    QVERIFY(c.open(QIODevice::WriteOnly));
    c.write(config("arm", 7).dump().c_str());
    c.close();
    const LoadedRun r = MetricStore::readMetricsFile(dir.filePath("metrics.jsonl"));
    QVERIFY(r.error.isEmpty());
    QCOMPARE(r.metrics["loss"].size(), size_t(1));
    QCOMPARE(r.metrics["val_bpb"][0].flops, 2000.0);  // placed by FLOPs per token
    QCOMPARE(r.config["train"]["seed"].get<int>(), 7);
    MetricStore s;
    s.setRun("x", r);
    QVERIFY(s.hasRunConfig("x"));
    QCOMPARE(s.groups().front().label, QStringLiteral("arm"));
    QVERIFY(!MetricStore::readMetricsFile(dir.filePath("missing.jsonl")).error.isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestMetricStore)
#include "test_widgets_metric_store.moc"
