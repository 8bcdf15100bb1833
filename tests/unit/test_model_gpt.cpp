// The GPT against independent references: shapes, causality, the window rule, parameter counts
// (baseline.md §1.4, seed 001 §2.1), finite differences, grade clipping, overfitting, hashed rows.
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <set>

#include "engine/io/error.h"
#include "engine/model/gpt.h"
#include "engine/model/param_count.h"
#include "tests/support/test_configs.h"

using namespace gllm;

namespace {

RunConfig tiny(int layers = 2, int d = 16, int heads = 2, int vocab = 23, int seq = 16) {
  return gllm::test::tiny_model(layers, d, heads, vocab, seq);
}

// Replaces the zero-initialised projections and gates with random values so no path is silent.
void randomize(GPT& m, double scale = 0.3, int64_t seed = 1) {
  torch::NoGradGuard ng;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& tp : m->tagged_parameters()) {
    if (tp.group == "grades" || tp.group == "level_proj" || tp.group == "resid_lambdas" ||
        tp.group == "x0_lambdas")
      continue;
    tp.param.add_(torch::empty_like(tp.param).normal_(0.0, scale, gen));
  }
}

torch::Tensor random_tokens(int64_t B, int64_t T, int64_t V, int64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randint(V, {B, T}, gen, torch::kLong);
}

}  // namespace

class TestModelGPT : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  void shapesAndBaselineInit() {
    auto c = tiny();
    GPT m(c);
    auto idx = random_tokens(3, 10, 23, 0);
    auto logits = m->forward(idx);
    QCOMPARE(logits.sizes(), (torch::IntArrayRef{3, 10, 23}));
    QCOMPARE(logits.scalar_type(), torch::kFloat);
    QVERIFY(logits.abs().max().item<double>() <= 15.0);
    auto names = m->state_tensors();
    for (const char* n :
         {"transformer.wte.weight", "lm_head.weight", "transformer.h.0.attn.c_q.weight",
          "transformer.h.1.attn.ve_gate.weight", "transformer.h.0.mlp.c_fc.weight",
          "value_embeds.1.weight", "resid_lambdas", "x0_lambdas"})
      QVERIFY2(names.count(n), n);
    QVERIFY(!names.count("value_embeds.0.weight"));  // VE on layers with i%2 == (L-1)%2
    // Initialisation (baseline §1.3): zero projections and gates, lambdas 1 and 0.1, wte ~ N(0,1).
    QCOMPARE(names["transformer.h.0.attn.c_proj.weight"].abs().max().item<double>(), 0.0);
    QCOMPARE(names["transformer.h.1.attn.ve_gate.weight"].abs().max().item<double>(), 0.0);
    QCOMPARE(names["x0_lambdas"][0].item<double>(), 0.1f * 1.0);
    const double s = std::sqrt(3.0 / 16);
    QVERIFY(names["transformer.h.0.attn.c_q.weight"].abs().max().item<double>() <= s);
    auto wte_std = names["transformer.wte.weight"].std().item<double>();
    QVERIFY2(wte_std > 0.85 && wte_std < 1.15, qPrintable(QString::number(wte_std)));
    QVERIFY(names["lm_head.weight"].std().item<double>() < 0.002);
    // Same seed, same weights.
    GPT m2(c);
    QVERIFY(torch::equal(m2->state_tensors()["transformer.h.1.mlp.c_fc.weight"],
                         names["transformer.h.1.mlp.c_fc.weight"]));
    // ve_gate reads min(32, d) channels.
    QCOMPARE(names["transformer.h.1.attn.ve_gate.weight"].size(1), int64_t(16));
  }

  void windowsFollowThePattern() {
    RunConfig c;
    c.model.depth = 6;
    c.model.vocab_size = 64;
    c.model.sequence_len = 2048;
    c.model.value_embeds = false;
    c.model.mlp_ratio = 1;
    GPT m(c);
    std::vector<int> w;
    for (int i = 0; i < 6; ++i) w.push_back(m->window(i));
    QCOMPARE(w, (std::vector<int>{1024, 1024, 1024, 2048, 1024, 2048}));  // S,S,S,L,S,L
    QCOMPARE(m->head_dim(), 128);
    QCOMPARE(m->n_head(), 3);
  }

  void causality() {
    auto c = tiny(3);
    c.model.oe_m = 11;
    c.model.query_scale = true;
    c.grading.attention = true;
    c.grading.head_grades = "random";
    GPT m(c);
    randomize(m);
    auto idx = random_tokens(2, 12, 23, 1);
    auto base = m->forward(idx);
    for (int t : {0, 5, 11}) {
      auto idx2 = idx.clone();
      idx2.index_put_({torch::indexing::Slice(), t},
                      (idx.index({torch::indexing::Slice(), t}) + 1) % 23);
      auto out = m->forward(idx2);
      auto diff = (out - base).abs().amax({0, 2});  // (T)
      for (int s = 0; s < 12; ++s) {
        if (s < t) QCOMPARE(diff[s].item<double>(), 0.0);
        if (s == t) QVERIFY(diff[s].item<double>() > 1e-6);
      }
    }
  }

  void windowRule() {
    // Layer 0 is short (window 4 → 5 keys); layer 1 (long) contributes nothing, so the logits at t
    // depend exactly on tokens t−4..t.
    auto c = tiny(2, 16, 2, 23, 8);
    c.model.window_pattern = "S";
    c.model.value_embeds = false;
    GPT m(c);
    QCOMPARE(m->window(0), 4);
    randomize(m);
    {
      torch::NoGradGuard ng;
      auto& b = m->parts().blocks[1];
      b.c_proj->weight.zero_();
      b.mlp_proj->weight.zero_();
    }
    const int T = 8;
    auto idx = random_tokens(1, T, 23, 2);
    auto base = m->forward(idx);
    for (int t = 0; t < T; ++t) {
      int seen = 0;
      for (int j = 0; j < T; ++j) {
        auto idx2 = idx.clone();
        idx2[0][j] = (idx[0][j].item<int64_t>() + 3) % 23;
        const bool changed =
            (m->forward(idx2)[0][t] - base[0][t]).abs().max().item<double>() > 1e-7;
        QCOMPARE(changed, j <= t && t - j <= 4);
        seen += changed;
      }
      QCOMPARE(seen, std::min(t + 1, 5));
    }
    // The long window is sequence_len: with T > sequence_len a query sees sequence_len + 1 keys.
    auto c1 = tiny(1, 16, 2, 23, 5);
    c1.model.value_embeds = false;
    GPT one(c1);
    randomize(one);
    auto idx1 = random_tokens(1, 10, 23, 3);
    auto b1 = one->forward(idx1);
    int seen = 0;
    for (int j = 0; j < 10; ++j) {
      auto idx2 = idx1.clone();
      idx2[0][j] = (idx1[0][j].item<int64_t>() + 1) % 23;
      seen += (one->forward(idx2)[0][9] - b1[0][9]).abs().max().item<double>() > 1e-7;
    }
    QCOMPARE(seen, 6);
  }

  void parameterCountsMatchThePaper() {
    RunConfig c;
    c.model.depth = 6;
    auto p6 = count_params(c, 8192);
    QCOMPARE(p6.scaling_params, int64_t(26345772));
    QCOMPARE(p6.transformer_matrices, int64_t(10617120));
    c.model.depth = 8;
    auto p8 = count_params(c, 8192);
    QCOMPARE(p8.scaling_params, int64_t(50332176));
    QCOMPARE(p8.value_embeds, int64_t(16777216));
    c.model.oe_m = 150855;
    p8 = count_params(c, 8192);
    QCOMPARE(p8.oe_rows, int64_t(603432));
    QCOMPARE(p8.oe_params, int64_t(77239296));
    QCOMPARE(p8.total_params, int64_t(127571472));
    c.model.depth = 6;
    p6 = count_params(c, 8192);
    QCOMPARE(p6.oe_params, int64_t(57929472));
    QCOMPARE(p6.total_params, int64_t(84275244));
    c.model.query_scale = true;
    QCOMPARE(count_params(c, 8192).query_scale, int64_t(1152));  // seed 001 §2.1
  }

  void countsAgreeWithTheBuiltModel() {
    // The real DEPTH-6 model at V = 8192 (26.3M parameters; no OE tables to keep it fast).
    RunConfig c;
    c.model.depth = 6;
    c.model.vocab_size = 8192;
    GPT m(c);
    int64_t n = 0;
    for (auto& p : m->parameters()) n += p.numel();
    QCOMPARE(n, int64_t(26345772));
    // Every optional part on a small model.
    for (const char* mlp : {"relu2", "geglu_levels"}) {
      auto t = tiny(3, 24, 3, 31);
      t.model.oe_m = 13;
      t.model.query_scale = true;
      t.model.mlp = mlp;
      t.model.positional = "graded_sinusoidal";
      t.grading.attention = true;
      t.grading.mlge = true;
      t.grading.levels = 4;
      GPT g(t);
      int64_t k = 0;
      for (auto& p : g->parameters()) k += p.numel();
      QCOMPARE(k, count_params(t).total_params);
    }
  }

  void optimizerGroups() {
    auto c = tiny();
    c.model.oe_m = 7;
    c.model.query_scale = true;
    c.grading.attention = true;
    c.grading.mlge = true;
    GPT m(c);
    std::map<std::string, std::string> g;
    for (auto& tp : m->tagged_parameters()) g[tp.name] = tp.group;
    QCOMPARE(g["transformer.wte.weight"], std::string("embedding"));
    QCOMPARE(g["lm_head.weight"], std::string("unembedding"));
    QCOMPARE(g["value_embeds.1.weight"], std::string("value_embeds"));
    QCOMPARE(g["transformer.h.1.attn.ve_gate.weight"], std::string("matrix"));
    QCOMPARE(g["transformer.h.0.mlp.c_proj.weight"], std::string("matrix"));
    QCOMPARE(g["oe_tables.3.weight"], std::string("oe_table"));
    QCOMPARE(g["attn_grades"], std::string("grades"));
    QCOMPARE(g["mlge.level_grades"], std::string("grades"));
    QCOMPARE(g["q_tau"], std::string("query_scale"));
    QCOMPARE(g["mlge.proj"], std::string("level_proj"));
    QCOMPARE(g["x0_lambdas"], std::string("x0_lambdas"));
    for (auto& tp : m->tagged_parameters())
      if (tp.name == "attn_grades") QVERIFY(!tp.trainable);  // grades_trainable = false
  }

  void hashedRowsFollowSeed001() {
    auto c = tiny(1, 16, 2, 10);
    c.model.oe_m = 7;
    GPT m(c);
    auto idx = torch::tensor({{3, 1, 4, 1, 5}}, torch::kLong);
    auto rows = m->oe_rows(idx);
    QCOMPARE(int(rows.size()), 4);
    const int64_t V = 10;
    std::vector<int64_t> x{3, 1, 4, 1, 5};
    for (int t = 0; t < 5; ++t) {
      const int64_t p1 = t >= 1 ? x[t - 1] : V, p2 = t >= 2 ? x[t - 2] : V;
      const int64_t id2 = x[t] + (V + 1) * p1, id3 = id2 + (V + 1) * (V + 1) * p2;
      QCOMPARE(rows[0][0][t].item<int64_t>(), id2 % 7);
      QCOMPARE(rows[1][0][t].item<int64_t>(), id2 % 9);
      QCOMPARE(rows[2][0][t].item<int64_t>(), id3 % 11);
      QCOMPARE(rows[3][0][t].item<int64_t>(), id3 % 13);
    }
    // The table rows reach the embedding: a nonzero row changes the logits.
    auto before = m->forward(idx);
    {
      torch::NoGradGuard ng;
      randomize(m);
      m->parts().oe_tables[2]->weight.normal_();
    }
    QVERIFY((m->forward(idx) - before).abs().max().item<double>() > 1e-5);
  }

  void finiteDifferenceGradients() {
    for (int variant = 0; variant < 2; ++variant) {
      auto c = tiny(2, 16, 2, 11, 8);
      c.model.oe_m = 5;
      c.grading.attention = true;
      c.grading.grades_trainable = true;
      c.grading.head_grades = "random";
      c.grading.mlge = true;
      c.grading.levels = 2;
      c.grading.level_grades = {0.5, 2.0};
      c.grading.orth_weight = 0.3;
      c.grading.diversity_weight = 0.2;
      c.grading.magnitude_weight = 0.1;
      c.grading.graded_loss = true;
      if (variant == 0) {
        c.model.query_scale = true;
        c.model.query_scale_frozen_layers = {0};
      } else {
        c.model.positional = "graded_sinusoidal";
        c.model.mlp = "geglu_levels";
        c.model.qk_norm = false;
      }
      GPTOptions o;
      for (int v = 0; v < 11; ++v) o.output_grades.push_back(0.3 * (v % 4));
      GPT m(c, o);
      randomize(m, 0.3, 5 + variant);
      {
        torch::NoGradGuard ng;
        for (auto& tp : m->tagged_parameters())
          if (tp.name == "mlge.proj") tp.param.add_(torch::randn_like(tp.param) * 0.05);
      }
      m->to(torch::kDouble);
      auto idx = random_tokens(2, 8, 11, 6);
      auto tgt = random_tokens(2, 8, 11, 7);
      tgt[0][3] = -1;
      m->zero_grad();
      m->loss(idx, tgt).total.backward();
      auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
      int checked = 0;
      for (auto& tp : m->tagged_parameters()) {
        if (!tp.trainable) continue;
        auto flat = tp.param.view(-1);
        auto grad = tp.param.grad().view(-1);
        for (int r = 0; r < 3; ++r) {
          int64_t k = torch::randint(flat.numel(), {1}, gen, torch::kLong).item<int64_t>();
          if (tp.group == "oe_table" || tp.group == "embedding" || tp.group == "value_embeds") {
            // pick a row that is used so the check is not trivially zero
            auto rows = tp.group == "oe_table" ? m->oe_rows(idx)[tp.name[10] - '0'] : idx;
            const int64_t width = tp.param.size(1);
            k = rows.view(-1)[r].item<int64_t>() * width + (k % width);
          }
          const double h = 1e-6;
          double orig;
          {
            torch::NoGradGuard ng;
            orig = flat[k].item<double>();
            flat[k] = orig + h;
          }
          double lp, lm;
          {
            torch::NoGradGuard ng;
            lp = m->loss(idx, tgt).total.item<double>();
            flat[k] = orig - h;
            lm = m->loss(idx, tgt).total.item<double>();
            flat[k] = orig;
          }
          const double fd = (lp - lm) / (2 * h), ad = grad[k].item<double>();
          QVERIFY2(std::abs(fd - ad) <= 1e-6 + 1e-5 * std::abs(fd),
                   qPrintable(QString("%1[%2]: autograd %3 vs fd %4 (variant %5)")
                                  .arg(tp.name.c_str())
                                  .arg(k)
                                  .arg(ad, 0, 'g', 10)
                                  .arg(fd, 0, 'g', 10)
                                  .arg(variant)));
          ++checked;
        }
      }
      QVERIFY(checked > 30);
      if (variant == 0) {  // frozen query-scale entries get no gradient
        for (auto& tp : m->tagged_parameters())
          if (tp.name == "q_tau") {
            QCOMPARE(tp.param.grad()[0].abs().max().item<double>(), 0.0);
            QVERIFY(tp.param.grad()[1].abs().max().item<double>() > 0);
          }
      }
    }
  }

  void gradeClipAfterUpdates() {
    auto c = tiny();
    c.grading.attention = true;
    c.grading.grades_trainable = true;
    c.grading.clip = 2.0;
    c.grading.mlge = true;
    c.model.query_scale = true;
    c.model.query_scale_frozen_planes = 2;
    GPT m(c);
    const double qmax = std::log(2.0) / std::log(std::exp(1.0 / 8));  // λ = e^{1/d_k}, d_k = 8
    QCOMPARE(m->q_max(), qmax);
    randomize(m);
    torch::optim::SGD opt(m->parameters(), torch::optim::SGDOptions(50.0));
    auto idx = random_tokens(2, 8, 23, 9);
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      auto l = m->loss(idx, random_tokens(2, 8, 23, 10 + step));
      (l.total - 5.0 * m->parts().attn_grades.sum() + 5.0 * m->parts().level_grades.sum() +
       m->parts().q_tau.sum())
          .backward();
      opt.step();
      QVERIFY(m->parts().attn_grades.max().item<double>() > qmax);  // the step left the box
      QVERIFY(m->parts().level_grades.min().item<double>() < 0);
      m->project_grades();
      QVERIFY(m->parts().attn_grades.max().item<double>() <= qmax);  // also for float32 grades
      QVERIFY(m->parts().attn_grades.min().item<double>() >= 0);
      QVERIFY(m->parts().level_grades.min().item<double>() >= 0);
      auto qs = m->query_scale_array();
      QCOMPARE(qs.at(1, 1, 0), 1.0f);  // frozen planes stay at scale 1
      QCOMPARE(qs.at(0, 0, 1), 1.0f);
      QVERIFY(qs.at(0, 0, 2) != 1.0f);
    }
    auto ga = m->attn_grade_array();
    QCOMPARE(ga.layers, 2);
    QCOMPARE(ga.planes, 4);
    QCOMPARE(double(ga.at(1, 1, 3)), double(m->parts().attn_grades[1][1][3].item<float>()));
  }

  void overfitsOneBatch() {
    auto c = tiny(2, 32, 4, 29, 16);
    c.grading.attention = true;
    c.model.oe_m = 17;
    GPT m(c);
    auto idx = random_tokens(2, 16, 29, 12);
    auto tgt = random_tokens(2, 16, 29, 13);
    torch::optim::Adam opt(m->parameters(), torch::optim::AdamOptions(1e-2));
    double first = 0, last = 0;
    for (int step = 0; step < 300; ++step) {
      opt.zero_grad();
      auto l = m->loss(idx, tgt).total;
      if (step == 0) first = l.item<double>();
      last = l.item<double>();
      l.backward();
      opt.step();
      m->project_grades();
    }
    QVERIFY2(first > 3.0, qPrintable(QString::number(first)));  // ≈ ln 29 at init
    QVERIFY2(last < 0.05, qPrintable(QString("loss after 300 steps: %1").arg(last)));
  }

  void matchedTiltRecoversTheDistribution() {
    // Every row sees the same context, so the model can only learn the marginal of the targets,
    // which are drawn in exact proportions P. The graded loss's minimiser is w·P/Z; the matched
    // tilt (logits − log w) must give back P (docs/design.md).
    const std::vector<double> P{0.1, 0.2, 0.3, 0.4};
    const std::vector<double> qout{0.0, 4.0, 1.0, 8.0};
    auto c = tiny(1, 16, 2, 4, 4);
    c.grading.graded_loss = true;
    c.grading.output_lambda = 1.25;
    c.grading.clip =
        8.0;  // q_max_out = log 8 / log 1.25 ≈ 9.3: the grades below are inside the box
    GPTOptions o;
    o.output_grades = qout;
    GPT m(c, o);
    auto idx = torch::zeros({100, 1}, torch::kLong);
    auto tgt = torch::empty({100, 1}, torch::kLong);
    int row = 0;
    for (int y = 0; y < 4; ++y)
      for (int k = 0; k < int(P[y] * 100 + 0.5); ++k) tgt[row++][0] = y;
    torch::optim::Adam opt(m->parameters(), torch::optim::AdamOptions(3e-2));
    for (int step = 0; step < 400; ++step) {
      opt.zero_grad();
      m->loss(idx, tgt).total.backward();
      opt.step();
    }
    torch::NoGradGuard ng;
    auto raw = torch::softmax(m->forward(idx)[0][0], -1);
    auto fixed = torch::softmax(m->eval_logits(idx)[0][0], -1);
    double Z = 0;
    for (int y = 0; y < 4; ++y) Z += std::pow(1.25, qout[y]) * P[y];
    for (int y = 0; y < 4; ++y) {
      const double tilt = std::pow(1.25, qout[y]) * P[y] / Z;
      QVERIFY2(std::abs(raw[y].item<double>() - tilt) < 2e-3,
               qPrintable(QString("raw %1 vs tilt %2").arg(raw[y].item<double>()).arg(tilt)));
      QVERIFY2(std::abs(fixed[y].item<double>() - P[y]) < 2e-3,
               qPrintable(QString("matched %1 vs P %2").arg(fixed[y].item<double>()).arg(P[y])));
    }
    // Mean matched-tilt nats = entropy of P.
    double H = 0;
    for (double p : P) H -= p * std::log(p);
    QVERIFY(std::abs(m->per_target_nats(idx, tgt).mean().item<double>() - H) < 5e-3);
  }

  void checkpointRoundTrip() {
    auto c = tiny();
    c.model.oe_m = 7;
    c.model.query_scale = true;
    c.grading.attention = true;
    c.grading.head_grades = "random";
    c.grading.graded_loss = true;
    GPTOptions o;
    o.output_grades.assign(23, 0.5);
    GPT m(c, o);
    randomize(m);
    QTemporaryDir dir;
    const std::string path = dir.filePath("m.safetensors").toStdString();
    save_model(m, path);
    GPT back = load_model(path);
    auto idx = random_tokens(2, 9, 23, 14);
    QCOMPARE((back->eval_logits(idx) - m->eval_logits(idx)).abs().max().item<double>(), 0.0);
    auto saved = m->config();
    saved.model.vocab_size = 0;  // the vocabulary is stored in the metadata
    QCOMPARE(back->config().to_json(), saved.to_json());
    QCOMPARE(back->vocab_size(), int64_t(23));
    // A model of another shape refuses the tensors with a message naming the tensor.
    auto other = tiny(2, 24, 2);
    GPT wrong(other);
    try {
      wrong->load_state_tensors(m->state_tensors());
      QFAIL("loaded tensors of another shape");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("another configuration") != std::string::npos);
    }
  }

  void badConfigsAreRefused() {
    auto c = tiny();
    c.model.vocab_size = 0;
    QVERIFY_THROWS_EXCEPTION(ConfigError, GPT(c, GPTOptions()));
    auto d = tiny();
    d.grading.mlge = true;
    d.grading.level_dims = {4, 4};
    d.grading.levels = 2;
    QVERIFY_THROWS_EXCEPTION(ConfigError, GPT(d, GPTOptions()));  // 8 ≠ d = 16
    auto e = tiny();
    e.grading.graded_loss = true;
    e.grading.output_grades = "pos";
    QVERIFY_THROWS_EXCEPTION(ConfigError, GPT(e, GPTOptions()));  // needs the trainer's POS grades
  }
};

QTEST_APPLESS_MAIN(TestModelGPT)
#include "test_model_gpt.moc"
