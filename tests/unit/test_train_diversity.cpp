// Eq. 20's repulsive head-diversity term can act: refined head grades start a small symmetric
// perturbation apart, the term has a gradient there, and training with it separates the heads.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <QtTest>
#include <cmath>

#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/train/step.h"

using namespace gllm;

namespace {

RunConfig config(double diversity) {
  RunConfig c;
  c.model.depth = 0;
  c.model.n_layer = 2;
  c.model.n_embd = 64;
  c.model.n_head = 4;
  c.model.vocab_size = 0;  // the vocabulary is passed to build_model (41 tokens)
  c.model.sequence_len = 16;
  c.model.window_pattern = "L";
  c.grading.attention = true;
  c.grading.head_grades = "uniform";
  c.grading.grades_trainable = true;
  c.grading.grade_lr = 0.05;
  c.grading.diversity_weight = diversity;
  return RunConfig::from_json(c.to_json());
}

// Mean over layers and head pairs of ‖q_h − q_h'‖.
double mean_pair_distance(GPT& m) {
  auto q = m->parts().attn_grades.detach();     // (L, H, Dh/2)
  auto diff = q.unsqueeze(2) - q.unsqueeze(1);  // (L, H, H, Dh/2)
  auto dist = diff.pow(2).sum(-1).sqrt();       // (L, H, H)
  const int64_t H = q.size(1);
  return dist.sum().item<double>() / static_cast<double>(q.size(0) * H * (H - 1));
}

}  // namespace

class TestTrainDiversity : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void headsStartApartWithinTheBox() {
    GPT m = build_model(config(1.0), 41, 3);
    const double q_max = m->q_max();
    auto q = m->parts().attn_grades.detach();
    QVERIFY(q.min().item<double>() >= 0);
    QVERIFY(q.max().item<double>() <=
            0.01 * q_max + 1e-6);  // ε(r − ½) with ε = 2 % of q_max, clipped at 0
    QVERIFY(mean_pair_distance(m) > 0);
    // Without a diversity weight (or frozen grades) the uniform grades stay exactly uniform.
    GPT plain = build_model(config(0.0), 41, 3);
    QCOMPARE(plain->parts().attn_grades.abs().max().item<double>(), 0.0);
  }

  void theRepulsionHasAGradient() {
    GPT m = build_model(config(1.0), 41, 3);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(5));
    auto x = torch::randint(41, {2, 16}, gen, torch::kLong);  // (B, T)
    auto parts = m->loss(x, x);
    parts.reg.backward();
    const double g = m->parts().attn_grades.grad().abs().max().item<double>();
    qInfo("max |∂ reg / ∂ q| at initialisation: %.3e", g);
    QVERIFY(g > 1e-6);
  }

  void trainingSeparatesTheHeads() {
    auto run = [](double diversity) {
      GPT m = build_model(config(diversity), 41, 3);
      // The same start for both runs: the perturbed grades of the diversity run.
      GPT start = build_model(config(1.0), 41, 3);
      {
        torch::NoGradGuard ng;
        m->parts().attn_grades.copy_(start->parts().attn_grades);
      }
      const RunConfig c = config(diversity);
      optim::MuonAdamW opt(c.optim, m->width(), 30, optimizer_params(m), {c.grading.grade_lr});
      TrainStep step(m, opt, torch::Device(torch::kCPU), "fp32");
      auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(8));
      const double before = mean_pair_distance(m);
      for (int k = 0; k < 20; ++k) {
        auto x = torch::randint(41, {4, 16}, gen, torch::kLong);  // (B, T)
        step.micro_step(x, x, 1.0);
        step.update(k);
      }
      return std::make_pair(before, mean_pair_distance(m));
    };
    const auto [b1, a1] = run(1.0);
    const auto [b0, a0] = run(0.0);
    qInfo("mean head-pair distance: with the term %.4f → %.4f, without %.4f → %.4f", b1, a1, b0,
          a0);
    QCOMPARE(b1, b0);
    QVERIFY(a1 > 2.0 * b1);
    QVERIFY(a1 > 1.5 * a0);
  }
};

QTEST_APPLESS_MAIN(TestTrainDiversity)
#include "test_train_diversity.moc"
