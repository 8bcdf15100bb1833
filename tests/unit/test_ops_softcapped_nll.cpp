// The fused soft-capped cross-entropy against the same formula in float64 ATen ops: nats, gradients
// (chain through c·tanh(x/c), the bias, ignored targets, the output layer; the chunked CUDA form
// too), the uncapped case, bad targets.
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>

#include "engine/io/error.h"
#include "engine/ops/softcapped_nll.h"
#include "tests/support/kernel_paths.h"

using namespace gllm;
using namespace gllm::ops;

namespace {

// −log softmax(c·tanh(x/c) + b)[y] in float64 ATen ops; rows with y < 0 give 0. x (N, V), y (N).
torch::Tensor reference_nats(const torch::Tensor& x, const torch::Tensor& y, double cap,
                             const torch::Tensor& b) {
  auto z = cap > 0 ? cap * torch::tanh(x / cap) : x;  // (N, V)
  if (b.defined()) z = z + b.to(z.scalar_type());
  auto logp = torch::log_softmax(z, -1);
  auto nll = -logp.gather(1, y.clamp_min(0).unsqueeze(1)).squeeze(1);  // (N)
  return nll * (y >= 0).to(nll.scalar_type());
}

struct Case {
  torch::Tensor x, y, b, w;  // logits (N, V), targets (N), bias (V), per-row weights (N)
};

// bias_spread: standard deviation of the bias (0: no bias).
Case make_case(int64_t N, int64_t V, double spread, double bias_spread, int64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  Case c;
  c.x = torch::empty({N, V}).normal_(0.0, spread, gen);
  c.y = torch::randint(0, V, {N}, gen, torch::kLong);
  c.y[1] = -1;  // an ignored position
  if (bias_spread > 0) c.b = torch::empty({V}).normal_(0.0, bias_spread, gen);
  c.w = torch::empty({N}).uniform_(0.5, 2.0, gen);
  return c;
}

}  // namespace

class TestSoftcapLoss : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Every test once per path: the kernels at each ISA this CPU runs, and the library path.
  void initTestCase_data() { gllm::test::add_kernel_path_rows(); }
  void init() { gllm::test::enter_kernel_path(); }

  void matchesReferenceValuesAndGradients_data() {
    QTest::addColumn<double>("cap");
    QTest::addColumn<double>("bias");
    QTest::addColumn<double>("spread");
    QTest::addColumn<int>("vocab");
    // Capped rows take one pass under a fixed shift unless 2c + the bias range exceeds 60.
    QTest::newRow("cap 15, baseline logits") << 15.0 << 0.0 << 3.0 << 8192;
    QTest::newRow("cap 15, large logits saturate") << 15.0 << 0.0 << 60.0 << 1000;
    QTest::newRow("cap 15 with a tilt bias") << 15.0 << 0.7 << 5.0 << 517;
    QTest::newRow("cap 15, bias too wide for one pass") << 15.0 << 12.0 << 30.0 << 517;
    QTest::newRow("cap 28, just inside one pass") << 28.0 << 0.3 << 80.0 << 2000;
    QTest::newRow("cap 2, odd vocabulary") << 2.0 << 0.0 << 1.0 << 37;
    QTest::newRow("no cap") << 0.0 << 0.0 << 4.0 << 300;
    QTest::newRow("no cap with bias") << 0.0 << 0.7 << 4.0 << 19;
  }
  void matchesReferenceValuesAndGradients() {
    QFETCH(double, cap);
    QFETCH(double, bias);
    QFETCH(double, spread);
    QFETCH(int, vocab);
    auto c = make_case(13, vocab, spread, bias, 7 + vocab);
    auto x = c.x.clone().requires_grad_(true);
    auto nats = ops::softcapped_nll(x, c.y, cap, c.b);  // (N)
    QCOMPARE(nats.sizes(), c.y.sizes());
    (nats * c.w).sum().backward();

    auto xr = c.x.to(torch::kDouble).requires_grad_(true);
    auto ref = reference_nats(xr, c.y, cap, c.b);
    (ref * c.w.to(torch::kDouble)).sum().backward();

    const double value_err = (nats.to(torch::kDouble) - ref).abs().max().item<double>();
    const double grad_err = (x.grad().to(torch::kDouble) - xr.grad()).abs().max().item<double>();
    const double grad_scale = xr.grad().abs().max().item<double>();
    qInfo("max |Δnats| %.3g, max |Δgrad| %.3g (largest gradient %.3g)", value_err, grad_err,
          grad_scale);
    QVERIFY2(value_err < 2e-5, "fused nats differ from the float64 reference");
    QVERIFY2(grad_err < 2e-6 * std::max(1.0, grad_scale),
             "fused gradient differs from the float64 reference");
    QCOMPARE(nats[1].item<float>(), 0.0f);
    QCOMPARE(x.grad()[1].abs().max().item<float>(), 0.0f);  // ignored rows get no gradient
  }

  void evaluationWithoutGraphGivesTheSameNats() {
    auto c = make_case(9, 4096, 3.0, 0.7, 3);
    auto with_graph =
        ops::softcapped_nll(c.x.clone().requires_grad_(true), c.y, 15.0, c.b).detach();
    torch::NoGradGuard ng;
    auto without = ops::softcapped_nll(c.x, c.y, 15.0, c.b);
    QCOMPARE((with_graph - without).abs().max().item<float>(), 0.0f);
  }

  void gradientMatchesFiniteDifferences() {
    // Independent of ATen's tanh/log_softmax: central differences of the fused value itself.
    auto c = make_case(3, 11, 6.0, 0.7, 5);
    auto x = c.x.clone().requires_grad_(true);
    ops::softcapped_nll(x, c.y, 4.0, c.b).sum().backward();
    torch::NoGradGuard ng;
    const float h = 1e-2f;
    double worst = 0;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 11; ++j) {
        auto xp = c.x.clone(), xm = c.x.clone();
        xp[i][j] += h;
        xm[i][j] -= h;
        const double fd = (ops::softcapped_nll(xp, c.y, 4.0, c.b).sum().item<double>() -
                           ops::softcapped_nll(xm, c.y, 4.0, c.b).sum().item<double>()) /
                          (2.0 * h);
        worst = std::max(worst, std::abs(fd - x.grad()[i][j].item<double>()));
      }
    qInfo("max |analytic − finite difference| %.3g", worst);
    QVERIFY(worst < 2e-3);
  }

  // The linear form takes the panel product (6 rows × 16 columns, column blocks of 128 KiB of
  // packed W) when one pass applies and there are at least ops::panel::kMinRows rows: shapes with
  // partial row tiles, partial panels and several column blocks; few rows, a bias too wide for one
  // pass and no cap take the BLAS product instead.
  void linearFormMatchesReferenceForHiddenAndWeight_data() {
    QTest::addColumn<qint64>("N");
    QTest::addColumn<qint64>("d");
    QTest::addColumn<qint64>("V");
    QTest::addColumn<double>("cap");
    QTest::addColumn<double>("bias_sd");
    QTest::newRow("whole row tiles, one block")
        << qint64(192) << qint64(16) << qint64(301) << 15.0 << 0.5;
    QTest::newRow("partial tile, several blocks")
        << qint64(197) << qint64(40) << qint64(3001) << 15.0 << 0.5;
    QTest::newRow("odd width, cap 2") << qint64(193) << qint64(7) << qint64(19) << 2.0 << 0.5;
    QTest::newRow("few rows: BLAS path") << qint64(4) << qint64(7) << qint64(19) << 2.0 << 0.5;
    QTest::newRow("bias too wide: BLAS path")
        << qint64(13) << qint64(16) << qint64(301) << 15.0 << 20.0;
    QTest::newRow("no cap: BLAS path") << qint64(13) << qint64(16) << qint64(301) << 0.0 << 0.5;
  }

  void linearFormMatchesReferenceForHiddenAndWeight() {
    QFETCH(qint64, N);
    QFETCH(qint64, d);
    QFETCH(qint64, V);
    QFETCH(double, cap);
    QFETCH(double, bias_sd);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    auto h0 = torch::empty({N, d}).normal_(0.0, 1.0, gen);
    auto W0 = torch::empty({V, d}).normal_(0.0, 0.8, gen);
    auto y = torch::randint(0, V, {N}, gen, torch::kLong);
    y[N / 2] = -1;
    auto bias = torch::empty({V}).normal_(0.0, bias_sd, gen);
    auto w = torch::empty({N}).uniform_(0.5, 2.0, gen);
    auto hr = h0.to(torch::kDouble).requires_grad_(true),
         Wr = W0.to(torch::kDouble).requires_grad_(true);
    auto ref = reference_nats(torch::mm(hr, Wr.t()), y, cap, bias);
    (ref * w.to(torch::kDouble)).sum().backward();

    LogitWorkspace ws;
    // Two forwards before either backward (gradient accumulation that keeps both graphs): the
    // second must not overwrite the first's buffer; then a third after both backwards reuses it.
    std::vector<torch::Tensor> hs, Ws, outs;
    for (int k = 0; k < 3; ++k) {
      hs.push_back(h0.clone().requires_grad_(true));
      Ws.push_back(W0.clone().requires_grad_(true));
      if (k == 2) {
        for (int j = 0; j < 2; ++j) (outs[j] * w).sum().backward();
      }
      outs.push_back(ops::linear_softcapped_nll(hs[k], Ws[k], y, cap, bias, ws));
    }
    (outs[2] * w).sum().backward();
    for (int k = 0; k < 3; ++k) {
      const double dv =
          (outs[k].detach().to(torch::kDouble) - ref.detach()).abs().max().item<double>();
      const double dh = (hs[k].grad().to(torch::kDouble) - hr.grad()).abs().max().item<double>();
      const double dW = (Ws[k].grad().to(torch::kDouble) - Wr.grad()).abs().max().item<double>();
      qInfo("pass %d: max |Δnats| %.3g, |Δ dh| %.3g, |Δ dW| %.3g", k, dv, dh, dW);
      QVERIFY(dv < 2e-5);
      QVERIFY(dh < 1e-5 * std::max(1.0, hr.grad().abs().max().item<double>()));
      QVERIFY(dW < 1e-5 * std::max(1.0, Wr.grad().abs().max().item<double>()));
    }
    torch::NoGradGuard ng;
    auto eval = ops::linear_softcapped_nll(h0, W0, y, cap, bias, ws);
    QVERIFY((eval.to(torch::kDouble) - ref.detach()).abs().max().item<double>() < 2e-5);
  }

  // The chunked form (what CUDA runs) in float64 against the ATen formula: nats and both gradients,
  // whatever the chunk (one row, a partial last chunk, all rows at once), with and without the cap
  // and the bias; a second forward before the first backward keeps its own saved state.
  void chunkedFormMatchesReference_data() {
    QTest::addColumn<qint64>("chunk");
    QTest::addColumn<double>("cap");
    QTest::addColumn<bool>("with_bias");
    QTest::newRow("one row a chunk") << qint64(1) << 15.0 << true;
    QTest::newRow("partial last chunk") << qint64(5) << 15.0 << true;
    QTest::newRow("one chunk") << qint64(1000) << 15.0 << true;
    QTest::newRow("no cap") << qint64(5) << 0.0 << true;
    QTest::newRow("no bias") << qint64(5) << 2.0 << false;
  }

  void chunkedFormMatchesReference() {
    QFETCH(qint64, chunk);
    QFETCH(double, cap);
    QFETCH(bool, with_bias);
    const int64_t N = 23, d = 9, V = 37;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
    auto h0 = torch::empty({N, d}, torch::kDouble).normal_(0.0, 1.0, gen);
    auto W0 = torch::empty({V, d}, torch::kDouble).normal_(0.0, 0.8, gen);
    auto y = torch::randint(0, V, {N}, gen, torch::kLong);
    y[3] = -1;
    torch::Tensor bias;
    if (with_bias) bias = torch::empty({V}).normal_(0.0, 0.5, gen);
    auto w = torch::empty({N}, torch::kDouble).uniform_(0.5, 2.0, gen);
    auto hr = h0.clone().requires_grad_(true), Wr = W0.clone().requires_grad_(true);
    auto ref = reference_nats(torch::mm(hr, Wr.t()), y, cap, bias);
    (ref * w).sum().backward();
    std::vector<torch::Tensor> hs, Ws, outs;
    for (int k = 0; k < 2; ++k) {
      hs.push_back(h0.clone().requires_grad_(true));
      Ws.push_back(W0.clone().requires_grad_(true));
      outs.push_back(
          ops::chunked_softcapped_nll(hs[k], Ws[k], y, cap, bias, chunk, torch::kDouble));
    }
    for (int k = 0; k < 2; ++k) {
      (outs[k] * w).sum().backward();
      const double dv = (outs[k].detach() - ref.detach()).abs().max().item<double>();
      const double dh = (hs[k].grad() - hr.grad()).abs().max().item<double>();
      const double dW = (Ws[k].grad() - Wr.grad()).abs().max().item<double>();
      qInfo("pass %d: max |Δnats| %.3g, |Δ dh| %.3g, |Δ dW| %.3g", k, dv, dh, dW);
      // fp32 softmax and log-sum-exp after fp64 products: fp32 rounding, not more.
      QVERIFY(dv < 1e-5);
      QVERIFY(dh < 1e-5 * std::max(1.0, hr.grad().abs().max().item<double>()));
      QVERIFY(dW < 1e-5 * std::max(1.0, Wr.grad().abs().max().item<double>()));
      QCOMPARE(outs[k].scalar_type(), torch::kFloat);
      QCOMPARE(hs[k].grad().scalar_type(), torch::kDouble);
    }
  }

  // bf16 products, as under a CUDA autocast scope: the same nats as the ATen formula on
  // bf16-rounded operands (torch::linear's cast), then fp32.
  void chunkedBf16ProductsMatchTheAtenCasts() {
    const int64_t N = 16, d = 32, V = 50;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(19);
    auto h = torch::empty({N, d}).normal_(0.0, 1.0, gen);
    auto W = torch::empty({V, d}).normal_(0.0, 0.5, gen);
    auto y = torch::randint(0, V, {N}, gen, torch::kLong);
    auto logits = torch::mm(h.to(torch::kBFloat16), W.to(torch::kBFloat16).t()).to(torch::kFloat);
    auto ref = reference_nats(logits.to(torch::kDouble), y, 15.0, {});
    torch::NoGradGuard ng;
    auto got = ops::chunked_softcapped_nll(h, W, y, 15.0, {}, 3, torch::kBFloat16);
    const double err = (got.to(torch::kDouble) - ref).abs().max().item<double>();
    qInfo("max |Δnats| %.3g", err);
    QVERIFY(err < 1e-4);
  }

  void evaluationLogitsInOnePass() {
    for (double cap : {15.0, 0.0}) {
      auto c = make_case(7, 517, 20.0, 0.7, 13);
      auto ref = cap > 0 ? cap * torch::tanh(c.x.to(torch::kDouble) / cap) : c.x.to(torch::kDouble);
      ref = ref + c.b.to(torch::kDouble);
      auto z = c.x.clone();
      ops::softcap_logits_(z, cap, c.b);
      const double err = (z.to(torch::kDouble) - ref).abs().max().item<double>();
      qInfo("cap %g: max |Δlogit| %.3g", cap, err);
      QVERIFY(err < 1e-5);
    }
  }

  void targetOutsideTheVocabularyIsAClearError() {
    auto c = make_case(4, 10, 1.0, 0.0, 2);
    c.y[2] = 10;
    try {
      ops::softcapped_nll(c.x, c.y, 15.0);
      QFAIL("an out-of-vocabulary target was accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("outside the vocabulary"), e.what());
    }
  }
};

QTEST_MAIN(TestSoftcapLoss)
#include "test_ops_softcapped_nll.moc"
