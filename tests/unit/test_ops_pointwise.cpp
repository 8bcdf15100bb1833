// The fused RMSNorm, rotary embedding and ReLU² against their formulas in float64 ATen ops: values
// and gradients (random upstream gradients), row lengths off the vector width.
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>
#include <cfloat>

#include "engine/io/error.h"
#include "engine/ops/pointwise.h"
#include "tests/support/kernel_paths.h"

using namespace gllm;
using namespace gllm::ops;

namespace {

at::Generator gen_for(int64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// f applied to fp32 x through the fused op and the float64 reference g: returns the largest
// |Δ value| and |Δ dL/dx| for L = Σ w ⊙ f(x) with random w.
struct Gap {
  double value, grad;
};
template <typename Fused, typename Reference>
Gap compare(const torch::Tensor& x32, Fused fused, Reference reference, int64_t seed) {
  auto w = torch::randn(x32.sizes(), gen_for(seed));
  auto xf = x32.clone().requires_grad_(true);
  auto yf = fused(xf);
  (yf * w).sum().backward();
  auto xd = x32.to(torch::kDouble).requires_grad_(true);
  auto yd = reference(xd);
  (yd * w.to(torch::kDouble)).sum().backward();
  return {max_abs_diff(yf, yd), max_abs_diff(xf.grad(), xd.grad())};
}

torch::Tensor reference_rms(const torch::Tensor& x) {
  return x * torch::rsqrt(x.pow(2).mean(-1, true) + FLT_EPSILON);
}

// Half-split rotation with (T, Dh/2) tables, in x's dtype.
torch::Tensor reference_rope(const torch::Tensor& x, const torch::Tensor& cos,
                             const torch::Tensor& sin) {
  const int64_t T = x.size(1), half = x.size(3) / 2;
  auto c = cos.narrow(0, 0, T).to(x.scalar_type()).view({1, T, 1, half});
  auto s = sin.narrow(0, 0, T).to(x.scalar_type()).view({1, T, 1, half});
  auto x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * c + x2 * s, x2 * c - x1 * s}, -1);
}

std::pair<torch::Tensor, torch::Tensor> rope_tables(int64_t T, int64_t half) {
  auto inv = torch::pow(10000.0, -torch::arange(half, torch::kDouble) / static_cast<double>(half));
  auto ang = torch::outer(torch::arange(T, torch::kDouble), inv);  // (T, half)
  return {ang.cos().to(torch::kFloat).contiguous(), ang.sin().to(torch::kFloat).contiguous()};
}

}  // namespace

class TestFusedOps : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Every test once per path: the kernels at each ISA this CPU runs, and the library path.
  void initTestCase_data() { gllm::test::add_kernel_path_rows(); }
  void init() { gllm::test::enter_kernel_path(); }

  void rmsNormMatchesReference_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("width");
    QTest::addColumn<double>("scale");
    QTest::newRow("model width 128") << 2048 << 128 << 1.0;
    QTest::newRow("head width 32, many rows") << 8192 << 32 << 3.0;
    QTest::newRow("odd width 37 (vector tail)") << 101 << 37 << 0.5;
    QTest::newRow("width 5 below one vector") << 9 << 5 << 2.0;
    QTest::newRow("tiny values near eps") << 64 << 16 << 1e-4;
  }
  void rmsNormMatchesReference() {
    QFETCH(int, rows);
    QFETCH(int, width);
    QFETCH(double, scale);
    auto x = torch::randn({rows, width}, gen_for(rows + width)) * scale;
    auto gap = compare(
        x, [](const torch::Tensor& t) { return ops::fused_rms_norm(t, FLT_EPSILON); },
        reference_rms, 3);
    qInfo("rows %d width %d: max |Δy| %.3g, max |Δdx| %.3g", rows, width, gap.value, gap.grad);
    QVERIFY2(gap.value < 2e-5, qPrintable(QString::number(gap.value)));
    // The gradient scales with 1/rms(x): compare relative to it.
    const double rel = gap.grad * scale;
    QVERIFY2(rel < 5e-5, qPrintable(QString::number(rel)));
  }

  void rmsNormOfThreeDimensionalInput() {
    auto x = torch::randn({3, 7, 24}, gen_for(5));
    auto gap = compare(
        x, [](const torch::Tensor& t) { return ops::fused_rms_norm(t, FLT_EPSILON); },
        reference_rms, 6);
    QVERIFY(gap.value < 2e-5);
    QVERIFY(gap.grad < 5e-5);
  }

  void ropeMatchesReference_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("seq");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("tableLen");
    QTest::newRow("tiny-cpu shape") << 8 << 256 << 4 << 32 << 256;
    QTest::newRow("odd heads, Dh 10, longer table") << 3 << 17 << 3 << 10 << 40;
    QTest::newRow("Dh 2") << 2 << 5 << 1 << 2 << 5;
  }
  void ropeMatchesReference() {
    QFETCH(int, batch);
    QFETCH(int, seq);
    QFETCH(int, heads);
    QFETCH(int, headDim);
    QFETCH(int, tableLen);
    auto [cos, sin] = rope_tables(tableLen, headDim / 2);
    auto x = torch::randn({batch, seq, heads, headDim}, gen_for(seq * heads));
    auto gap = compare(
        x, [&](const torch::Tensor& t) { return ops::fused_rope(t, cos, sin); },
        [&](const torch::Tensor& t) { return reference_rope(t, cos, sin); }, 9);
    qInfo("rope (%d, %d, %d, %d): max |Δy| %.3g, max |Δdx| %.3g", batch, seq, heads, headDim,
          gap.value, gap.grad);
    QVERIFY(gap.value < 1e-5);
    QVERIFY(gap.grad < 1e-5);
  }

  void ropeIsARotation() {
    // Independent of the reference formula: every (x1_j, x2_j) pair keeps its length.
    auto [cos, sin] = rope_tables(64, 8);
    auto x = torch::randn({2, 64, 3, 16}, gen_for(11));
    auto y = ops::fused_rope(x, cos, sin);
    auto len = [](const torch::Tensor& t) {
      return t.narrow(-1, 0, 8).pow(2) + t.narrow(-1, 8, 8).pow(2);
    };
    QVERIFY(max_abs_diff(len(x), len(y)) < 1e-4);
    // Position 0 has angle 0: the identity there.
    QVERIFY(max_abs_diff(x.select(1, 0), y.select(1, 0)) == 0.0);
  }

  void reluSquareMatchesReference() {
    auto x = torch::randn({4, 33, 515}, gen_for(13));
    x.view({-1}).narrow(0, 0, 10).zero_();  // exact zeros: gradient 0 there, as relu's
    auto gap = compare(
        x, [](const torch::Tensor& t) { return ops::fused_relu_square(t); },
        [](const torch::Tensor& t) {
          auto r = torch::relu(t);
          return r * r;
        },
        14);
    QVERIFY(gap.value < 1e-5);
    QVERIFY(gap.grad < 1e-5);
  }

  void unsupportedTensorsAreRefused() {
    auto x = torch::randn({4, 6});
    QVERIFY(ops::fused_ops_support(x));
    QVERIFY(!ops::fused_ops_support(x.t()));                 // not contiguous
    QVERIFY(!ops::fused_ops_support(x.to(torch::kDouble)));  // fp64 goes to ATen
    QVERIFY(!ops::fused_ops_support(torch::Tensor()));
    QVERIFY_THROWS_EXCEPTION(Error, ops::fused_rms_norm(x.t(), 1e-6));
    auto [cos, sin] = rope_tables(3, 2);
    QVERIFY_THROWS_EXCEPTION(
        Error, ops::fused_rope(torch::randn({1, 5, 1, 4}), cos, sin));  // table shorter than T
    QVERIFY_THROWS_EXCEPTION(Error,
                             ops::fused_rope(torch::randn({1, 3, 1, 5}), cos, sin));  // odd Dh
  }

  void noGraphUnderNoGrad() {
    auto x = torch::randn({5, 8}).requires_grad_(true);
    torch::NoGradGuard ng;
    auto y = ops::fused_rms_norm(x, FLT_EPSILON);
    QVERIFY(!y.requires_grad());
    QVERIFY(max_abs_diff(y, reference_rms(x.to(torch::kDouble))) < 2e-6);
  }
};

QTEST_GUILESS_MAIN(TestFusedOps)
#include "test_ops_pointwise.moc"
