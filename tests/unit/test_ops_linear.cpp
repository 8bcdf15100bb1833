// The register-tiled panel products and the linear layers built on them, against float64 ATen:
// partial row tiles and panels, several column blocks, both packings, the row epilogue, gradients,
// fallbacks.
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>
#include <vector>

#include "engine/ops/linear.h"
#include "engine/ops/panel_gemm.h"
#include "engine/ops/pointwise.h"
#include "tests/support/kernel_paths.h"

using namespace gllm;
using namespace gllm::ops;

namespace {

torch::Tensor normal(std::vector<int64_t> sizes, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::empty(sizes).normal_(0.0, 1.0, gen);
}

double max_rel(const torch::Tensor& got, const torch::Tensor& ref) {
  return (got.to(torch::kDouble) - ref).abs().max().item<double>() /
         std::max(1.0, ref.abs().max().item<double>());
}

}  // namespace

class TestTiledLinear : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Every test once per path: the panels at AVX2 and AVX-512 (where the CPU has it), the library.
  void initTestCase_data() { gllm::test::add_kernel_path_rows(ops::kernels::Isa::Avx2); }

  void init() {
    if (ops::kernels::cpu_isa() < ops::kernels::Isa::Avx2)
      QSKIP("this CPU has no AVX2 + FMA: the panel kernels are not used here");
    gllm::test::enter_kernel_path();
    if (!ops::panel::available())
      QSKIP("this CPU has no AVX2 + FMA: the panel kernels are not used here");
  }

  void panelProductMatchesReference_data() {
    QTest::addColumn<qint64>("M");
    QTest::addColumn<qint64>("K");
    QTest::addColumn<qint64>("N");
    QTest::newRow("one element") << qint64(1) << qint64(1) << qint64(1);
    QTest::newRow("partial tile and panel") << qint64(5) << qint64(3) << qint64(17);
    QTest::newRow("two tiles, odd sizes") << qint64(13) << qint64(40) << qint64(37);
    // K = 128: blocks of 16 panels, so N = 600 spans three column blocks (the last one partial).
    QTest::newRow("several column blocks") << qint64(64) << qint64(128) << qint64(600);
    QTest::newRow("long inner dimension") << qint64(7) << qint64(1024) << qint64(20);
  }

  void panelProductMatchesReference() {
    QFETCH(qint64, M);
    QFETCH(qint64, K);
    QFETCH(qint64, N);
    // A inside a wider buffer (lda > K), C too (ldc > N): strides must be honoured.
    auto A_full = normal({M, K + 3}, 1), B = normal({K, N}, 2);
    auto A = A_full.narrow(1, 0, K);
    auto ref = torch::mm(A.to(torch::kDouble), B.to(torch::kDouble));  // (M, N)
    for (bool transposed : {false, true}) {
      std::vector<float> panels(ops::panel::packed_floats(K, N) + 8);
      float* aligned = panels.data() + (8 - reinterpret_cast<uintptr_t>(panels.data()) / 4 % 8) % 8;
      if (transposed) {
        auto Bt = B.t().contiguous();  // (N, K)
        ops::panel::pack_transposed(Bt.data_ptr<float>(), K, N, K, aligned);
      } else {
        ops::panel::pack(B.data_ptr<float>(), N, K, N, aligned);
      }
      auto C_full = torch::full({M, N + 5}, 7.0f);
      // The epilogue sees every (row, column) once, after the row's segment is final: it records
      // the segment's sum, which must match the reference's.
      auto seen = torch::zeros({M, N}, torch::kInt);
      std::vector<double> epi_sum(M, 0.0);
      const ops::panel::RowEpilogue record = [&](int64_t i, int64_t col0, int64_t cols) {
        const float* c = C_full.data_ptr<float>() + i * (N + 5) + col0;
        for (int64_t j = 0; j < cols; ++j) {
          seen[i][col0 + j] += 1;
          epi_sum[i] += c[j];
        }
      };
      ops::panel::multiply(A.data_ptr<float>(), K + 3, M, K, aligned, N, C_full.data_ptr<float>(),
                           N + 5, &record);
      const double err = max_rel(C_full.narrow(1, 0, N), ref);
      qInfo("%s packing: max relative |ΔC| %.3g", transposed ? "transposed" : "plain", err);
      QVERIFY(err < 1e-5);
      QVERIFY2(C_full.narrow(1, N, 5).eq(7.0f).all().item<bool>(), "columns past N were written");
      QVERIFY2(seen.eq(1).all().item<bool>(),
               "the epilogue did not see every element exactly once");
      auto row_sums = ref.sum(1);
      for (int64_t i = 0; i < M; ++i) {
        const double want = row_sums[i].item<double>();
        QVERIFY(std::abs(epi_sum[i] - want) < 1e-4 * (1.0 + std::abs(want)));
      }
    }
  }

  void linearMatchesReferenceWithGradients() {
    auto x0 = normal({2, 101, 40}, 3), W0 = normal({37, 40}, 4),
         g = normal({2, 101, 37}, 5);  // 202 rows
    QVERIFY(ops::linear_uses_panels(x0, W0));
    auto xr = x0.to(torch::kDouble).requires_grad_(true),
         Wr = W0.to(torch::kDouble).requires_grad_(true);
    auto ref = torch::linear(xr, Wr);
    (ref * g.to(torch::kDouble)).sum().backward();
    auto x = x0.clone().requires_grad_(true), W = W0.clone().requires_grad_(true);
    auto y = ops::linear(x, W);
    QCOMPARE(y.sizes(), ref.sizes());
    (y * g).sum().backward();
    const double dy = max_rel(y.detach(), ref.detach()), dx = max_rel(x.grad(), xr.grad()),
                 dW = max_rel(W.grad(), Wr.grad());
    qInfo("max relative |Δy| %.3g, |Δdx| %.3g, |ΔdW| %.3g", dy, dx, dW);
    QVERIFY(dy < 1e-5);
    QVERIFY(dx < 1e-5);
    QVERIFY(dW < 1e-5);
  }

  void fallsBackWhereThePanelsDoNotApply() {
    // Too wide an inner dimension, too few rows, fused ops off, a bf16 input: torch::linear, same
    // values.
    auto x = normal({ops::panel::kMinRows, ops::panel::kMaxInner + 1}, 6),
         W = normal({5, ops::panel::kMaxInner + 1}, 7);
    QVERIFY(!ops::linear_uses_panels(x, W));
    QVERIFY((ops::linear(x, W) - torch::linear(x, W)).abs().max().item<double>() < 1e-4);
    auto xs = normal({ops::panel::kMinRows, 8}, 8), Ws = normal({6, 8}, 9);
    QVERIFY(ops::linear_uses_panels(xs, Ws));
    QVERIFY(!ops::linear_uses_panels(xs.narrow(0, 1, ops::panel::kMinRows - 1), Ws));
    const bool was = ops::set_fused_ops_enabled(false);
    QVERIFY(!ops::linear_uses_panels(xs, Ws));
    ops::set_fused_ops_enabled(was);
    QVERIFY(!ops::linear_uses_panels(xs.to(torch::kBFloat16), Ws));
    QCOMPARE(ops::linear(xs.to(torch::kBFloat16), Ws.to(torch::kBFloat16)).scalar_type(),
             torch::kBFloat16);
  }
};

QTEST_MAIN(TestTiledLinear)
#include "test_ops_linear.moc"
