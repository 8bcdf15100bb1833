// Parity with the PyTorch reference tests/python/model_reference.py: the same seeded weights pass
// through safetensors and logits, loss, regularisers and matched-tilt nats agree within 1e-5.
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>
#include <QtTest>

#include "engine/model/checkpoint_tensors.h"
#include "engine/model/gpt.h"
#include "tests/support/test_support.h"

using namespace gllm;

namespace {

const char* kVariants[] = {"baseline + OE + masked query scale", "EG-MHSA + MLGE + graded loss",
                           "graded PE + level GeGLU, qk-norm off"};

GPT build(int variant) {
  RunConfig c;
  c.model.depth = 0;
  c.model.n_layer = 4;
  c.model.n_embd = 32;
  c.model.n_head = 2;
  c.model.vocab_size = 41;
  c.model.sequence_len = 12;  // short window 6 < T - 1: the S layers really mask
  GPTOptions o;
  o.seed = 7 + variant;
  if (variant == 0) {
    c.model.oe_m = 23;
    c.model.query_scale = true;
    c.model.query_scale_frozen_layers = {0};
    c.model.query_scale_frozen_planes = 3;
  } else {
    c.grading.attention = true;
    c.grading.grades_trainable = true;
    c.grading.head_grades = "random";
    c.grading.mlge = true;
    c.grading.levels = 3;
    c.grading.level_grades = {0.5, 2.0, 4.0};
    c.grading.graded_loss = true;
    c.grading.orth_weight = 0.5;
    c.grading.diversity_weight = 0.25;
    c.grading.magnitude_weight = 0.01;
    for (int v = 0; v < 41; ++v) o.output_grades.push_back((v % 5) * 0.7);
    if (variant == 2) {
      c.model.positional = "graded_sinusoidal";
      c.model.mlp = "geglu_levels";
      c.model.qk_norm = false;
      c.model.value_embeds = false;
    }
  }
  GPT m(c, o);
  torch::NoGradGuard ng;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(99 + variant));
  for (auto& tp : m->tagged_parameters())  // no zero-initialised path stays silent
    if (tp.group != "grades") tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.1, gen));
  return m;
}

}  // namespace

class TestModelParity : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void matchesReference() {
    GLLM_REQUIRE_TORCH_PYTHON();
    const std::string py = test::torch_python();
    QTemporaryDir dir;
    std::vector<GPT> models;
    std::vector<std::string> args{test::python_script("model_reference.py")};
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(5));
    auto idx = torch::randint(41, {2, 12}, gen, torch::kLong);
    auto tgt = torch::randint(41, {2, 12}, gen, torch::kLong);
    tgt[1][4] = -1;  // ignored target
    const std::string in_path = dir.filePath("inputs.safetensors").toStdString();
    write_tensor_file(in_path, {{"idx", idx}, {"targets", tgt}});
    for (int v = 0; v < 3; ++v) {
      models.push_back(build(v));
      const std::string mp = dir.filePath(QString("model%1.safetensors").arg(v)).toStdString();
      save_model(models.back(), mp);
      args.push_back(mp);
      args.push_back(in_path);
      args.push_back(dir.filePath(QString("out%1.safetensors").arg(v)).toStdString());
    }
    auto r = test::run_program(py, args);
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    torch::NoGradGuard ng;
    for (int v = 0; v < 3; ++v) {
      auto ref = read_tensor_file(args[3 * v + 3]);
      auto& m = models[v];
      auto logits = m->forward(idx);
      auto parts = m->loss(idx, tgt);
      auto nats = m->per_target_nats(idx, tgt);
      const double dl = (logits - ref["logits"]).abs().max().item<double>();
      const double dloss = std::abs(parts.data.item<double>() - ref["loss"].item<double>());
      const double reg = parts.reg.item<double>();
      const double dreg = std::abs(reg - ref["reg"].item<double>());
      const double dnats = (nats - ref["nats"]).abs().max().item<double>();
      qInfo(
          "%s: max|Δlogits| %.3g, |Δloss| %.3g, |Δreg| %.3g (reg %.4g), max|Δnats| %.3g (loss "
          "%.5f)",
          kVariants[v], dl, dloss, dreg, reg, dnats, parts.data.item<double>());
      QVERIFY2(dl <= 1e-5, kVariants[v]);
      QVERIFY2(dloss <= 1e-5, kVariants[v]);
      QVERIFY2(dreg <= 1e-5 * std::max(1.0, std::abs(reg)), kVariants[v]);
      QVERIFY2(dnats <= 1e-5, kVariants[v]);
      QVERIFY(logits.std().item<double>() > 0.1);  // a nontrivial function was compared
      if (v > 0) QVERIFY(reg > 0.01);              // and the regularisers were on
    }
  }
};

QTEST_APPLESS_MAIN(TestModelParity)
#include "test_model_parity.moc"
