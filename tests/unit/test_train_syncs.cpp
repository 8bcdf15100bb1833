// Host syncs per training step, counted on the CPU through a RecordFunction hook (HostSyncCounter):
// none inside a micro-step, one read of the losses per step and one per hashed table in the update.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <QtTest>
#include <sstream>

#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/runtime/host_sync.h"
#include "engine/train/step.h"

using namespace gllm;

namespace {

// A tiny graded GPT with the four hashed n-gram tables (moment-free update) and the Muon groups.
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
  c.model.oe_m = 29;
  c.grading.attention = true;
  c.grading.head_grades = "random";
  return RunConfig::from_json(c.to_json());
}

std::string listed(const std::map<std::string, int64_t>& ops) {
  std::ostringstream s;
  for (const auto& [op, n] : ops) s << op << " " << n << "; ";
  return s.str();
}

}  // namespace

class TestTrainSyncs : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // The counter sees an item() and a nonzero() (so a step that made them would fail below).
  void counterSeesSyncs() {
    HostSyncCounter counter;
    const auto t = torch::arange(5);
    (void)t.sum().item<int64_t>();
    (void)t.nonzero();
    (void)host_read(t);
    QCOMPARE(counter.count(), int64_t(3));
    counter.reset();
    (void)(t * 2 + 1).sum();
    QCOMPARE(counter.count(), int64_t(0));
  }

  // Two micro-steps (gradient accumulation), the losses' read and the update, as the trainer runs
  // them: the micro-steps make no sync; the step makes 1 (the losses) + 1 per hashed table (the
  // visited rows' nonzero, which sizes the moment-free update).
  void syncsPerStep() {
    const RunConfig c = tiny();
    GPT m = build_model(c, 31, 3);
    optim::MuonAdamW opt(c.optim, m->width(), 10, optimizer_params(m));
    TrainStep step(m, opt, torch::Device(torch::kCPU), "fp32");
    int64_t tables = 0;
    for (const auto& tp : m->tagged_parameters()) tables += tp.group == "oe_table" ? 1 : 0;
    QCOMPARE(tables, int64_t(4));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(4));
    {  // first use: the kernels' per-shape choices are timed once (ops/kernel_choice.h), which may
       // read a value back (the matmul attention path's mask); the steps counted below are steady
      auto x = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
      step.micro_step(x, x, 1.0);
      step.read_losses();
      step.update(0);
    }
    for (int k = 0; k < 3; ++k) {
      auto x = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
      auto y = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
      HostSyncCounter counter;
      step.micro_step(x, y, 2.0);
      step.micro_step(y, x, 2.0);
      const int64_t in_micro = counter.count();
      const auto micro_ops = counter.by_op();
      counter.reset();
      const StepLosses l = step.read_losses();
      step.update(k);
      const int64_t in_step = counter.count();
      qInfo("step %d: %lld syncs in 2 micro-steps, %lld in the read and update (%s)", k + 1,
            static_cast<long long>(in_micro), static_cast<long long>(in_step),
            listed(counter.by_op()).c_str());
      QVERIFY(l.finite);
      QVERIFY2(in_micro == 0, qPrintable("syncs inside micro-steps: " +
                                         QString::fromStdString(listed(micro_ops))));
      QCOMPARE(in_step, 1 + tables);
    }
  }

  // The sums the step reads are the micro-steps' losses, in double, as their host values add up.
  void readLossesSumsTheMicroSteps() {
    const RunConfig c = tiny();
    GPT m = build_model(c, 31, 5);
    optim::MuonAdamW opt(c.optim, m->width(), 10, optimizer_params(m));
    TrainStep step(m, opt, torch::Device(torch::kCPU), "fp32");
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(7));
    auto x = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    auto y = torch::randint(31, {2, 12}, gen, torch::kLong);  // (B, T)
    const MicroStepLoss a = step.micro_step(x, y, 2.0), b = step.micro_step(y, x, 2.0);
    const StepLosses l = step.read_losses();
    QCOMPARE(l.data, a.data_value() + b.data_value());
    QCOMPARE(l.total, a.total_value() + b.total_value());
    QVERIFY(l.finite);
    QCOMPARE(step.read_losses().total, 0.0);  // read once: the sums start afresh
    step.micro_step(x, y, 1.0, /*poison=*/true);
    QVERIFY(!step.read_losses().finite);
    step.discard();
  }
};

QTEST_APPLESS_MAIN(TestTrainSyncs)
#include "test_train_syncs.moc"
