// gllm::sdpa (the attention operator called boxed through the dispatcher) against a float64
// windowed softmax, forward and gradients; the GPT's fused and matmul attention kernels against
// each other.
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/sdpa.h"
#include "tests/support/test_configs.h"

using namespace gllm;
using Kernel = GPTImpl::AttentionKernel;

namespace {

// (T, T) additive fp32 mask for ops::sdpa(): 0 where 0 <= t − s <= window, −inf elsewhere.
torch::Tensor additive_window_mask(int64_t T, int64_t window) {
  auto m = torch::empty({T, T}, torch::kFloat);
  auto a = m.accessor<float, 2>();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < T; ++s) a[t][s] = (t - s >= 0 && t - s <= window) ? 0.0f : -INFINITY;
  return m;
}

// Float64 reference without a mask: query t attends over keys max(0, t − window)..t only,
// softmax(q_t k_sᵀ/√Dh) v_s. q, k, v (B, H, T, Dh) → (B, H, T, Dh), differentiable.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v, int64_t window) {
  const int64_t T = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  std::vector<torch::Tensor> rows;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t lo = std::max<int64_t>(0, t - window), n = t - lo + 1;
    auto qt = q.narrow(2, t, 1).to(torch::kDouble);                                // (B, H, 1, Dh)
    auto ks = k.narrow(2, lo, n).to(torch::kDouble);                               // (B, H, n, Dh)
    auto p = torch::softmax(torch::matmul(qt, ks.transpose(-2, -1)) * scale, -1);  // (B, H, 1, n)
    rows.push_back(torch::matmul(p, v.narrow(2, lo, n).to(torch::kDouble)));       // (B, H, 1, Dh)
  }
  return torch::cat(rows, 2);  // (B, H, T, Dh)
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// max |a − ref| relative to max(1, max |ref|).
double rel_diff(const torch::Tensor& a, const torch::Tensor& ref) {
  return max_abs_diff(a, ref) / std::max(1.0, ref.to(torch::kDouble).abs().max().item<double>());
}

RunConfig graded_config(int seq) {
  RunConfig c = gllm::test::tiny_model(3, 48, 2, 29, seq);  // Dh = 24: 1/√Dh is not a power of two,
                                                            // so the two paths round differently
  c.model.window_pattern = "SSL";
  c.model.short_window = 3;
  c.model.oe_m = 7;
  c.model.query_scale = true;
  c.grading.attention = true;
  c.grading.head_grades = "random";
  c.grading.random_seed = 5;
  c.grading.grades_trainable = true;
  return c;
}

// Replaces the zero-initialised projections and gates with random values so no path is silent.
void randomize(GPT& m, int64_t seed) {
  torch::NoGradGuard ng;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& tp : m->tagged_parameters()) {
    if (tp.group == "grades" || tp.group == "resid_lambdas" || tp.group == "x0_lambdas") continue;
    tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.3, gen));
  }
}

struct Pass {
  torch::Tensor logits;              // (B, T, V)
  torch::Tensor loss;                // ()
  std::vector<torch::Tensor> grads;  // per tagged parameter (undefined when it got none)
};

Pass run(GPT& m, const torch::Tensor& idx, const torch::Tensor& tgt) {
  Pass p;
  m->zero_grad();
  {
    torch::NoGradGuard ng;
    p.logits = m->forward(idx);
  }
  auto l = m->loss(idx, tgt).total;
  l.backward();
  p.loss = l.detach();
  for (auto& tp : m->tagged_parameters())
    p.grads.push_back(tp.param.grad().defined() ? tp.param.grad().clone() : torch::Tensor());
  return p;
}

}  // namespace

class TestModelSdpa : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    torch::set_num_threads(2);
    QVERIFY2(ops::sdpa_available(), "this LibTorch registers no attention operator");
    qInfo("attention operator: %s", ops::sdpa_operator_name().c_str());
    QVERIFY(ops::sdpa_operator_name().rfind("aten::", 0) == 0);
  }

  // Forward and the gradients of q, k, v against float64 masked softmax, for full causal
  // (is_causal) and sliding windows (additive mask), with and without autograd recording.
  void matchesMaskedSoftmax() {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(3));
    const int64_t B = 2, H = 3, T = 13, Dh = 8;
    auto q0 = torch::randn({B, H, T, Dh}, gen);  // (B, H, T, Dh)
    auto k0 = torch::randn({B, H, T, Dh}, gen);
    auto v0 = torch::randn({B, H, T, Dh}, gen);
    auto g = torch::randn({B, H, T, Dh}, gen);  // upstream gradient
    for (int64_t w : {int64_t(0), int64_t(3), T - 1}) {
      const bool causal = w == T - 1;
      auto mask = causal ? torch::Tensor() : additive_window_mask(T, w);  // (T, T)
      // Reference in float64 with its own gradients.
      auto qd = q0.to(torch::kDouble).requires_grad_(), kd = k0.to(torch::kDouble).requires_grad_(),
           vd = v0.to(torch::kDouble).requires_grad_();
      auto ref = reference_attention(qd, kd, vd, w);  // (B, H, T, Dh)
      (ref * g.to(torch::kDouble)).sum().backward();
      // The operator in fp32 through the dispatcher.
      auto q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(),
           v = v0.clone().requires_grad_();
      auto y = ops::sdpa(q, k, v, mask, causal);  // (B, H, T, Dh)
      QCOMPARE(y.sizes(), (torch::IntArrayRef{B, H, T, Dh}));
      QCOMPARE(y.scalar_type(), torch::kFloat);
      QVERIFY(y.requires_grad());
      (y * g).sum().backward();
      const double dy = max_abs_diff(y, ref), dq = max_abs_diff(q.grad(), qd.grad()),
                   dk = max_abs_diff(k.grad(), kd.grad()), dv = max_abs_diff(v.grad(), vd.grad());
      qInfo("window %lld%s: max |Δy| %.2e, |Δdq| %.2e, |Δdk| %.2e, |Δdv| %.2e",
            static_cast<long long>(w), causal ? " (is_causal)" : "", dy, dq, dk, dv);
      QVERIFY2(dy < 1e-5, qPrintable(QString("forward differs by %1").arg(dy)));
      QVERIFY2(dq < 1e-5 && dk < 1e-5 && dv < 1e-5,
               qPrintable(QString("gradients differ: q %1, k %2, v %3").arg(dq).arg(dk).arg(dv)));
      // Without autograd (1.13 then takes its forward-only kernel).
      torch::NoGradGuard ng;
      auto y_ng = ops::sdpa(q0, k0, v0, mask, causal);
      QVERIFY(!y_ng.requires_grad());
      QVERIFY2(max_abs_diff(y_ng, ref.detach()) < 1e-5,
               "no-grad forward differs from the reference");
    }
    // The full causal mask as an additive mask gives what is_causal gives.
    torch::NoGradGuard ng;
    auto a = ops::sdpa(q0, k0, v0, {}, true),
         b = ops::sdpa(q0, k0, v0, additive_window_mask(T, T), false);
    QVERIFY(max_abs_diff(a, b) < 1e-6);
    // Both a mask and is_causal is refused with a message.
    QVERIFY_THROWS_EXCEPTION(Error, ops::sdpa(q0, k0, v0, additive_window_mask(T, 2), true));
  }

  // A missing (or non-attention) operator is a gllm::Error naming what to do; the named operator
  // itself gives ops::sdpa()'s result.
  void missingOperatorIsAnError() {
    auto q = torch::randn({1, 2, 5, 4}), k = torch::randn({1, 2, 5, 4}),
         v = torch::randn({1, 2, 5, 4});
    try {
      gllm::ops::detail::sdpa_with_operator("aten::no_such_attention", q, k, v, {}, true);
      QFAIL("a missing operator must throw");
    } catch (const Error& e) {
      qInfo("%s", e.what());
      QVERIFY2(std::string(e.what()).find("aten::no_such_attention") != std::string::npos,
               e.what());
      QVERIFY2(
          std::string(e.what()).find("aten::scaled_dot_product_attention") != std::string::npos,
          e.what());
    }
    try {
      gllm::ops::detail::sdpa_with_operator("aten::matmul", q, k, v, {}, true);
      QFAIL("an operator without attention arguments must throw");
    } catch (const Error& e) {
      qInfo("%s", e.what());
      QVERIFY2(std::string(e.what()).find("no argument 'query'") != std::string::npos, e.what());
    }
    auto named =
        gllm::ops::detail::sdpa_with_operator(ops::sdpa_operator_name(), q, k, v, {}, true);
    QVERIFY(torch::equal(named, ops::sdpa(q, k, v, {}, true)));
  }

  // The graded GPT (EG-MHSA, query scale, hashed tables, value embeddings, windows 3/3/full) gives
  // the same logits, loss and parameter gradients with every kernel; Auto on the CPU is the blocked
  // window kernel.
  void fusedBlockedAndMatmulKernelsAgree() {
    const int T = 12;
    auto c = graded_config(T);
    GPT m(c);
    QCOMPARE(m->window(0), 3);
    QCOMPARE(m->window(2), T);
    QVERIFY(m->attention_kernel() == Kernel::Auto);
    randomize(m, 9);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(4));
    auto idx = torch::randint(29, {3, T}, gen, torch::kLong);  // (B, T)
    auto tgt = torch::randint(29, {3, T}, gen, torch::kLong);  // (B, T)

    // Auto on the CPU takes the blocked path where the per-shape choice (ops/kernel_choice.h)
    // says the engine's kernel, the matmul path where it says the library's: forced both ways here.
    const auto mode = ops::kernels::set_mode(ops::kernels::Mode::Library);
    Pass auto_library = run(m, idx, tgt);
    ops::kernels::set_mode(ops::kernels::Mode::Own);
    Pass autop = run(m, idx, tgt);
    m->set_attention_kernel(Kernel::Matmul);
    Pass mat = run(m, idx, tgt);
    m->set_attention_kernel(Kernel::Blocked);
    Pass blk = run(m, idx, tgt);
    m->set_attention_kernel(Kernel::Fused);
    Pass fus = run(m, idx, tgt);
    ops::kernels::set_mode(mode);

    QVERIFY(torch::equal(autop.logits, blk.logits));
    QVERIFY(torch::equal(autop.loss, blk.loss));
    // (the library side runs every other op through ATen too: equal to rounding)
    QVERIFY((auto_library.loss - mat.loss).abs().item<double>() < 1e-5);

    auto tagged = m->tagged_parameters();
    auto agree = [&](const Pass& other, const char* name) {
      const double dlog = rel_diff(other.logits, mat.logits),
                   dloss = rel_diff(other.loss, mat.loss);
      double dgrad = 0;
      std::string worst;
      int compared = 0;
      for (size_t i = 0; i < tagged.size(); ++i) {
        QCOMPARE(other.grads[i].defined(), mat.grads[i].defined());
        if (!mat.grads[i].defined()) continue;
        const double e = rel_diff(other.grads[i], mat.grads[i]);
        if (e > dgrad) dgrad = e, worst = tagged[i].name;
        ++compared;
      }
      qInfo("%s vs matmul: logits %.2e, loss %.2e, max grad %.2e (%s) over %d tensors", name, dlog,
            dloss, dgrad, worst.c_str(), compared);
      QVERIFY(compared > 15);
      QVERIFY2(dlog < 1e-5 && dloss < 1e-5,
               qPrintable(QString("%1: logits %2, loss %3").arg(name).arg(dlog).arg(dloss)));
      QVERIFY2(
          dgrad < 1e-5,
          qPrintable(
              QString("%1: gradient of %2 differs by %3").arg(name, worst.c_str()).arg(dgrad)));
      // The attention grades and query scales get gradients through this path.
      for (size_t i = 0; i < tagged.size(); ++i)
        if (tagged[i].name == "attn_grades" || tagged[i].name == "q_tau")
          QVERIFY2(other.grads[i].abs().max().item<double>() > 0, tagged[i].name.c_str());
    };
    agree(fus, "fused");
    if (QTest::currentTestFailed()) return;
    agree(blk, "blocked");
  }
};

QTEST_APPLESS_MAIN(TestModelSdpa)
#include "test_model_sdpa.moc"
