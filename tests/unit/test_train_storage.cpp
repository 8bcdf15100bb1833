// Seed 001's storage precision as allocated: bf16 lookup tables, fp32 master state only for the
// Tier-1 recipe (not for control #4a), the same dtypes in checkpoints, and analytic memory that
// counts exactly the bytes the model and optimizer hold.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>
#include <filesystem>

#include "engine/io/safetensors.h"
#include "engine/model/checkpoint_tensors.h"
#include "engine/model/cost.h"
#include "engine/model/gpt.h"
#include "engine/optim/muon_adamw.h"
#include "engine/train/step.h"

using namespace gllm;

namespace {

// A small model with every table kind: wte, two value embeddings, four hashed tables.
RunConfig arm(const std::string& storage, const std::string& state) {
  RunConfig c;
  c.model.depth = 0;
  c.model.n_layer = 4;
  c.model.n_embd = 64;
  c.model.n_head = 2;
  c.model.vocab_size = 0;  // the vocabulary is passed to build_model (97 tokens)
  c.model.sequence_len = 16;
  c.model.window_pattern = "SL";
  c.model.oe_m = 53;
  c.model.storage = storage;
  c.optim.embedding_state = state;
  c.optim.neumann = true;  // the joint recipe's Neumann-Gram runs in fp32 on the fly either way
  c.train.device_batch = 4;
  return RunConfig::from_json(c.to_json());
}

bool is_table(const std::string& name) {
  return name == "transformer.wte.weight" || name.rfind("value_embeds.", 0) == 0 ||
         name.rfind("oe_tables.", 0) == 0;
}

int64_t bytes_of(const torch::Tensor& t) {
  return t.numel() * static_cast<int64_t>(t.element_size());
}

struct Trained {
  GPT model{nullptr};
  std::unique_ptr<optim::MuonAdamW> opt;
};

Trained train(const RunConfig& c, int steps) {
  Trained t;
  t.model = build_model(c, 97, 3);
  t.opt =
      std::make_unique<optim::MuonAdamW>(c.optim, t.model->width(), 10, optimizer_params(t.model));
  TrainStep step(t.model, *t.opt, torch::Device(torch::kCPU), "fp32");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(11));
  for (int k = 0; k < steps; ++k) {
    auto x = torch::randint(97, {4, 16}, gen, torch::kLong);  // (B, T)
    auto y = torch::randint(97, {4, 16}, gen, torch::kLong);  // (B, T)
    auto l = step.micro_step(x, y, 1.0);
    if (!l.finite()) throw std::runtime_error("non-finite loss");
    step.update(k);
  }
  return t;
}

}  // namespace

class TestTrainStorage : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void tablesLiveInBf16() {
    GPT m = build_model(arm("bf16", "bf16"), 97, 1);
    int tables = 0;
    for (const auto& [name, t] : m->state_tensors()) {
      QCOMPARE(t.scalar_type(), is_table(name) ? torch::kBFloat16 : torch::kFloat);
      tables += is_table(name);
    }
    QCOMPARE(tables, 1 + 2 + 4);
    GPT f = build_model(arm("fp32", "bf16"), 97, 1);
    for (const auto& [name, t] : f->state_tensors()) QCOMPARE(t.scalar_type(), torch::kFloat);
    // The bf16 tables are the fp32 initialisation rounded once.
    auto w16 = m->state_tensors().at("transformer.wte.weight"),
         w32 = f->state_tensors().at("transformer.wte.weight");
    QVERIFY(torch::equal(w16, w32.to(torch::kBFloat16)));
    // Gradients of bf16 tables are bf16; the loss is finite.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(uint64_t(2));
    auto x = torch::randint(97, {2, 16}, gen, torch::kLong);  // (B, T)
    auto loss = m->loss(x, x).total;
    QVERIFY(std::isfinite(loss.item<double>()));
    loss.backward();
    for (const auto& tp : m->tagged_parameters())
      if (is_table(tp.name) && tp.param.grad().defined())
        QCOMPARE(tp.param.grad().scalar_type(), torch::kBFloat16);
  }

  // Tier 1 (#12) keeps an fp32 master and fp32 moments for wte and value_embeds; #4a keeps bf16
  // moments and no master; the hashed tables (moment-free) keep counts only. The difference is
  // exactly 8 bytes per wte/value_embeds element, as Table 1b's +96.0 / +160.0 MiB count it.
  void optimizerStateFollowsTheRecipe() {
    Trained tier1 = train(arm("bf16", "fp32"), 1), control = train(arm("bf16", "bf16"), 1);
    int64_t b1 = 0, b0 = 0, masters = 0;
    for (const auto& [name, t] : tier1.opt->state_tensors()) {
      b1 += bytes_of(t);
      if (name.size() > 7 && name.substr(name.size() - 7) == ".master") {
        ++masters;
        QCOMPARE(t.scalar_type(), torch::kFloat);
      }
      if (name == "transformer.wte.weight.exp_avg") QCOMPARE(t.scalar_type(), torch::kFloat);
    }
    QCOMPARE(masters, 3);  // wte and the two value embeddings
    for (const auto& [name, t] : control.opt->state_tensors()) {
      b0 += bytes_of(t);
      QVERIFY2(name.find(".master") == std::string::npos, name.c_str());
      if (name == "transformer.wte.weight.exp_avg") QCOMPARE(t.scalar_type(), torch::kBFloat16);
    }
    const RunConfig c = arm("bf16", "fp32");
    const auto pc = count_params(c, 97);
    const int64_t elements = pc.wte + pc.value_embeds;
    QCOMPARE(b1 - b0, 8 * elements);
    const auto acc = account(c, 97);
    QCOMPARE(acc.memory.fp32_embedding_state,
             8.0 * static_cast<double>(elements) / (1024.0 * 1024.0));
    const double analytic =
        estimate_cost(c, 97).optimizer_mib - estimate_cost(arm("bf16", "bf16"), 97).optimizer_mib;
    QCOMPARE(analytic, acc.memory.fp32_embedding_state);
  }

  // The analytic estimate counts the bytes the model holds: weights exactly, optimizer state up to
  // the NorMuon vectors (which it leaves out as small).
  void analyticMemoryCountsWhatIsAllocated() {
    for (const char* state : {"fp32", "bf16"}) {
      const RunConfig c = arm("bf16", state);
      Trained t = train(c, 1);
      int64_t weights = 0, optimizer = 0, normuon = 0;
      for (const auto& [name, p] : t.model->state_tensors()) weights += bytes_of(p);
      for (const auto& [name, s] : t.opt->state_tensors()) {
        optimizer += bytes_of(s);
        if (name.find("second_momentum_buffer") != std::string::npos) normuon += bytes_of(s);
      }
      // The moment-free tables' visit counts (one fp32 per row) are held in memory but never
      // checkpointed: they are zero between steps.
      optimizer += 4 * count_params(c, 97).oe_rows;
      const CostEstimate e = estimate_cost(c, 97);
      const double mib = 1024.0 * 1024.0;
      qInfo("%s state: weights %.4f MiB (analytic %.4f), optimizer %.4f MiB (analytic %.4f)", state,
            weights / mib, e.weights_mib, (optimizer - normuon) / mib, e.optimizer_mib);
      QCOMPARE(e.weights_mib, static_cast<double>(weights) / mib);
      QCOMPARE(e.optimizer_mib, static_cast<double>(optimizer - normuon) / mib);
    }
  }

  // #4a is not arm 12 in disguise: three steps from the same start give different weights, and
  // both differ from fp32 storage.
  void armsTrainDifferently() {
    Trained t12 = train(arm("bf16", "fp32"), 3), t4a = train(arm("bf16", "bf16"), 3),
            f32 = train(arm("fp32", "bf16"), 3);
    auto a = t12.model->state_tensors(), b = t4a.model->state_tensors(),
         c = f32.model->state_tensors();
    const auto& w = "transformer.wte.weight";
    QVERIFY(!torch::equal(a.at(w), b.at(w)));
    QVERIFY(!torch::equal(a.at(w).to(torch::kFloat), c.at(w)));
    QVERIFY(!torch::equal(b.at(w).to(torch::kFloat), c.at(w)));
  }

  // Checkpoints keep the dtypes in memory: BF16 tables and moments for #4a, F32 master and moments
  // for #12; the optimizer files' data sections differ by the same 8 bytes per element.
  void checkpointsShowTheDtypes() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dir = tmp.path().toStdString();
    int64_t data[2] = {0, 0};
    int i = 0;
    for (const char* state : {"fp32", "bf16"}) {
      Trained t = train(arm("bf16", state), 1);
      const std::string wpath = dir + "/" + state + ".safetensors",
                        opath = dir + "/" + state + ".optim.safetensors";
      write_tensor_file(wpath, t.model->state_tensors());
      TensorMap st;
      for (const auto& [n, s] : t.opt->state_tensors()) st[n] = s;
      write_tensor_file(opath, st);
      auto w = SafetensorsFile::open(wpath), o = SafetensorsFile::open(opath);
      QCOMPARE(QString(st_dtype_name(w.info("transformer.wte.weight").dtype)), QString("BF16"));
      QCOMPARE(QString(st_dtype_name(w.info("value_embeds.3.weight").dtype)), QString("BF16"));
      QCOMPARE(QString(st_dtype_name(w.info("oe_tables.0.weight").dtype)), QString("BF16"));
      QCOMPARE(QString(st_dtype_name(w.info("lm_head.weight").dtype)), QString("F32"));
      const bool tier1 = std::string(state) == "fp32";
      QCOMPARE(QString(st_dtype_name(o.info("transformer.wte.weight.exp_avg").dtype)),
               QString(tier1 ? "F32" : "BF16"));
      QCOMPARE(o.has("transformer.wte.weight.master"), tier1);
      for (const auto& info : o.tensors()) data[i] += static_cast<int64_t>(info.end - info.begin);
      // Reading the checkpoint back restores the bf16 tables bit for bit.
      GPT back = build_model(arm("bf16", state), 97, 99);
      back->load_state_tensors(read_tensor_file(wpath));
      QVERIFY(torch::equal(back->state_tensors().at("transformer.wte.weight"),
                           t.model->state_tensors().at("transformer.wte.weight")));
      ++i;
    }
    const auto pc = count_params(arm("bf16", "fp32"), 97);
    QCOMPARE(data[0] - data[1], 8 * (pc.wte + pc.value_embeds));
  }

  void fp32MasterNeedsBf16Storage() {
    RunConfig c = arm("fp32", "bf16");
    c.optim.embedding_state = "fp32";
    try {
      RunConfig::from_json(c.to_json());
      QFAIL("an fp32 master for fp32 tables was accepted");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("model.storage"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainStorage)
#include "test_train_storage.moc"
