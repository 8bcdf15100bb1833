// The blocked window attention against masked softmax attention in float64 ATen ops: outputs and
// the gradients of q, k, v for short, block-sized, odd and full windows, sequences off the block
// size.
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>
#include <limits>

#include "engine/io/error.h"
#include "engine/ops/pointwise.h"
#include "engine/ops/window_attention.h"
#include "tests/support/kernel_paths.h"

using namespace gllm;
using namespace gllm::ops;

namespace {

at::Generator gen_for(int64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
}

// softmax(scale·q kᵀ + mask) v with mask 0 where 0 ≤ i − j ≤ window, −∞ elsewhere; (B, T, H, Dh) in
// and out, computed in float64 with an explicit (T, T) mask.
torch::Tensor reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        int64_t window, double scale) {
  const int64_t T = q.size(1);
  auto i = torch::arange(T, torch::kLong).unsqueeze(1);
  auto j = torch::arange(T, torch::kLong).unsqueeze(0);
  auto seen = (i - j >= 0).logical_and(i - j <= window);  // (T, T)
  auto mask = torch::zeros({T, T}, torch::kDouble)
                  .masked_fill(seen.logical_not(), -std::numeric_limits<double>::infinity());
  auto qh = q.transpose(1, 2), kh = k.transpose(1, 2), vh = v.transpose(1, 2);  // (B, H, T, Dh)
  auto att = torch::softmax(torch::matmul(qh, kh.transpose(-2, -1)) * scale + mask, -1);
  return torch::matmul(att, vh).transpose(1, 2);  // (B, T, H, Dh)
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

class TestWindowAttention : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Every test once per path: the kernels at each ISA this CPU runs, and the library path.
  void initTestCase_data() { gllm::test::add_kernel_path_rows(); }
  void init() { gllm::test::enter_kernel_path(); }

  void matchesMaskedSoftmax_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("seq");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("window");
    QTest::newRow("tiny-cpu short window") << 2 << 256 << 4 << 32 << 128;
    QTest::newRow("tiny-cpu full causal") << 2 << 256 << 4 << 32 << 256;
    QTest::newRow("window 0 (self only)") << 1 << 70 << 2 << 8 << 0;
    QTest::newRow("window 3, T off the block size") << 2 << 131 << 3 << 24 << 3;
    QTest::newRow("window = block size") << 1 << 200 << 2 << 16 << 64;
    QTest::newRow("window 65 across blocks, Dh 10") << 1 << 190 << 1 << 10 << 65;
    QTest::newRow("window beyond T") << 1 << 40 << 2 << 12 << 1000;
    QTest::newRow("T below one block") << 3 << 9 << 2 << 6 << 4;
  }
  void matchesMaskedSoftmax() {
    QFETCH(int, batch);
    QFETCH(int, seq);
    QFETCH(int, heads);
    QFETCH(int, headDim);
    QFETCH(int, window);
    auto gen = gen_for(seq * 7 + window);
    auto q = torch::randn({batch, seq, heads, headDim}, gen),
         k = torch::randn({batch, seq, heads, headDim}, gen);
    auto v = torch::randn({batch, seq, heads, headDim}, gen),
         w = torch::randn({batch, seq, heads, headDim}, gen);
    const double scale = 1.3 / std::sqrt(static_cast<double>(headDim));

    auto qf = q.clone().requires_grad_(true), kf = k.clone().requires_grad_(true),
         vf = v.clone().requires_grad_(true);
    auto y = ops::window_attention(qf, kf, vf, window, scale);
    (y * w).sum().backward();

    auto qd = q.to(torch::kDouble).requires_grad_(true),
         kd = k.to(torch::kDouble).requires_grad_(true);
    auto vd = v.to(torch::kDouble).requires_grad_(true);
    auto yd = reference(qd, kd, vd, window, scale);
    (yd * w.to(torch::kDouble)).sum().backward();

    const double dy = max_abs_diff(y, yd), dq = max_abs_diff(qf.grad(), qd.grad());
    const double dk = max_abs_diff(kf.grad(), kd.grad()), dv = max_abs_diff(vf.grad(), vd.grad());
    qInfo("max |Δ| y %.2g, dq %.2g, dk %.2g, dv %.2g", dy, dq, dk, dv);
    QVERIFY2(dy < 2e-5, qPrintable(QString::number(dy)));
    QVERIFY2(dq < 5e-5, qPrintable(QString::number(dq)));
    QVERIFY2(dk < 5e-5, qPrintable(QString::number(dk)));
    QVERIFY2(dv < 5e-5, qPrintable(QString::number(dv)));
  }

  void firstQueryAttendsToItselfOnly() {
    // Independent of the reference: query 0 sees key 0 alone, so its output is v_0 exactly (up to
    // the probability 1 being exp(0)/exp(0)).
    auto gen = gen_for(3);
    auto q = torch::randn({1, 100, 2, 8}, gen), k = torch::randn({1, 100, 2, 8}, gen),
         v = torch::randn({1, 100, 2, 8}, gen);
    auto y = ops::window_attention(q, k, v, 10, 0.5);
    QVERIFY(max_abs_diff(y.select(1, 0), v.select(1, 0)) < 1e-6);
    // Window 0: every query returns its own value.
    QVERIFY(max_abs_diff(ops::window_attention(q, k, v, 0, 0.5), v) < 1e-6);
  }

  void refusesWhatItCannotTake() {
    auto q = torch::randn({1, 8, 2, 4});
    QVERIFY(ops::window_attention_supports(q, q, q));
    QVERIFY(!ops::window_attention_supports(q.to(torch::kDouble), q, q));
    QVERIFY(!ops::window_attention_supports(q, q.narrow(1, 0, 4), q));
    QVERIFY(!ops::window_attention_supports(q.transpose(1, 2), q, q));
    QVERIFY_THROWS_EXCEPTION(Error, ops::window_attention(q, q, q, -1, 1.0));
    const bool was = ops::set_fused_ops_enabled(false);
    QVERIFY(!ops::window_attention_supports(q, q, q));
    ops::set_fused_ops_enabled(was);
  }

  void gemmTimeCountsTheBlocks() {
    // Full causal attention over T = 128: the block starting at query r0 sees keys [0, r0 + rows);
    // six products of 2·rows·keys·Dh each per block (two forward, four backward), two heads.
    const int64_t T = 128, Dh = 16, R = ops::window_attention_block_rows;
    double expected = 0;
    for (int64_t r0 = 0; r0 < T; r0 += R)
      expected += 6.0 * 2.0 * std::min(R, T - r0) * std::min(T, r0 + R) * Dh;
    auto [seconds, flops] = ops::window_attention_gemm_time(2, T, Dh, T, 1);
    QVERIFY(seconds > 0);
    QCOMPARE(flops, 2 * expected);
  }
};

QTEST_GUILESS_MAIN(TestWindowAttention)
#include "test_ops_window_attention.moc"
