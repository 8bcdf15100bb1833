// The training step under bf16 autocast (CPU here, the same code on CUDA): after every update the
// next forward sees the updated weights, and no autocast region stays open between steps.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <QtTest>
#include <cmath>

#include "engine/dist/device.h"
#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/train/step.h"

using namespace gllm;

namespace {

RunConfig tiny() {
  RunConfig c;
  c.model.depth = 0;
  c.model.n_layer = 2;
  c.model.n_embd = 32;
  c.model.n_head = 2;
  c.model.vocab_size = 0;  // the vocabulary is passed to build_model (31 tokens)
  c.model.sequence_len = 12;
  c.model.window_pattern = "SL";
  c.model.short_window = 4;
  c.grading.attention = true;
  c.grading.head_grades = "random";
  // Large steps of the matrices autocast casts (small ones of the looked-up tables, which it does
  // not), so one update moves the loss far beyond bf16 rounding.
  c.optim.matrix_lr = 0.1;
  c.optim.unembedding_lr = 0.3;
  c.optim.embedding_lr = 0.02;
  return RunConfig::from_json(c.to_json());
}

// Weights moved away from the initialisation (zero projections, a near-zero output layer) so every
// part of the model shapes the loss.
GPT perturbed_model(const RunConfig& c, int64_t seed) {
  GPT m = build_model(c, 31, seed);
  torch::NoGradGuard ng;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed) + 100);
  for (auto& tp : m->tagged_parameters())
    if (tp.group != "grades") tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.1, gen));
  return m;
}

// The loss of the current weights in fp32, whatever autocast state the thread is in.
double fp32_loss(GPT& m, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard ng;
  const bool was = at::autocast::is_cpu_enabled();
  at::autocast::set_cpu_enabled(false);
  const double l = m->loss(x, y).total.item<double>();
  at::autocast::set_cpu_enabled(was);
  return l;
}

}  // namespace

class TestTrainStep : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // Three steps of the trainer's own step with train.dtype "bf16" on the CPU: each step's forward
  // under autocast matches an fp32 forward of the same (just updated) weights within bf16 rounding,
  // while the loss itself moves by far more than that between steps. A forward that kept the first
  // step's bf16 weight copies (autocast left on for the thread, its cast cache never cleared)
  // matches the step-1 weights instead and fails from step 2 on.
  void forwardSeesUpdatedWeights() {
    const RunConfig c = tiny();
    GPT m = perturbed_model(c, 5);
    optim::MuonAdamW opt(c.optim, m->width(), 10, optimizer_params(m));
    TrainStep step(m, opt, torch::Device(torch::kCPU), "bf16");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(4));
    auto x = torch::randint(31, {4, 12}, gen, torch::kLong);  // (B, T)
    auto y = torch::randint(31, {4, 12}, gen, torch::kLong);  // (B, T)
    double previous = NAN;
    for (int k = 0; k < 3; ++k) {
      const double reference = fp32_loss(m, x, y);  // the weights as they are now, in fp32
      MicroStepLoss l = step.micro_step(x, y, 1.0);
      QVERIFY(l.finite());
      const double total = l.total_value();
      const double err = std::abs(total - reference) / reference;
      qInfo("step %d: bf16 autocast loss %.5f, fp32 loss of the same weights %.5f (relative %.1e)",
            k + 1, total, reference, err);
      QVERIFY2(total != reference, "the loss did not run under autocast");
      QVERIFY2(err < 1e-2, qPrintable(QString("step %1: relative error %2").arg(k + 1).arg(err)));
      if (k > 0)
        QVERIFY2(std::abs(reference - previous) / reference > 5e-2,
                 "the update did not move the loss");
      previous = reference;
      step.update(k);
      // Between steps the worker thread computes in fp32: nothing is left open.
      QVERIFY(!dist::autocast_active(torch::Device(torch::kCPU)));
      QCOMPARE(torch::matmul(torch::ones({2, 2}), torch::ones({2, 2})).scalar_type(),
               torch::kFloat);
    }
  }

  // Backward and the update run outside the autocast region: gradients and weights stay fp32, and
  // an evaluation forward (eval_nats) opens and closes its own region.
  void backwardAndUpdateOutsideTheScope() {
    const RunConfig c = tiny();
    GPT m = perturbed_model(c, 6);
    optim::MuonAdamW opt(c.optim, m->width(), 10, optimizer_params(m));
    TrainStep step(m, opt, torch::Device(torch::kCPU), "bf16");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(9));
    auto x = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    auto y = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    step.micro_step(x, y, 1.0);
    int grads = 0;
    for (const auto& tp : m->tagged_parameters()) {
      QCOMPARE(tp.param.scalar_type(), torch::kFloat);
      if (!tp.param.grad().defined()) continue;
      QVERIFY2(tp.param.grad().scalar_type() == torch::kFloat, tp.name.c_str());
      ++grads;
    }
    QVERIFY(grads > 10);
    step.update(0);
    for (const auto& tp : m->tagged_parameters())
      QVERIFY2(!tp.param.grad().defined(), tp.name.c_str());
    auto nats = step.eval_nats(x, y);  // (B, T)
    QCOMPARE(nats.sizes(), x.sizes());
    QVERIFY(torch::isfinite(nats).all().item<bool>());
    QVERIFY(!dist::autocast_active(torch::Device(torch::kCPU)));
  }

  // With "fp32" the step is the plain loop: the same losses as forward/backward/update by hand.
  void fp32StepIsThePlainLoop() {
    const RunConfig c = tiny();
    GPT a = build_model(c, 31, 7), b = build_model(c, 31, 7);
    optim::MuonAdamW oa(c.optim, a->width(), 10, optimizer_params(a)),
        ob(c.optim, b->width(), 10, optimizer_params(b));
    TrainStep step(a, oa, torch::Device(torch::kCPU), "fp32");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(3));
    auto x = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    auto y = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    for (int k = 0; k < 3; ++k) {
      const double la = step.micro_step(x, y, 2.0).total_value();
      step.update(k);
      auto parts = b->loss(x, y);
      (parts.total / 2.0).backward();
      ob.step(k);
      ob.zero_grad();
      {
        torch::NoGradGuard ng;
        b->project_grades();
      }
      QCOMPARE(la, parts.total.item<double>());
    }
    auto sa = a->state_tensors(), sb = b->state_tensors();
    for (const auto& [name, t] : sa) QVERIFY2(torch::equal(t, sb.at(name)), name.c_str());
  }
};

QTEST_APPLESS_MAIN(TestTrainStep)
#include "test_train_step.moc"
