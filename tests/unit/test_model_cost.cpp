// Tests of the seed-001 accounting against the paper's printed figures (Table 1b, §2.1) and the
// baseline's parameter counts (baseline.md §1.4, §1.5), and of `gllm params --json`.
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/config/run_config.h"
#include "engine/model/cost.h"

using namespace gllm;

namespace {
gllm::RunConfig paper(int depth, int64_t oe_m) {
  gllm::RunConfig c;
  c.model.depth = depth;
  c.model.sequence_len = 2048;
  c.model.oe_m = oe_m;
  c.model.storage = "bf16";  // seed 001 stores wte, value_embeds and the hashed tables in bf16
  c.train.device_batch = 64;
  c.train.grad_accum = 4;
  return c;
}
bool near(double a, double b, double tol) {
  return std::abs(a - b) <= tol;
}
}  // namespace

class TestModelCost : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void parameter_counts() {
    auto a6 = account(paper(6, 150855), 8192);
    auto a8 = account(paper(8, 150855), 8192);
    QCOMPARE(a6.params.scaling_params, int64_t(26345772));
    QCOMPARE(a8.params.scaling_params, int64_t(50332176));
    QCOMPARE(a6.params.oe_rows, int64_t(603432));
    QCOMPARE(a8.params.oe_rows, int64_t(603432));
    QCOMPARE(a6.params.oe_params, int64_t(57929472));
    QCOMPARE(a8.params.oe_params, int64_t(77239296));
    QCOMPARE(a6.params.total_params, int64_t(84275244));
    QCOMPARE(a8.params.total_params, int64_t(127571472));
    auto j6 = paper(6, 150855);
    j6.model.query_scale = true;
    QCOMPARE(account(j6, 8192).result_json_params, int64_t(26346924));  // 12_oe_joint backbone
    QCOMPARE(account(j6, 8192).params.total_params, int64_t(84276396));
  }

  void memory_figures() {
    auto a6 = account(paper(6, 150855), 8192);
    auto a8 = account(paper(8, 150855), 8192);
    QVERIFY(near(a6.memory.oe_tables, 223.29, 0.005));
    QVERIFY(near(a8.memory.oe_tables, 296.95, 0.005));
    QVERIFY(near(a6.memory.fp32_embedding_state, 96.0, 1e-9));
    // fp32-stored tables cost 4 + 4 bytes per element for weight and gradient instead of 2 + 2.
    auto f6 = paper(6, 150855);
    f6.model.storage = "fp32";
    QVERIFY(near(account(f6, 8192).memory.oe_tables - a6.memory.oe_tables,
                 4.0 * static_cast<double>(a6.params.oe_params) / (1024.0 * 1024.0), 1e-9));
    QVERIFY(near(a8.memory.fp32_embedding_state, 160.0, 1e-9));
    // Arm deltas of Table 1b: 11_oe_opt +319.29 (d6), 12_oe_joint +456.98 (d8), #4a +296.98,
    // 02_dense_joint +96.02.
    auto c = paper(6, 150855);
    c.optim.embedding_state = "fp32";
    QVERIFY(near(account(c, 8192).memory.delta, 319.29, 0.005));
    auto d = paper(8, 150855);
    d.optim.embedding_state = "fp32";
    d.model.query_scale = true;
    QVERIFY(near(account(d, 8192).memory.delta, 456.98, 0.005));
    d.optim.embedding_state = "bf16";
    QVERIFY(near(account(d, 8192).memory.delta, 296.98, 0.005));
    auto e = paper(6, 0);
    e.optim.embedding_state = "fp32";
    e.model.query_scale = true;
    QVERIFY(near(account(e, 8192).memory.delta, 96.02, 0.005));
    QCOMPARE(account(paper(6, 0), 8192).memory.delta, 0.0);  // 00_dense_native
  }

  void flop_figures() {
    auto a6 = account(paper(6, 150855), 8192);
    auto a8 = account(paper(8, 150855), 8192);
    QCOMPARE(a6.flops.tokens_per_step, int64_t(524288));
    // Neumann-Gram 4Vd² + 14Vd + 3d² + 3d per table over 5 (d6) / 6 (d8) tables.
    QCOMPARE(a6.neumann_tables, 5);
    QCOMPARE(a8.neumann_tables, 6);
    QVERIFY(near(a8.flops.neumann_gram / 1e9, 51.8967, 5e-5));
    QVERIFY(near(a6.flops.neumann_gram / 1e9, 24.3820,
                 1e-3));  // the formula gives 24.3816; the seed prints 24.3820
    QCOMPARE(neumann_gram_flops(8192, 384),
             4.0 * 8192 * 384 * 384 + 14.0 * 8192 * 384 + 3.0 * 384 * 384 + 3.0 * 384);
    // OE lookup and moment-free update (Table 1b, 10_oe_native).
    QVERIFY(near(a6.flops.oe_lookup / 1e9, 1.6106, 5e-5));
    QVERIFY(near(a8.flops.oe_lookup / 1e9, 2.1475, 5e-5));
    QVERIFY(near(a6.flops.oe_update / 1e9, 0.2896, 5e-5));
    QVERIFY(near(a8.flops.oe_update / 1e9, 0.3862, 5e-5));
    QVERIFY(near((a6.flops.oe_lookup + a6.flops.oe_update) / 1e9, 1.9003, 1e-4));
    // BiEq: d8 0.4027 exactly; d6 0.1699 against the printed 0.1695.
    QVERIFY(near(a8.flops.bieq / 1e9, 0.4027, 5e-5));
    QVERIFY(near(a6.flops.bieq / 1e9, 0.1695, 5e-4));
    // Post-QK-norm query scaling.
    QVERIFY(near(a6.flops.query_scale / 1e9, 4.8318, 5e-5));
    QVERIFY(near(a8.flops.query_scale / 1e9, 8.5899, 5e-5));
    // The d8 model step: 239,078,400 FLOPs/token (baseline §1.5) × 524,288 = 125.35 TFLOPs.
    QVERIFY(near(a8.flops.model / 524288.0, 239078400.0, 0.5));
    QVERIFY(near(account(paper(6, 0), 8192).flops.model / 524288.0, 120325824.0, 0.5));
    // Only enabled components are summed: the native OE arm adds lookup + update.
    QVERIFY(near(a6.flops.extra, a6.flops.oe_lookup + a6.flops.oe_update, 1));
    auto t = paper(8, 150855);
    t.optim.bieq = t.optim.neumann = true;
    t.model.query_scale = true;
    QVERIFY(near(account(t, 8192).flops.extra / 1e9, 63.42, 0.01));  // d8 12_oe_joint
  }

  // Every seed-001 preset loads, and its accounting reproduces its Table 1b row: total parameters,
  // analytic memory delta (MiB) and extra GFLOPs per step.
  void preset_table_1b_rows_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<qint64>("total");
    QTest::addColumn<double>("mib");
    QTest::addColumn<double>("gflops");
    QTest::newRow("d6 00") << "seed001-d6-00-dense-native" << qint64(26345772) << 0.0 << 0.0;
    QTest::newRow("d6 01") << "seed001-d6-01-dense-opt" << qint64(26345772) << 96.00 << 24.55;
    QTest::newRow("d6 02") << "seed001-d6-02-dense-joint" << qint64(26346924) << 96.02 << 29.38;
    QTest::newRow("d6 02m") << "seed001-d6-02m-dense-masked-qk" << qint64(26346924) << 96.02
                            << 29.38;
    QTest::newRow("d6 10") << "seed001-d6-10-oe-native" << qint64(84275244) << 223.29 << 1.90;
    QTest::newRow("d6 11") << "seed001-d6-11-oe-opt" << qint64(84275244) << 319.29 << 26.45;
    QTest::newRow("d6 12") << "seed001-d6-12-oe-joint" << qint64(84276396) << 319.31 << 31.28;
    QTest::newRow("d6 12m") << "seed001-d6-12m-oe-masked-qk" << qint64(84276396) << 319.31 << 31.28;
    QTest::newRow("d6 #3a") << "seed001-d6-3a-oe-table-neumann-native" << qint64(84275244) << 223.29
                            << -1.0;
    QTest::newRow("d8 00") << "seed001-d8-00-dense-native" << qint64(50332176) << 0.0 << 0.0;
    QTest::newRow("d8 01") << "seed001-d8-01-dense-opt" << qint64(50332176) << 160.00 << 52.30;
    QTest::newRow("d8 02") << "seed001-d8-02-dense-joint" << qint64(50334224) << 160.03 << 60.89;
    QTest::newRow("d8 10") << "seed001-d8-10-oe-native" << qint64(127571472) << 296.95 << 2.53;
    QTest::newRow("d8 11") << "seed001-d8-11-oe-opt" << qint64(127571472) << 456.95 << 54.83;
    QTest::newRow("d8 12") << "seed001-d8-12-oe-joint" << qint64(127573520) << 456.98 << 63.42;
    QTest::newRow("d8 #4a") << "seed001-d8-4a-oe-joint-bf16state" << qint64(127573520) << 296.98
                            << 63.42;
  }
  void preset_table_1b_rows() {
    QFETCH(QString, preset);
    QFETCH(qint64, total);
    QFETCH(double, mib);
    QFETCH(double, gflops);
    auto cfg = gllm::RunConfig::load(gllm::resolve_preset_path(preset.toStdString()));
    QCOMPARE(cfg.train.steps, int64_t(953));
    QCOMPARE(cfg.optim.progress_skip, 11);
    QVERIFY(!cfg.grading.attention);
    auto a = account(cfg, 8192);
    QCOMPARE(qint64(a.params.total_params), total);
    QCOMPARE(a.flops.tokens_per_step, int64_t(524288));
    // The seed adds components rounded to 0.01 (d6 12: 223.29 + 96.00 + 0.02 = 319.31; exact
    // 319.303).
    QVERIFY2(near(a.memory.delta, mib, 0.0101),
             qPrintable(QString("memory %1").arg(a.memory.delta)));
    // #3a: the seed measures +21.27 (visited rows); the analytic all-rows bound is larger.
    if (gflops >= 0)
      QVERIFY2(near(a.flops.extra / 1e9, gflops, 0.006),
               qPrintable(QString("GFLOPs %1").arg(a.flops.extra / 1e9)));
    else
      QVERIFY(a.flops.extra / 1e9 > 21.27);
  }

  void tiny_presets_load() {
    for (const char* arm :
         {"00-dense-native", "01-dense-opt", "02-dense-joint", "02m-dense-masked-qk",
          "10-oe-native", "11-oe-opt", "12-oe-joint", "12m-oe-masked-qk",
          "3a-oe-table-neumann-native", "4a-oe-joint-bf16state"}) {
      auto cfg =
          gllm::RunConfig::load(gllm::resolve_preset_path(std::string("seed001-tiny-") + arm));
      QVERIFY2(cfg.model.depth == 0 && cfg.model.width() == 128, arm);
      QVERIFY(!cfg.grading.attention);
      const std::string s(arm);
      QCOMPARE(cfg.model.oe_m > 0, s[0] == '1' || s[0] == '3' || s[0] == '4');
      QCOMPARE(cfg.optim.bieq, s.rfind("01", 0) == 0 || s.rfind("02", 0) == 0 ||
                                   s.rfind("11", 0) == 0 || s.rfind("12", 0) == 0 || s[0] == '4');
      QCOMPARE(cfg.optim.table_neumann, s[0] == '3');
      QCOMPARE(cfg.optim.embedding_state == "fp32", cfg.optim.neumann && s[0] != '4');
    }
  }

  void json_keys() {
    auto j = to_json(account(paper(6, 150855), 8192));
    for (const char* k :
         {"scaling_params", "oe_rows", "oe_params", "total_params", "memory_mib", "flops_per_step"})
      QVERIFY2(j.contains(k), k);
    QVERIFY(j["memory_mib"].contains("oe_tables") &&
            j["memory_mib"].contains("fp32_embedding_state"));
  }
};

QTEST_APPLESS_MAIN(TestModelCost)
#include "test_model_cost.moc"
