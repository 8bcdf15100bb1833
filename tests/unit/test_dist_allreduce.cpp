// c10d data-parallel pieces over a FileStore in a temp folder, two ranks as two threads (Gloo on
// loopback): bucketed gradient mean, visit-count sums, broadcast, batch plans, failure messages,
// joins that end (a peer that never comes, a master that does not resolve, a store under /proc).
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <functional>
#include <thread>

#include "engine/dist/process_group.h"
#include "engine/io/error.h"
#include "engine/optim/muon_adamw.h"

namespace {

using gllm::dist::Context;
using gllm::dist::DistOptions;

// Runs fn(rank, ctx) on two threads joined through a fresh FileStore; rethrows the first failure.
void two_ranks(const std::string& store, double bucket_mb,
               const std::function<void(int, Context&)>& fn) {
  std::exception_ptr errs[2];
  std::thread ts[2];
  for (int r = 0; r < 2; ++r) {
    ts[r] = std::thread([&, r] {
      try {
        DistOptions o;
        o.rank = r;
        o.world_size = 2;
        o.store_file = store;
        o.timeout_s = 60;
        o.bucket_mb = bucket_mb;
        Context ctx(o, torch::kCPU);
        fn(r, ctx);
      } catch (...) {
        errs[r] = std::current_exception();
      }
    });
  }
  for (auto& t : ts) t.join();
  for (auto& e : errs)
    if (e) std::rethrow_exception(e);
}

// The gradients rank r holds for parameter i: deterministic, different per rank. Each call has
// its own generator: the ranks are threads, and the global one would race between them.
torch::Tensor grad_for(int rank, int i, torch::IntArrayRef shape) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(1000 * i + rank));
  return torch::randn(shape, gen, torch::kDouble).to(torch::kFloat32);
}

}  // namespace

class TestDistAllreduce : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  int n_ = 0;
  std::string store() { return tmp_.path().toStdString() + "/store" + std::to_string(n_++); }

 private Q_SLOTS:
  void initTestCase() {
    if (!gllm::dist::gloo_compiled()) QSKIP("this build has no c10d Gloo process group");
    QVERIFY(tmp_.isValid());
  }

  void batch_plans() {
    auto p = gllm::dist::plan_batch(4, 6, 3, 1);  // accumulation split
    QVERIFY(!p.split_rows);
    QCOMPARE(p.local_micro_steps, 2);
    QVERIFY(p.owns(1) && p.owns(4) && !p.owns(0) && !p.owns(2));
    auto rows = gllm::dist::plan_batch(4, 1, 2, 1);  // one micro-step over 2: its rows split
    QVERIFY(rows.split_rows && rows.owns(0));
    QCOMPARE(rows.row_begin, int64_t(2));
    auto one = gllm::dist::plan_batch(3, 5, 1, 0);
    QCOMPARE(one.local_micro_steps, 5);
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::dist::plan_batch(3, 5, 2, 0));
    QVERIFY_THROWS_EXCEPTION(gllm::Error, gllm::dist::plan_batch(4, 2, 2, 2));
  }

  void single_process_is_identity() {
    Context ctx;
    QVERIFY(!ctx.distributed());
    QVERIFY(ctx.is_writer());
    auto p = torch::ones({3}, torch::requires_grad());
    p.mutable_grad() = torch::full({3}, 2.0);
    ctx.all_reduce_gradients({p});
    QCOMPARE(p.grad()[1].item<float>(), 2.0f);
    QCOMPARE(ctx.all_reduce_sum({1.5, -2})[1], -2.0);
    QVERIFY(ctx.any(true) && !ctx.any(false));
  }

  // Mean of the two ranks' gradients in fp32, with buckets small enough that several are used;
  // a gradient present on one rank only is averaged with zeros; one absent everywhere stays absent.
  void bucketed_gradient_mean() {
    const std::vector<std::vector<int64_t>> shapes{{64, 32}, {7},    {300, 17},
                                                   {5, 5},   {1000}, {3, 4, 5}};
    std::vector<torch::Tensor> results[2];
    int64_t buckets[2] = {0, 0};
    two_ranks(store(), /*bucket_mb=*/0.02, [&](int r, Context& ctx) {
      std::vector<torch::Tensor> params;
      for (size_t i = 0; i < shapes.size(); ++i) {
        auto dtype = i == 3 ? torch::kBFloat16 : torch::kFloat32;
        auto p = torch::zeros(shapes[i], torch::TensorOptions().dtype(dtype).requires_grad(true));
        bool has = !(i == 4 && r == 0) && i != 5;  // #4 only on rank 1, #5 nowhere
        if (has) p.mutable_grad() = grad_for(r, static_cast<int>(i), shapes[i]).to(dtype);
        params.push_back(p);
      }
      ctx.all_reduce_gradients(params);
      buckets[r] = ctx.buckets_last_reduce();
      for (auto& p : params)
        results[r].push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    });
    QVERIFY2(buckets[0] >= 3, "the 20 kB buckets should split ~100 kB of gradients");
    QCOMPARE(buckets[0], buckets[1]);
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i == 5) {
        QVERIFY(!results[0][i].defined() && !results[1][i].defined());
        continue;
      }
      auto dtype = i == 3 ? torch::kBFloat16 : torch::kFloat32;
      auto g0 = i == 4 ? torch::zeros(shapes[i])
                       : grad_for(0, static_cast<int>(i), shapes[i]).to(dtype).to(torch::kFloat32);
      auto g1 = grad_for(1, static_cast<int>(i), shapes[i]).to(dtype).to(torch::kFloat32);
      auto want = ((g0 + g1) / 2).to(dtype).to(torch::kFloat32);
      for (int r = 0; r < 2; ++r) {
        QCOMPARE(results[r][i].scalar_type(), dtype);
        double err = (results[r][i].to(torch::kFloat32) - want).abs().max().item<double>();
        QVERIFY2(err <= (i == 3 ? 1e-2 : 1e-6),
                 ("param " + std::to_string(i) + " err " + std::to_string(err)).c_str());
      }
    }
  }

  // Visit counts sum over ranks; feeding the sum to the optimizer equals feeding it every rank's
  // rows.
  void visit_counts_sum_and_apply() {
    torch::Tensor summed[2];
    torch::Tensor rows[2];
    for (int r = 0; r < 2; ++r) {
      torch::manual_seed(77 + r);
      rows[r] = torch::randint(0, 50, {4, 9}, torch::kLong);
    }
    two_ranks(store(), 25, [&](int r, Context& ctx) {
      gllm::dist::VisitCounts v;
      v.add("t", rows[r], 50);
      ctx.all_reduce_counts(v);
      summed[r] = v.counts().at("t").clone();
    });
    auto want = torch::bincount(torch::cat({rows[0].reshape(-1), rows[1].reshape(-1)}), {}, 50)
                    .to(torch::kFloat32);
    QVERIFY(torch::equal(summed[0], want));
    QVERIFY(torch::equal(summed[1], want));

    // Two optimizers over the same moment-free table: one sees the rows, one the summed counts.
    gllm::OptimConfig oc;
    oc.oe_update = "moment_free";
    auto make = [&](torch::Tensor& p) {
      torch::manual_seed(5);
      p = torch::randn({50, 8}).requires_grad_(true);
      std::vector<gllm::optim::TaggedParam> tp{{"oe_tables.0", p, "oe_table"}};
      return std::make_unique<gllm::optim::MuonAdamW>(oc, 32, 10, tp);
    };
    torch::Tensor pa, pb;
    auto a = make(pa);
    auto b = make(pb);
    torch::manual_seed(9);
    auto g = torch::randn({50, 8});
    pa.mutable_grad() = g.clone();
    pb.mutable_grad() = g.clone();
    a->accumulate_visits("oe_tables.0", rows[0]);
    a->accumulate_visits("oe_tables.0", rows[1]);
    gllm::dist::VisitCounts v;
    v.add("oe_tables.0", rows[0], 50);
    v.add("oe_tables.0", rows[1], 50);
    v.apply(*b);
    QVERIFY(v.empty());
    torch::manual_seed(5);
    auto before = torch::randn({50, 8});
    a->step(0);
    b->step(0);
    QVERIFY(!torch::equal(pa.detach(), before));  // visited rows moved
    QVERIFY(torch::equal(pa.detach(), pb.detach()));
    // Rows nobody visited keep their values (the moment-free update touches visited rows only).
    auto visited =
        torch::bincount(torch::cat({rows[0].reshape(-1), rows[1].reshape(-1)}), {}, 50) > 0;
    auto unvisited = visited.logical_not().nonzero().squeeze(1);
    if (unvisited.numel() > 0)
      QVERIFY(
          torch::equal(pa.detach().index_select(0, unvisited), before.index_select(0, unvisited)));
  }

  void broadcast_sum_any_barrier() {
    torch::Tensor got[2];
    std::vector<double> sums[2];
    bool anys[2] = {false, false};
    two_ranks(store(), 25, [&](int r, Context& ctx) {
      QVERIFY(ctx.distributed());
      QCOMPARE(ctx.backend(), std::string("gloo"));
      auto w = torch::full({3, 4}, static_cast<float>(r + 1)).requires_grad_(true);
      auto strided =
          torch::arange(12, torch::kFloat32).view({3, 4}).t() * (r + 1);  // non-contiguous
      ctx.broadcast({w, strided}, 0);
      got[r] = torch::cat({w.detach().reshape(-1), strided.reshape(-1)});
      sums[r] = ctx.all_reduce_sum({1.0 * r, 2.5});
      anys[r] = ctx.any(r == 1);
      ctx.barrier();
    });
    auto want = torch::cat(
        {torch::ones({12}), torch::arange(12, torch::kFloat32).view({3, 4}).t().reshape(-1)});
    QVERIFY(torch::equal(got[0], want));
    QVERIFY(torch::equal(got[1], want));
    QCOMPARE(sums[0], (std::vector<double>{1.0, 5.0}));
    QCOMPARE(sums[1], sums[0]);
    QVERIFY(anys[0] && anys[1]);
  }

  // A rank that records a failure and leaves makes the other stop with that message.
  void failed_rank_stops_the_other() {
    std::string msg0;
    two_ranks(store(), 25, [&](int r, Context& ctx) {
      ctx.barrier();
      if (r == 1) {
        ctx.abort("rank 1 failed: the corpus file vanished");
        return;  // leaves: its process group closes its connections
      }
      try {
        for (int i = 0; i < 100; ++i) ctx.all_reduce_sum({1.0});
      } catch (const gllm::Error& e) {
        msg0 = e.what();
      }
    });
    QVERIFY2(msg0.find("rank 1 failed: the corpus file vanished") != std::string::npos,
             msg0.c_str());
    QVERIFY2(msg0.find("stopping rank 0") != std::string::npos, msg0.c_str());
  }

  void joinsThatCannotCompleteEndWithTheMissingRankNamed() {
    // WORLD_SIZE=2 RANK=0 and rank 1 never starts: the join gives up after its bounded wait.
    DistOptions o;
    o.rank = 0;
    o.world_size = 2;
    o.timeout_s = 60;
    o.join_timeout_s = 1;
    o.store_file = store();
    std::string e;
    try {
      Context ctx(o, torch::kCPU);
    } catch (const gllm::Error& err) {
      e = err.what();
    }
    QVERIFY2(e.find("rank 1 of 2 did not join") != std::string::npos &&
                 e.find("GLLM_DIST_JOIN_TIMEOUT_S") != std::string::npos,
             e.c_str());
    // The same over TCP with a reachable master (this host) and no peer.
    DistOptions t = o;
    t.store_file.clear();
    t.master_addr = "127.0.0.1";
    t.master_port = 29500 + static_cast<int>(::getpid() % 20000);
    e.clear();
    try {
      Context ctx(t, torch::kCPU);
    } catch (const gllm::Error& err) {
      e = err.what();
    }
    QVERIFY2(e.find("rank 1 of 2 did not join") != std::string::npos, e.c_str());
    // A master address that does not resolve fails at once (not after the store timeout).
    t.rank = 1;
    t.master_addr = "no-such-host.invalid";
    t.timeout_s = 600;
    e.clear();
    try {
      Context ctx(t, torch::kCPU);
    } catch (const gllm::Error& err) {
      e = err.what();
    }
    QVERIFY2(e.find("does not resolve") != std::string::npos &&
                 e.find("MASTER_ADDR") != std::string::npos,
             e.c_str());
    // A store file under /proc is refused before the store is opened.
    o.store_file = "/proc/gllm-store";
    e.clear();
    try {
      Context ctx(o, torch::kCPU);
    } catch (const gllm::Error& err) {
      e = err.what();
    }
    QVERIFY2(e.find("/proc") != std::string::npos, e.c_str());
  }
};

QTEST_APPLESS_MAIN(TestDistAllreduce)
#include "test_dist_allreduce.moc"
