// Tests of MuonAdamW against independent references: a PyTorch script of the baseline algorithm
// (tests/python/optim_reference.py), hand-computed AdamW and moment-free steps, exact resume.
#include <torch/torch.h>

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/io/error.h"
#include "engine/optim/muon_adamw.h"
#include "tests/support/test_support.h"

using gllm::optim::MuonAdamW;
using gllm::optim::TaggedParam;

namespace {

// The same deterministic values as optim_reference.py::det.
torch::Tensor det(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(1.618 * seed + 0.731 * static_cast<double>(i)) +
                                0.3 * std::cos(0.117 * static_cast<double>(i) * (seed % 7 + 1));
  return torch::tensor(v, torch::kFloat64).to(torch::kFloat32).reshape(shape);
}

torch::Tensor leaf(torch::Tensor t) {
  return t.detach().clone().set_requires_grad(true);
}

void set_grad(torch::Tensor& p, torch::Tensor g) {
  p.mutable_grad() = g.to(p.scalar_type());
}

double max_abs_diff(const torch::Tensor& a, const std::vector<double>& b) {
  auto af = a.to(torch::kFloat64).flatten();
  auto bt = torch::tensor(b, torch::kFloat64);
  return (af - bt).abs().max().item<double>();
}

nlohmann::json python_reference() {
  const std::string py = gllm::test::torch_python();
  if (py.empty()) return {};
  auto r = gllm::test::run_program(py, {gllm::test::python_script("optim_reference.py")});
  if (r.exit_code != 0) throw std::runtime_error("optim_reference.py failed: " + r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

class TestOptimMuonAdamW : public QObject {
  Q_OBJECT
  nlohmann::json ref_;

 private Q_SLOTS:
  void initTestCase() {
    torch::manual_seed(0);
    ref_ = python_reference();
  }

  void muon_matches_python_data() {
    QTest::addColumn<bool>("tier1");
    QTest::newRow("baseline") << false;
    QTest::newRow("tier1: BiEq, cooldown, cosine WD") << true;
  }
  void muon_matches_python() {
    QFETCH(bool, tier1);
    GLLM_REQUIRE_TORCH_PYTHON();
    gllm::OptimConfig c;
    c.muon_momentum_warmup = 4;
    c.polar_dtype = "fp32";
    if (tier1) {
      c.bieq = true;
      c.bieq_tau = 3;
      c.momentum_cooldown = true;
      c.cosine_weight_decay = true;
    }
    const std::vector<std::vector<int64_t>> shapes = {{8, 4}, {8, 4}, {4, 8}, {6, 6}};
    std::vector<torch::Tensor> ps;
    std::vector<TaggedParam> list;
    for (size_t k = 0; k < shapes.size(); ++k) {
      ps.push_back(leaf(det(shapes[k], 11 + static_cast<int>(k)) * 0.2));
      list.push_back({"m" + std::to_string(k), ps.back(), "matrix"});
    }
    MuonAdamW opt(c, 384, 10, list);
    for (int step = 0; step < 10; ++step) {
      for (size_t k = 0; k < shapes.size(); ++k)
        set_grad(ps[k], det(shapes[k], 100 + 10 * step + static_cast<int>(k)));
      opt.step(step);
      opt.zero_grad();
    }
    const auto& want = ref_[tier1 ? "muon_tier1" : "muon_baseline"];
    for (size_t k = 0; k < shapes.size(); ++k) {
      const double d = max_abs_diff(ps[k], want[k].get<std::vector<double>>());
      QVERIFY2(d < 2e-5, qPrintable(QString("matrix %1 differs by %2").arg(k).arg(d)));
    }
    // The update really moved the weights (the comparison is not vacuous).
    QVERIFY((ps[0] - det(shapes[0], 11) * 0.2).abs().max().item<double>() > 1e-2);
  }

  void adamw_embedding_matches_python_data() {
    QTest::addColumn<bool>("neumann");
    QTest::newRow("plain") << false;
    QTest::newRow("neumann-gram") << true;
  }
  void adamw_embedding_matches_python() {
    QFETCH(bool, neumann);
    GLLM_REQUIRE_TORCH_PYTHON();
    gllm::OptimConfig c;
    c.neumann = neumann;
    c.neumann_tau = 4;
    auto wte = leaf(det({16, 4}, 5));
    MuonAdamW opt(c, 384, 10, {{"wte", wte, "embedding"}});
    for (int step = 0; step < 10; ++step) {
      set_grad(wte, det({16, 4}, 200 + step) * 0.01);
      opt.step(step);
    }
    const double d =
        max_abs_diff(wte, ref_[neumann ? "adamw_neumann" : "adamw"].get<std::vector<double>>());
    QVERIFY2(d < 1e-5, qPrintable(QString("wte differs by %1").arg(d)));
  }

  // Decoupled weight decay on wte (seed 000's norm-controlled regime): with a zero gradient the
  // Adam step is 0, so one step multiplies the table by exactly 1 − lr·wd; value_embeds keep none.
  void embedding_weight_decay_closed_form() {
    gllm::OptimConfig c;
    c.embedding_weight_decay = 0.05;
    auto wte = leaf(det({8, 4}, 3));
    auto ve = leaf(det({8, 4}, 4));
    const torch::Tensor w0 = wte.detach().clone(), v0 = ve.detach().clone();
    MuonAdamW opt(c, 384, 10, {{"wte", wte, "embedding"}, {"ve", ve, "value_embeds"}});
    set_grad(wte, torch::zeros({8, 4}));
    set_grad(ve, torch::zeros({8, 4}));
    const auto info = opt.step(0);
    const double lr = c.embedding_lr * std::pow(384 / 768.0, -0.5) * info.lr_multiplier;
    const double expect = 1.0 - lr * c.embedding_weight_decay;
    QVERIFY(expect < 1 && expect > 0);
    QVERIFY((wte.detach() - w0 * expect).abs().max().item<double>() < 1e-6);
    QVERIFY((ve.detach() - v0).abs().max().item<double>() == 0);
    // Off by default: the baseline's AdamW groups carry no decay.
    gllm::OptimConfig off;
    auto w2 = leaf(det({8, 4}, 3));
    MuonAdamW opt2(off, 384, 10, {{"wte", w2, "embedding"}});
    set_grad(w2, torch::zeros({8, 4}));
    opt2.step(0);
    QVERIFY((w2.detach() - w0).abs().max().item<double>() == 0);
  }

  // AdamW on the scalar groups against a double-precision hand computation (baseline §2.2).
  void adamw_scalars_hand_computed() {
    gllm::OptimConfig c;
    auto resid = leaf(torch::ones({3}));
    auto x0 = leaf(torch::full({3}, 0.1));
    MuonAdamW opt(c, 512, 4,
                  {{"resid_lambdas", resid, "resid_lambdas"}, {"x0_lambdas", x0, "x0_lambdas"}});
    struct Ref {
      double lr, b1, b2 = 0.95;
      std::vector<double> p, m{0, 0, 0}, v{0, 0, 0};
    };
    Ref rr{0.005, 0.8, 0.95, {1, 1, 1}}, rx{0.5, 0.96, 0.95, {0.1, 0.1, 0.1}};
    for (int step = 0; step < 4; ++step) {
      auto gr = det({3}, 40 + step), gx = det({3}, 60 + step);
      set_grad(resid, gr);
      set_grad(x0, gx);
      opt.step(step);
      const double lrm =
          step < 2 ? 1.0 : (1.0 - step / 4.0) / 0.5;  // p = step/4, warmdown over the last half
      const int t = step + 1;
      for (auto* r : {&rr, &rx}) {
        auto g = (r == &rr ? gr : gx).to(torch::kFloat64);
        for (int i = 0; i < 3; ++i) {
          const double gi = g[i].item<double>();
          r->m[i] = r->b1 * r->m[i] + (1 - r->b1) * gi;
          r->v[i] = r->b2 * r->v[i] + (1 - r->b2) * gi * gi;
          const double denom = std::sqrt(r->v[i] / (1 - std::pow(r->b2, t))) + 1e-10;
          r->p[i] -= (r->lr * lrm / (1 - std::pow(r->b1, t))) * r->m[i] / denom;
        }
      }
    }
    QVERIFY(max_abs_diff(resid, rr.p) < 1e-6);
    QVERIFY(max_abs_diff(x0, rx.p) < 1e-5);
    QVERIFY(std::abs(x0[0].item<double>() - 0.1) > 0.1);  // x0's LR 0.5 moved it
  }

  void group_learning_rates() {
    gllm::OptimConfig c;
    auto w = leaf(torch::zeros({8, 4})), h = leaf(torch::zeros({8, 4})),
         m = leaf(torch::zeros({4, 4}));
    auto t = leaf(torch::zeros({5, 1})), q = leaf(torch::zeros({2, 1, 2}));
    MuonAdamW opt(c, 384, 10,
                  {{"wte", w, "embedding"},
                   {"lm_head", h, "unembedding"},
                   {"c_q", m, "matrix"},
                   {"oe_tables.0.weight", t, "oe_table"},
                   {"q_tau", q, "query_scale"}});
    auto plan = opt.plan();
    QCOMPARE(plan.size(), size_t(5));
    QVERIFY(std::abs(plan[0].base_lr - 0.848528) < 1e-6);   // 0.6·√2, seed 001 §2.1
    QVERIFY(std::abs(plan[1].base_lr - 0.0056569) < 1e-6);  // 0.004·√2
    QCOMPARE(plan[2].rule, std::string("muon"));
    QCOMPARE(plan[3].rule, std::string("moment_free"));
    QVERIFY(std::abs(plan[3].base_lr - 0.848528) < 1e-6);
    MuonAdamW opt8(c, 512, 10, {{"wte", w, "embedding"}});
    QVERIFY(std::abs(opt8.plan()[0].base_lr - 0.734847) < 1e-6);
  }

  // Seed 001 §2.1 Family A, with a hand computation in double precision.
  void moment_free_update() {
    gllm::OptimConfig c;
    auto table = leaf(det({10, 4}, 3));
    const auto before = table.detach().clone();
    MuonAdamW opt(c, 384, 100, {{"oe_tables.0.weight", table, "oe_table"}});
    opt.accumulate_visits("oe_tables.0.weight",
                          torch::tensor({1, 3, 3}, torch::kLong));  // micro-step 1
    opt.accumulate_visits("oe_tables.0.weight",
                          torch::tensor({{7}, {3}}, torch::kLong));  // micro-step 2, (B, T)
    auto g = det({10, 4}, 9);  // nonzero on unvisited rows too: those must still not move
    set_grad(table, g);
    opt.step(0);
    const std::map<int, double> n = {{1, 1}, {3, 3}, {7, 1}};
    double ss = 0;
    for (auto [r, cnt] : n)
      for (int j = 0; j < 4; ++j) ss += std::pow(g[r][j].item<double>() / cnt, 2);
    const double rms = std::sqrt(ss / (3 * 4));
    const double lr = 0.6 * std::sqrt(2.0);
    for (int r = 0; r < 10; ++r)
      for (int j = 0; j < 4; ++j) {
        const double b = before[r][j].item<double>(), a = table[r][j].item<double>();
        if (!n.count(r)) {
          QCOMPARE(a, b);  // unvisited rows untouched, no weight decay
        } else {
          const double want = b - lr * (g[r][j].item<double>() / n.at(r)) / rms;
          QVERIFY2(std::abs(a - want) < 1e-5,
                   qPrintable(QString("row %1 col %2: %3 vs %4").arg(r).arg(j).arg(a).arg(want)));
        }
      }
    // The normalised update has unit RMS over visited entries.
    auto upd = (before - table.detach()).index_select(0, torch::tensor({1, 3, 7})) / lr;
    QVERIFY(std::abs(upd.square().mean().sqrt().item<double>() - 1.0) < 1e-5);
    // Counts were reset: a gradient with no new visits is a trainer bug and is reported.
    set_grad(table, g);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, opt.step(1));
    // Out-of-range rows are refused with a message.
    QVERIFY_THROWS_EXCEPTION(gllm::Error, opt.accumulate_visits("oe_tables.0.weight",
                                                                torch::tensor({10}, torch::kLong)));
  }

  void moment_free_bf16_rows() {
    gllm::OptimConfig c;
    auto table = leaf(det({6, 4}, 3).to(torch::kBFloat16));
    const auto before = table.detach().clone();
    MuonAdamW opt(c, 384, 100, {{"t", table, "oe_table"}});
    opt.accumulate_visits("t", torch::tensor({2, 4}, torch::kLong));
    set_grad(table, torch::ones({6, 4}));
    opt.step(0);
    auto changed = (table.detach() != before).any(1);
    QCOMPARE(changed.to(torch::kInt).sum().item<int>(), 2);
    QVERIFY(changed[2].item<bool>() && changed[4].item<bool>());
    QCOMPARE(table.scalar_type(), torch::kBFloat16);
  }

  void fp32_master_for_bf16_embedding() {
    gllm::OptimConfig c;
    c.embedding_state = "fp32";
    auto wte = leaf(det({8, 4}, 2).to(torch::kBFloat16));
    MuonAdamW opt(c, 768, 100, {{"wte", wte, "embedding"}});
    auto st = opt.state_tensors();
    std::map<std::string, torch::Tensor> m(st.begin(), st.end());
    QVERIFY(m.count("wte.master"));
    QCOMPARE(m["wte.exp_avg"].scalar_type(), torch::kFloat32);
    for (int s = 0; s < 3; ++s) {
      set_grad(wte, det({8, 4}, 30 + s) * 1e-3);
      opt.step(s);
    }
    auto st2 = opt.state_tensors();
    std::map<std::string, torch::Tensor> m2(st2.begin(), st2.end());
    QVERIFY(torch::equal(m2["wte.master"].to(torch::kBFloat16), wte.detach()));
    // bf16 state (the baseline and control #4a): bf16 moments, no master.
    c.embedding_state = "bf16";
    MuonAdamW opt2(c, 768, 100, {{"wte", wte, "embedding"}});
    auto st3 = opt2.state_tensors();
    std::map<std::string, torch::Tensor> m3(st3.begin(), st3.end());
    QVERIFY(!m3.count("wte.master"));
    QCOMPARE(m3["wte.exp_avg"].scalar_type(), torch::kBFloat16);
  }

  // Save after two steps, load into a fresh optimizer over copied weights: the next steps agree bit
  // for bit.
  void state_round_trip() {
    gllm::OptimConfig c;
    c.embedding_state = "fp32";
    c.neumann = true;
    c.bieq = true;
    c.momentum_cooldown = true;
    auto make = [](std::vector<torch::Tensor>& ps) {
      ps = {leaf(det({16, 4}, 1).to(torch::kBFloat16)),
            leaf(det({16, 4}, 2) * 1e-3),
            leaf(det({8, 4}, 3) * 0.1),
            leaf(det({4, 8}, 4) * 0.1),
            leaf(torch::ones({3})),
            leaf(torch::full({3}, 0.1)),
            leaf(det({10, 4}, 5).to(torch::kBFloat16))};
    };
    auto tag = [](std::vector<torch::Tensor>& ps) {
      return std::vector<TaggedParam>{
          {"wte", ps[0], "embedding"},       {"lm_head", ps[1], "unembedding"},
          {"c_fc", ps[2], "matrix"},         {"c_proj", ps[3], "matrix"},
          {"resid", ps[4], "resid_lambdas"}, {"x0", ps[5], "x0_lambdas"},
          {"oe", ps[6], "oe_table"}};
    };
    auto feed = [](MuonAdamW& opt, std::vector<torch::Tensor>& ps, int step) {
      for (size_t k = 0; k < ps.size(); ++k)
        set_grad(ps[k], det(ps[k].sizes().vec(), 500 + 10 * step + static_cast<int>(k)) * 0.01);
      opt.accumulate_visits("oe", torch::tensor({step % 10, (step + 3) % 10, 7}, torch::kLong));
      opt.step(step);
      opt.zero_grad();
    };
    std::vector<torch::Tensor> a, b;
    make(a);
    MuonAdamW oa(c, 384, 20, tag(a));
    for (int s = 0; s < 2; ++s) feed(oa, a, s);
    auto tensors = oa.state_tensors();
    auto scalars = nlohmann::json::parse(oa.scalar_state().dump());
    make(b);
    for (size_t k = 0; k < a.size(); ++k) {
      torch::NoGradGuard ng;
      b[k].copy_(a[k]);
    }
    MuonAdamW ob(c, 384, 20, tag(b));
    ob.load_state_tensors(tensors);
    ob.load_scalar_state(scalars);
    for (int s = 2; s < 5; ++s) {
      feed(oa, a, s);
      feed(ob, b, s);
    }
    for (size_t k = 0; k < a.size(); ++k)
      QVERIFY2(torch::equal(a[k], b[k]), qPrintable(QString("param %1").arg(k)));
    // Without the loaded state the next steps differ (the check can fail).
    std::vector<torch::Tensor> cfresh;
    make(cfresh);
    MuonAdamW oc(c, 384, 20, tag(cfresh));
    for (int s = 2; s < 5; ++s) feed(oc, cfresh, s);
    QVERIFY(!torch::equal(cfresh[2], a[2]));
    // A state from another shape is refused.
    auto bad = tensors;
    bad[0].second = torch::zeros({3, 3});
    QVERIFY_THROWS_EXCEPTION(gllm::Error, ob.load_state_tensors(bad));
  }

  void bad_inputs_are_errors() {
    gllm::OptimConfig c;
    auto v = leaf(torch::zeros({4}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, MuonAdamW(c, 384, 10, {{"v", v, "matrix"}}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, MuonAdamW(c, 384, 10, {{"v", v, "no_such_group"}}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error,
                             MuonAdamW(c, 384, 10, {{"v", v, "scalar"}, {"v", v, "scalar"}}));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, MuonAdamW(c, 384, 0, {{"v", v, "scalar"}}));
  }
};

QTEST_APPLESS_MAIN(TestOptimMuonAdamW)
#include "test_optim_muon_adamw.moc"
