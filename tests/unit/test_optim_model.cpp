// MuonAdamW on the real GPT: the model's group tags are all understood, a seed-001 joint arm
// (hashed tables, Tier 1, query scale) trains a tiny model, and unvisited table rows never move.
#include <torch/torch.h>

#include <QtTest>

#include "engine/config/run_config.h"
#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "tests/support/test_configs.h"

namespace {

gllm::RunConfig tiny(bool tier1) {
  gllm::RunConfig c = gllm::test::tiny_model(2, 64, 2, 61, 32);
  c.model.oe_m = 97;
  c.model.query_scale = true;
  c.grading.attention = false;
  c.optim.polar_dtype = "fp32";
  if (tier1) {
    c.optim.bieq = true;
    c.optim.momentum_cooldown = true;
    c.optim.neumann = true;
    c.optim.embedding_state = "fp32";
    c.optim.cosine_weight_decay = true;
  }
  return c;
}

std::vector<gllm::optim::TaggedParam> tags(gllm::GPT& model) {
  std::vector<gllm::optim::TaggedParam> out;
  for (auto& tp : model->tagged_parameters())
    if (tp.trainable) out.push_back({tp.name, tp.param, tp.group});
  return out;
}

}  // namespace

class TestOptimModel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void trains_tiny_joint_arm_data() {
    QTest::addColumn<bool>("tier1");
    QTest::newRow("10/12 native optimizer") << false;
    QTest::newRow("12 joint: Tier 1") << true;
  }
  void trains_tiny_joint_arm() {
    QFETCH(bool, tier1);
    torch::manual_seed(7);
    auto cfg = tiny(tier1);
    gllm::GPT model(cfg);
    const int64_t steps = 40, accum = 2;
    gllm::optim::MuonAdamW opt(cfg.optim, model->width(), steps, tags(model));
    // A fixed batch of two micro-batches; tokens 0..29 only, so many hashed rows stay unvisited.
    auto idx = torch::randint(0, 30, {accum, 4, 32}, torch::kLong);
    auto tgt = torch::roll(idx, -1, 2);
    std::map<std::string, torch::Tensor> before;
    for (auto& tp : model->tagged_parameters()) before[tp.name] = tp.param.detach().clone();
    std::vector<std::string> tables;
    for (auto& tp : model->tagged_parameters())
      if (tp.group == "oe_table") tables.push_back(tp.name);
    QCOMPARE(tables.size(), size_t(4));
    std::vector<torch::Tensor> visited(tables.size());
    double first = 0, last = 0;
    for (int64_t s = 0; s < steps; ++s) {
      double loss_sum = 0;
      for (int64_t k = 0; k < accum; ++k) {
        auto rows = model->oe_rows(idx[k]);
        for (size_t j = 0; j < tables.size(); ++j) {
          opt.accumulate_visits(tables[j], rows[j]);
          auto r = rows[j].reshape({-1});  // (B·T,)
          visited[j] = visited[j].defined() ? torch::cat({visited[j], r}) : r;
        }
        auto parts = model->loss(idx[k], tgt[k]);
        (parts.total / static_cast<double>(accum)).backward();
        loss_sum += parts.data.item<double>() / accum;
      }
      opt.step(s);
      opt.zero_grad();
      model->project_grades();
      if (s == 0) first = loss_sum;
      last = loss_sum;
    }
    QVERIFY2(last < 0.5 * first, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
    for (auto& tp : model->tagged_parameters()) {
      if (!tp.trainable) continue;
      const bool moved = !torch::equal(before[tp.name], tp.param.detach());
      QVERIFY2(moved, qPrintable(QString::fromStdString(tp.name + " did not move")));
    }
    // Rows of the hashed tables that no micro-batch visited are bit-identical (zero-initialised).
    auto params = model->tagged_parameters();
    for (size_t j = 0; j < tables.size(); ++j) {
      torch::Tensor w;
      for (auto& tp : params)
        if (tp.name == tables[j]) w = tp.param.detach();
      auto mask = torch::ones({w.size(0)}, torch::kBool);
      mask.index_fill_(0, std::get<0>(torch::_unique(visited[j])), false);
      auto untouched = w.index({mask});
      QVERIFY(untouched.size(0) > 0);
      QVERIFY(torch::equal(untouched, before[tables[j]].index({mask})));
    }
  }
};

QTEST_APPLESS_MAIN(TestOptimModel)
#include "test_optim_model.moc"
