// Compile-to-standard (seed 000 Cor. 1, docs/design.md): random graded models fold into standard
// ones with the same evaluation logits (max |Δ| ≤ 1e-4 in fp32) and no grade tensors left.
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>
#include <QtTest>

#include "engine/model/gpt.h"
#include "tests/support/test_configs.h"

using namespace gllm;

namespace {

RunConfig graded(int variant) {
  RunConfig c = gllm::test::tiny_model(3, 32, 4, 37, 16);
  c.model.oe_m = 19;
  c.grading.attention = true;
  c.grading.head_grades = "random";
  c.grading.random_seed = 3 + variant;
  c.grading.mlge = true;
  c.grading.levels = 4;
  c.grading.level_grades = {0.0, 3.0, 1.5, 5.5};
  c.grading.graded_loss = true;
  c.grading.clip = 4.0;
  if (variant == 0) {  // QK-norm on, with an existing masked query scale
    c.model.query_scale = true;
    c.model.query_scale_frozen_layers = {0};
    c.model.query_scale_frozen_planes = 1;
  } else if (variant == 1) {  // QK-norm off
    c.model.qk_norm = false;
  } else {  // graded sinusoidal PE + level GeGLU
    c.model.positional = "graded_sinusoidal";
    c.model.mlp = "geglu_levels";
    c.grading.level_dims = {4, 12, 8, 8};
  }
  return c;
}

}  // namespace

class TestModelCompile : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void foldsEveryGrade_data() {
    QTest::addColumn<int>("variant");
    QTest::newRow("qk-norm on") << 0;
    QTest::newRow("qk-norm off") << 1;
    QTest::newRow("graded PE + level GeGLU") << 2;
  }

  void foldsEveryGrade() {
    QFETCH(int, variant);
    auto c = graded(variant);
    GPTOptions o;
    o.seed = 100 + variant;
    for (int v = 0; v < 37; ++v) o.output_grades.push_back((v * 7 % 5) * 0.8);
    GPT m(c, o);
    {
      torch::NoGradGuard ng;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(variant));
      for (auto& tp : m->tagged_parameters())
        if (tp.group != "grades" && tp.group != "level_proj")
          tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.2, gen));
      auto& P = m->parts();
      P.level_proj.add_(
          torch::empty_like(P.level_proj).normal_(0.0, 0.05, gen));  // not orthonormal any more
    }
    QVERIFY(m->parts().attn_grades.max().item<double>() > 1.0);  // grades really matter
    GPT s = compile_to_standard(m);
    auto names = s->state_tensors();
    for (const char* n : {"attn_grades", "mlge.level_grades", "output_grades"})
      QVERIFY2(!names.count(n), n);
    QVERIFY(!s->config().grading.attention);
    QVERIFY(!s->config().grading.mlge);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(50 + variant));
    auto idx = torch::randint(37, {3, 16}, gen, torch::kLong);
    torch::NoGradGuard ng;
    auto a = m->eval_logits(idx), b = s->eval_logits(idx);
    const double delta = (a - b).abs().max().item<double>();
    qInfo("variant %d: max |Δlogits| = %.3g (logit range %.3g)", variant, delta,
          a.abs().max().item<double>());
    QVERIFY2(delta <= 1e-4, qPrintable(QString::number(delta)));
    // Without the folds the functions differ: the check can fail.
    GPTOptions plain;
    plain.vocab_size = 37;
    plain.compiled = true;
    plain.from_checkpoint = true;
    GPT naive(s->config(), plain);
    auto from = m->state_tensors();
    for (auto& [n, t] : naive->state_tensors())
      if (from.count(n) && from[n].sizes() == t.sizes()) t.copy_(from[n]);
    QVERIFY((naive->eval_logits(idx) - a).abs().max().item<double>() > 1e-2);
    // The compiled model survives a save/load unchanged.
    QTemporaryDir dir;
    const std::string path = dir.filePath("c.safetensors").toStdString();
    save_model(s, path);
    GPT back = load_model(path);
    QVERIFY(back->compiled());
    QCOMPARE((back->eval_logits(idx) - b).abs().max().item<double>(), 0.0);
  }
};

QTEST_APPLESS_MAIN(TestModelCompile)
#include "test_model_compile.moc"
