// AutocastScope on the CPU: an explicit bf16 scope computes matmuls in bf16 while parameters and
// gradients stay fp32, restores the previous state, and train.dtype "bf16" opens it on either
// device.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <QtTest>
#include <cmath>

#include "engine/dist/device.h"
#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "tests/support/test_configs.h"

using namespace gllm;

namespace {

// The dtype autocast gives an fp32 CPU matmul right now.
torch::ScalarType cpu_matmul_dtype() {
  auto a = torch::ones({4, 4}), b = torch::ones({4, 4});
  return torch::matmul(a, b).scalar_type();
}

RunConfig tiny() {
  RunConfig c = gllm::test::tiny_model(2, 32, 2, 31, 12);
  c.model.window_pattern = "SL";
  c.model.short_window = 4;
  c.grading.attention = true;
  c.grading.head_grades = "random";
  return c;
}

}  // namespace

class TestDistAutocast : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void cpuBf16Scope() {
    QCOMPARE(cpu_matmul_dtype(), torch::kFloat);
    {
      dist::AutocastScope ac(torch::Device(torch::kCPU), at::kBFloat16);
      QVERIFY(ac.active());
      QCOMPARE(cpu_matmul_dtype(), torch::kBFloat16);
      {  // a nested training scope keeps bf16 and leaves the outer one open when it ends
        dist::AutocastScope inner(torch::Device(torch::kCPU), std::string("bf16"));
        QVERIFY(inner.active());
        QCOMPARE(cpu_matmul_dtype(), torch::kBFloat16);
      }
      QCOMPARE(cpu_matmul_dtype(), torch::kBFloat16);
    }
    QCOMPARE(cpu_matmul_dtype(), torch::kFloat);  // restored
  }

  // A graded GPT's loss under the CPU bf16 scope: finite, close to fp32, and backward leaves fp32
  // parameters with fp32 gradients.
  void modelLossUnderScope() {
    GPT m(tiny());
    {
      torch::NoGradGuard ng;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(2));
      for (auto& tp : m->tagged_parameters())
        if (tp.group != "grades") tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.1, gen));
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(8));
    auto idx = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    auto tgt = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    double l32;
    {
      torch::NoGradGuard ng;
      l32 = m->loss(idx, tgt).total.item<double>();
    }
    double l16;
    {
      dist::AutocastScope ac(torch::Device(torch::kCPU), at::kBFloat16);
      QVERIFY(ac.active());
      // The attention projections run in bf16 inside the scope.
      auto h = m->parts().blocks[0].c_q(torch::randn({2, 12, 32}));
      QCOMPARE(h.scalar_type(), torch::kBFloat16);
      m->zero_grad();
      auto loss = m->loss(idx, tgt).total;
      l16 = loss.item<double>();
      loss.backward();
    }
    const double rel = std::abs(l16 - l32) / std::abs(l32);
    qInfo("loss fp32 %.6f, bf16 autocast %.6f (relative %.2e)", l32, l16, rel);
    QVERIFY(std::isfinite(l16));
    QVERIFY2(l16 != l32, "the bf16 loss equals the fp32 loss: autocast did not act");
    QVERIFY2(rel < 2e-2, qPrintable(QString::number(rel)));
    int with_grad = 0;
    for (auto& tp : m->tagged_parameters()) {
      QCOMPARE(tp.param.scalar_type(), torch::kFloat);
      if (!tp.param.grad().defined()) continue;
      QVERIFY2(tp.param.grad().scalar_type() == torch::kFloat, tp.name.c_str());
      QVERIFY2(torch::isfinite(tp.param.grad()).all().item<bool>(), tp.name.c_str());
      ++with_grad;
    }
    QVERIFY(with_grad > 10);
    QCOMPARE(cpu_matmul_dtype(), torch::kFloat);
  }

  // Training's scope follows train.dtype on either device: "bf16" opens a bf16 region on the CPU
  // too (closed again at the end of the scope), "fp32" none; unsupported pairs are refused with a
  // message.
  void trainingScopeAndRefusals() {
    {
      dist::AutocastScope cpu_bf16(torch::Device(torch::kCPU), std::string("bf16"));
      QVERIFY(cpu_bf16.active());
      QVERIFY(dist::autocast_active(torch::Device(torch::kCPU)));
      QCOMPARE(cpu_matmul_dtype(), torch::kBFloat16);
    }
    QVERIFY(!dist::autocast_active(torch::Device(torch::kCPU)));
    dist::AutocastScope cpu_fp32(torch::Device(torch::kCPU), std::string("fp32"));
    QVERIFY(!cpu_fp32.active());
    QCOMPARE(cpu_matmul_dtype(), torch::kFloat);
    QVERIFY_THROWS_EXCEPTION(Error,
                             dist::AutocastScope(torch::Device(torch::kCPU), std::string("fp16")));
    QVERIFY_THROWS_EXCEPTION(Error, dist::AutocastScope(torch::Device(torch::kCPU), at::kHalf));
    QVERIFY_THROWS_EXCEPTION(Error, dist::AutocastScope(torch::Device(torch::kCPU), at::kFloat));
  }
};

QTEST_APPLESS_MAIN(TestDistAutocast)
#include "test_dist_autocast.moc"
