// `gllm compile`: a saved random graded model compiles to a standard checkpoint with no grade
// tensors, the probe-batch |Δlogits| is reported in JSON, and bad input fails with a message.
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/model/gpt.h"
#include "tests/support/test_support.h"

using namespace gllm;

class TestCliCompile : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void compilesAGradedCheckpoint() {
    RunConfig c;
    c.model.depth = 0;
    c.model.n_layer = 2;
    c.model.n_embd = 32;
    c.model.n_head = 2;
    c.model.vocab_size = 50;
    c.model.sequence_len = 16;
    c.grading.attention = true;
    c.grading.head_grades = "random";
    c.grading.mlge = true;
    c.grading.level_grades = {0, 1, 2, 3};
    GPT m(c);
    {
      torch::NoGradGuard ng;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(4));
      for (auto& tp : m->tagged_parameters())
        if (tp.group == "matrix") tp.param.add_(torch::empty_like(tp.param).normal_(0.0, 0.2, gen));
    }
    QTemporaryDir dir;
    const std::string in = dir.filePath("graded.safetensors").toStdString();
    const std::string out = dir.filePath("standard.safetensors").toStdString();
    save_model(m, in);
    auto r = test::run_cli({"compile", in, "--out", out, "--json", "--threads", "2"});
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    auto j = nlohmann::json::parse(r.out);
    QVERIFY(j["ok"].get<bool>());
    QVERIFY(j["max_abs_delta_logits"].get<double>() <= 1e-4);
    QCOMPARE(j["removed_tensors"],
             nlohmann::json({"attn_grades", "mlge.level_grades", "mlge.proj"}));
    GPT s = load_model(out);
    QVERIFY(s->compiled());
    QVERIFY(!s->state_tensors().count("attn_grades"));
    auto idx = torch::randint(50, {2, 16}, torch::kLong);
    torch::NoGradGuard ng;
    QVERIFY((s->eval_logits(idx) - m->eval_logits(idx)).abs().max().item<double>() <= 1e-4);

    auto bad =
        test::run_cli({"compile", dir.filePath("missing.safetensors").toStdString(), "--out", out});
    QVERIFY(bad.exit_code != 0);
    const std::string junk = dir.filePath("junk.safetensors").toStdString();
    { std::ofstream(junk) << "not a checkpoint"; }
    auto bad2 = test::run_cli({"compile", junk, "--out", out});
    QVERIFY(bad2.exit_code != 0);
    QVERIFY2(bad2.err.find("junk.safetensors") != std::string::npos, bad2.err.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliCompile)
#include "test_cli_compile.moc"
