// Tests of the optimizer building blocks against independent references: the Polar Express
// coefficients re-derived by tests/python/polar_express_coefficients.py, its orthogonality band,
// NorMuon norm preservation, BiEq and Neumann-Gram against closed forms, schedule boundaries.
#include <torch/torch.h>

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/optim/muon_adamw.h"
#include "engine/optim/schedule.h"
#include "tests/support/test_support.h"

using namespace gllm::optim;

class TestOptimBlocks : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { torch::manual_seed(1234); }

  // All fifteen coefficients against the paper's construction, re-derived in plain Python.
  void polar_express_coefficients_are_the_baseline_ones() {
    const std::string py = gllm::test::plain_python();
    GLLM_REQUIRE_REFERENCE(!py.empty(), "python3 for tests/python/polar_express_coefficients.py");
    auto r =
        gllm::test::run_program(py, {gllm::test::python_script("polar_express_coefficients.py")});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    const auto want = nlohmann::json::parse(r.out);
    const auto& c = polar_express_coefficients();
    QCOMPARE(c.size(), want.size());
    QCOMPARE(c.size(), size_t(5));
    for (size_t t = 0; t < c.size(); ++t)
      for (size_t k = 0; k < 3; ++k) {
        const double w = want[t][k].get<double>();
        QVERIFY2(std::abs(c[t][k] - w) <= 1e-12 * std::abs(w),
                 qPrintable(QString("step %1 coefficient %2: %3, derived %4")
                                .arg(t)
                                .arg(k)
                                .arg(c[t][k], 0, 'g', 17)
                                .arg(w, 0, 'g', 17)));
      }
  }

  void polar_express_is_nearly_orthogonal_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::newRow("tall 64x32") << 64 << 32;
    QTest::newRow("wide 32x64") << 32 << 64;
    QTest::newRow("square 48") << 48 << 48;
    QTest::newRow("c_fc-like 128x16") << 128 << 16;
  }
  void polar_express_is_nearly_orthogonal() {
    QFETCH(int, rows);
    QFETCH(int, cols);
    auto g = torch::randn({3, rows, cols});  // (K, m, n)
    auto x = polar_express(g, 5, 1.02, torch::kFloat32);
    QCOMPARE(x.sizes(), g.sizes());
    for (int k = 0; k < 3; ++k) {
      auto s = torch::linalg::svdvals(x[k], c10::nullopt);
      auto s0 = torch::linalg::svdvals(g[k], c10::nullopt);
      QVERIFY2(s.min().item<double>() > 0.8 && s.max().item<double>() < 1.2,
               qPrintable(QString("singular values in [%1, %2]")
                              .arg(s.min().item<double>())
                              .arg(s.max().item<double>())));
      QVERIFY(s0.max().item<double>() / s0.min().item<double>() >
              1.5);  // the input was not already orthogonal
      // Close to the exact polar factor U Vᵀ.
      auto [u, sv, vh] = torch::linalg::svd(g[k], false, c10::nullopt);
      auto polar = u.matmul(vh);
      QVERIFY(torch::linalg::matrix_norm(x[k] - polar, 2, {-2, -1}, false, c10::nullopt)
                  .item<double>() < 0.16);
    }
  }

  void polar_express_handles_ill_conditioning() {
    auto g = torch::randn({40, 40});
    auto [u, s, vh] = torch::linalg::svd(g, false, c10::nullopt);
    auto sv = torch::logspace(0, -2.5, 40);  // condition number ~316
    auto x = polar_express(u.matmul(torch::diag(sv)).matmul(vh), 5, 1.02, torch::kFloat32);
    auto out = torch::linalg::svdvals(x, c10::nullopt);
    QVERIFY(out.min().item<double>() > 0.8 && out.max().item<double>() < 1.2);
    // Fewer iterations leave it far from orthogonal: the check discriminates.
    auto x1 = polar_express(u.matmul(torch::diag(sv)).matmul(vh), 1, 1.02, torch::kFloat32);
    QVERIFY(torch::linalg::svdvals(x1, c10::nullopt).min().item<double>() < 0.5);
  }

  void polar_express_bf16_close_to_fp32() {
    auto g = torch::randn({2, 32, 16});
    auto a = polar_express(g, 5, 1.02, torch::kBFloat16);
    QCOMPARE(a.scalar_type(), torch::kBFloat16);
    auto b = polar_express(g, 5, 1.02, torch::kFloat32);
    QVERIFY((a.to(torch::kFloat32) - b).abs().max().item<double>() < 0.1);
  }

  void normuon_preserves_frobenius_norm() {
    auto g = torch::randn({2, 12, 5});
    torch::Tensor buf = torch::zeros({2, 12, 1});
    auto out = normuon(g, buf, 0.95);
    auto n0 = g.norm(2, {-2, -1}), n1 = out.norm(2, {-2, -1});
    QVERIFY(torch::allclose(n0, n1, 1e-5, 1e-6));
    // First step: buf = 0.05·mean(g², row), so every row is rescaled to the same RMS.
    auto row_rms = out.square().mean(-1).sqrt();
    QVERIFY(torch::allclose(row_rms, row_rms.mean(-1, true).expand_as(row_rms), 1e-4, 1e-6));
    QVERIFY(torch::allclose(buf, 0.05 * g.square().mean(-1, true), 1e-6, 1e-8));
    // Wide matrices reduce over columns.
    auto w = torch::randn({1, 4, 9});
    torch::Tensor bw = torch::zeros({1, 1, 9});
    normuon(w, bw, 0.95);
    QVERIFY(bw.abs().min().item<double>() > 0);
  }

  void bieq_ramp_and_equilibration() {
    QCOMPARE(ramp(0, 25), 0.0);
    QCOMPARE(ramp(5, 25), 0.04);
    QCOMPARE(ramp(25, 25), 1.0);
    QCOMPARE(ramp(80, 25), 1.0);
    QCOMPARE(ramp(40, 80), 0.25);
    auto m = torch::randn({6, 10}) *
             torch::linspace(0.1, 5.0, 6).unsqueeze(1);  // rows of very different scale
    QVERIFY(torch::equal(bieq(m, 2, 0.0), m));
    // α = 1: after the column step every column has RMS 1, rows are close to 1 after two passes.
    auto full = bieq(m, 2, 1.0);
    QVERIFY(torch::allclose(full.square().mean(0).sqrt(), torch::ones({10}), 1e-5, 1e-6));
    auto row_rms = full.square().mean(1).sqrt();
    QVERIFY((row_rms - 1).abs().max().item<double>() < 0.2);
    // Partial α, closed form: a rank-one k·a·bᵀ stays rank one, each row step mapping
    // (k, a, b) → (k^{1−α}·rms(b)^{−α}, a^{1−α}, b) and each column step
    // (k, a, b) → (k^{1−α}·rms(a)^{−α}, a, b^{1−α}); so after P passes the matrix is
    // K·(a bᵀ)^{(1−α)^P}, entry by entry.
    const std::vector<double> av{0.2, 1.5, 3.0, 0.7, 9.0}, bv{2.0, 0.1, 0.5, 4.0};
    auto rms = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x * x;
      return std::sqrt(s / static_cast<double>(v.size()));
    };
    auto rank_one = torch::zeros({5, 4}, torch::kFloat64);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 4; ++j) rank_one[i][j] = av[i] * bv[j];
    for (double alpha : {0.36, 0.8}) {
      for (int passes : {1, 2}) {
        double k = 1;
        auto a = av, b = bv;
        for (int p = 0; p < passes; ++p) {
          k = std::pow(k, 1 - alpha) * std::pow(rms(b), -alpha);
          for (double& x : a) x = std::pow(x, 1 - alpha);
          k = std::pow(k, 1 - alpha) * std::pow(rms(a), -alpha);
          for (double& x : b) x = std::pow(x, 1 - alpha);
        }
        auto got = bieq(rank_one.to(torch::kFloat32), passes, alpha).to(torch::kFloat64);
        double worst = 0;
        for (int i = 0; i < 5; ++i)
          for (int j = 0; j < 4; ++j)
            worst = std::max(worst, std::abs(got[i][j].item<double>() / (k * a[i] * b[j]) - 1));
        QVERIFY2(
            worst < 1e-5,
            qPrintable(
                QString("α %1, %2 passes: relative error %3").arg(alpha).arg(passes).arg(worst)));
      }
    }
    // The spread of row scales shrinks monotonically with α.
    auto spread = [&](double al) {
      auto rr = bieq(m, 2, al).square().mean(1).sqrt();
      return (rr.max() / rr.min()).item<double>();
    };
    QVERIFY(spread(0.0) > spread(0.25) && spread(0.25) > spread(1.0));
  }

  void neumann_gram_keeps_the_mean() {
    auto g = torch::randn({50, 8}) + torch::linspace(-1, 1, 8);  // a strong mean direction
    auto out = neumann_gram(g, 1.0);
    QVERIFY(torch::allclose(out.mean(0), g.mean(0), 1e-5, 1e-6));
    QVERIFY((out - g).abs().max().item<double>() > 1e-3);  // it did change the centred part
    QVERIFY(torch::allclose(neumann_gram(g, 0.0), g));
    // Closed form: with centred columns U_j = s_j·h_j, h_j orthogonal ±1 columns of an 8 × 8
    // Hadamard matrix (orthogonal to the all-ones column, so of mean zero), UᵀU = 8·diag(s²) and
    // ‖UᵀU‖_F = 8‖s²‖₂: the update U − ½α·U·UᵀU/‖UᵀU‖_F scales column j by 1 − ½α·s_j²/‖s²‖₂,
    // and the mean row μ passes unchanged.
    const double s_col[4] = {3.0, 1.0, 0.5, 2.0}, mu_col[4] = {0.3, -1.0, 2.0, 0.5};
    double s2_norm = 0;
    for (double x : s_col) s2_norm += x * x * x * x;
    s2_norm = std::sqrt(s2_norm);
    auto h = [](int i, int j) {
      return __builtin_popcount(static_cast<unsigned>(i & j)) % 2 ? -1.0 : 1.0;
    };
    auto table = torch::zeros({8, 4}, torch::kFloat64),
         want = torch::zeros({8, 4}, torch::kFloat64);
    const double al = 0.3;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) {
        const double u = s_col[j] * h(i, j + 1);
        table[i][j] = mu_col[j] + u;
        want[i][j] = mu_col[j] + u * (1 - 0.5 * al * s_col[j] * s_col[j] / s2_norm);
      }
    QVERIFY(torch::allclose(neumann_gram(table.to(torch::kFloat32), al).to(torch::kFloat64), want,
                            1e-5, 1e-6));
    // Whitening compresses the dominant centred direction relative to the weakest one.
    auto mu = g.to(torch::kFloat64).mean(0, true);
    auto s_in = torch::linalg::svdvals(g.to(torch::kFloat64) - mu, c10::nullopt),
         s_out =
             torch::linalg::svdvals(neumann_gram(g, 1.0).to(torch::kFloat64) - mu, c10::nullopt);
    QVERIFY((s_out.max() / s_out.min()).item<double>() < (s_in.max() / s_in.min()).item<double>());
  }

  void schedule_boundaries() {
    gllm::OptimConfig c;
    auto s = Schedule::from_config(c, 953);
    QCOMPARE(s.progress(0), 0.0);
    QCOMPARE(s.lr_multiplier(0), 1.0);
    QCOMPARE(s.lr_multiplier(476), 1.0);  // p = 0.4995
    QVERIFY(std::abs(s.lr_multiplier(477) - (1 - 477.0 / 953) / 0.5) <
            1e-12);  // first warmdown step
    QVERIFY(s.lr_multiplier(477) < 1.0);
    QCOMPARE(s.lr_multiplier(953), 0.0);
    QCOMPARE(s.muon_momentum(0), 0.85);
    QVERIFY(std::abs(s.muon_momentum(150) - 0.90) < 1e-12);
    QVERIFY(std::abs(s.muon_momentum(300) - 0.95) < 1e-12);
    QVERIFY(std::abs(s.muon_momentum(900) - 0.95) < 1e-12);  // no cooldown in the baseline
    QCOMPARE(s.muon_weight_decay(0), 0.2);
    QVERIFY(std::abs(s.muon_weight_decay(953) - 0.0) < 1e-12);
    QVERIFY(std::abs(s.muon_weight_decay(476) - 0.2 * (1 - 476.0 / 953)) < 1e-12);
    // Seed-001 Tier 1: cooldown 0.95 → 0.85 over the last half, cosine weight decay.
    c.momentum_cooldown = true;
    c.cosine_weight_decay = true;
    auto t = Schedule::from_config(c, 1000);
    QVERIFY(std::abs(t.muon_momentum(499) - 0.95) < 1e-12);
    QVERIFY(std::abs(t.muon_momentum(500) - 0.95) < 1e-12);
    QVERIFY(std::abs(t.muon_momentum(750) - 0.90) < 1e-12);
    QVERIFY(std::abs(t.muon_momentum(1000) - 0.85) < 1e-12);
    QVERIFY(std::abs(t.muon_weight_decay(500) - 0.1) < 1e-12);
    QVERIFY(std::abs(t.muon_weight_decay(1000)) < 1e-12);
    // Seed 001's progress: p = min(max(step − 11, 0) / (953 − 11), 1).
    c.progress_skip = 11;
    auto u = Schedule::from_config(c, 953);
    QCOMPARE(u.progress(5), 0.0);
    QCOMPARE(u.progress(11), 0.0);
    QVERIFY(std::abs(u.progress(482) - 0.5) < 1e-12);
    QCOMPARE(u.lr_multiplier(481), 1.0);
    QCOMPARE(u.progress(953), 1.0);
    // final_lr_frac blends the end of the warmdown.
    gllm::OptimConfig f;
    f.final_lr_frac = 0.1;
    QVERIFY(std::abs(Schedule::from_config(f, 100).lr_multiplier(100) - 0.1) < 1e-12);
  }
};

QTEST_APPLESS_MAIN(TestOptimBlocks)
#include "test_optim_blocks.moc"
