// The per-shape choice between the engine's kernels and the library's, and the kernels' ISA: forced
// modes run nothing, timing keeps the faster, the cache file carries choices across processes and a
// damaged or hostile cache file is timed over, never trusted or blocked on.
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <thread>

#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/linear.h"
#include "engine/ops/panel_gemm.h"

using namespace gllm;
namespace k = gllm::ops::kernels;

namespace {

// Functions for choose() that count their runs; `sleep_ms` makes one side measurably slower.
struct Counted {
  int runs = 0;
  int sleep_ms = 0;
  std::function<void()> fn() {
    return [this] {
      ++runs;
      if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    };
  }
};

}  // namespace

class TestKernelChoice : public QObject {
  Q_OBJECT
  QTemporaryDir data_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(data_.isValid());
    qputenv("GLLM_DATA", data_.path().toUtf8());  // the cache file goes here, not to ~/.cache
    qputenv("GLLM_KERNEL_CACHE", "1");
  }
  void init() {
    k::set_mode(k::Mode::Measure);
    k::set_isa(k::cpu_isa());
    k::clear_choices();
    std::remove(k::cache_file().c_str());
  }

  void namesParseAndBadNamesSayWhatToUse() {
    QCOMPARE(k::parse_isa("avx2", "x"), k::Isa::Avx2);
    QCOMPARE(k::parse_mode("library", "x"), k::Mode::Library);
    try {
      k::parse_isa("sse9", "GLLM_KERNEL_ISA");
      QFAIL("an unknown ISA was accepted");
    } catch (const Error& e) {
      const QString m = e.what();
      QVERIFY2(m.contains("GLLM_KERNEL_ISA") && m.contains("avx512") && m.contains("portable"),
               qPrintable(m));
    }
    try {
      k::parse_mode("fastest", "GLLM_KERNELS");
      QFAIL("an unknown mode was accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("measure"), e.what());
    }
  }

  void theIsaNarrowsButNeverWidens() {
    QCOMPARE(k::set_isa(k::Isa::Portable), k::cpu_isa());
    QCOMPARE(k::active_isa(), k::Isa::Portable);
    QVERIFY(!ops::panel::available());  // the panels need AVX2: callers take the BLAS
    k::set_isa(k::cpu_isa());
    if (k::cpu_isa() != k::Isa::Avx512) {
      try {
        k::set_isa(k::Isa::Avx512);
        QFAIL("AVX-512 was set on a CPU without it");
      } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("at most"), e.what());
      }
    }
  }

  void forcedModesRunNeitherSide() {
    Counted own, lib;
    k::set_mode(k::Mode::Own);
    QCOMPARE(k::choose("t.forced", 1, 2, 3, own.fn(), lib.fn()), k::Side::Own);
    k::set_mode(k::Mode::Library);
    QCOMPARE(k::choose("t.forced", 1, 2, 3, own.fn(), lib.fn()), k::Side::Library);
    QCOMPARE(k::chosen("t.forced", 1, 2, 3), std::optional<k::Side>(k::Side::Library));
    QCOMPARE(own.runs + lib.runs, 0);
    QVERIFY(k::choices().empty());
  }

  void timingKeepsTheFasterOnceAndSavesIt() {
    Counted own, lib;
    own.sleep_ms = 25;  // the engine's side is the slow one here
    QCOMPARE(k::choose("t.timed", 64, 32, 16, own.fn(), lib.fn()), k::Side::Library);
    QCOMPARE(own.runs, 4);  // one untimed and three timed runs each
    QCOMPARE(lib.runs, 4);
    QCOMPARE(k::choose("t.timed", 64, 32, 16, own.fn(), lib.fn()), k::Side::Library);
    QCOMPARE(own.runs, 4);  // made once
    // another shape is another choice, and the slow side can be the library's
    Counted own2, lib2;
    lib2.sleep_ms = 25;
    QCOMPARE(k::choose("t.timed", 65, 32, 16, own2.fn(), lib2.fn()), k::Side::Own);
    const auto made = k::choices();
    QCOMPARE(made.size(), size_t(2));
    QCOMPARE(made[0].op, std::string("t.timed"));
    QCOMPARE(made[0].m, int64_t(64));
    QVERIFY(made[0].own_ms >= 25.0);
    QVERIFY(made[0].library_ms < made[0].own_ms);
    QVERIFY(!made[0].from_cache);
    QCOMPARE(made[0].isa, std::string(k::isa_name(k::cpu_isa())));
    // the cache file holds both, and a fresh process (memory cleared) takes them without timing
    QCOMPARE(k::cached_choices().size(), size_t(2));
    k::clear_choices();
    Counted own3, lib3;
    QCOMPARE(k::choose("t.timed", 64, 32, 16, own3.fn(), lib3.fn()), k::Side::Library);
    QCOMPARE(own3.runs + lib3.runs, 0);
    QVERIFY(k::choices().front().from_cache);
    // the report says what was chosen, with the ISA and the BLAS's core type beside it
    const auto r = k::report(true);
    QCOMPARE(r["isa"].get<std::string>(), std::string(k::isa_name(k::active_isa())));
    QCOMPARE(r["cached"].size(), size_t(2));
    QCOMPARE(r["choices"][0]["side"].get<std::string>(), std::string("library"));
    QVERIFY(r.contains("blas_core_type") && r.contains("openblas_coretype"));
  }

  // Two processes timing one shape at once: the first choice written stands, and the later
  // process takes it (so a run and its resume, or two runs, run the same kernels).
  void theFirstChoiceWrittenStands() {
    Counted a, b;
    k::choose("t.first-read", 1, 1, 1, a.fn(), b.fn());  // this process has read the file now
    const std::string t = std::string(k::isa_name(k::active_isa()));
    auto j = nlohmann::json::parse(gllm::read_file(k::cache_file()));
    j["choices"].push_back({{"op", "t.race"},
                            {"m", 3},
                            {"k", 3},
                            {"n", 3},
                            {"threads", at::get_num_threads()},
                            {"isa", t},
                            {"side", "own"},
                            {"own_ms", 9.0},
                            {"library_ms", 1.0}});
    write_file_atomic(k::cache_file(), j.dump());  // "another process" chose own meanwhile
    Counted own, lib;
    own.sleep_ms = 25;  // timed here, the library would win
    QCOMPARE(k::choose("t.race", 3, 3, 3, own.fn(), lib.fn()), k::Side::Own);
    QCOMPARE(own.runs, 4);
    QCOMPARE(k::chosen("t.race", 3, 3, 3), std::optional<k::Side>(k::Side::Own));
  }

  void choicesAreKeptPerIsa() {
    if (k::cpu_isa() < k::Isa::Avx2) QSKIP("one ISA only on this CPU");
    Counted a, b;
    k::choose("t.isa", 8, 8, 8, a.fn(), b.fn());
    k::set_isa(k::Isa::Portable);
    k::choose("t.isa", 8, 8, 8, a.fn(), b.fn());
    QCOMPARE(a.runs, 8);  // timed again at the other ISA
    QCOMPARE(k::choices().size(), size_t(2));
  }

  void aDamagedCacheFileIsTimedOver() {
    make_directories(data_.filePath("kernels").toStdString());
    for (const std::string& bad :
         {std::string("{\"choices\": [{\"op\": 5}]}"), std::string("not json"),
          std::string("{\"choices\": [{\"op\":\"t.bad\",\"m\":1,\"k\":1,\"n\":1,\"threads\":1,"
                      "\"isa\":\"avx2\",\"side\":\"sideways\"}]}")}) {
      k::clear_choices();
      write_file_atomic(k::cache_file(), bad);
      QVERIFY(k::cached_choices().empty());
      Counted own, lib;
      k::choose("t.bad", 1, 1, 1, own.fn(), lib.fn());
      QCOMPARE(own.runs, 4);
      QCOMPARE(k::cached_choices().size(), size_t(1));  // rewritten whole
    }
  }

  void aFifoAsTheCacheFileNeverBlocks() {
    make_directories(data_.filePath("kernels").toStdString());
    QCOMPARE(::mkfifo(k::cache_file().c_str(), 0600), 0);
    Counted own, lib;
    k::choose("t.fifo", 2, 2, 2, own.fn(), lib.fn());  // would hang if the FIFO were opened
    QCOMPARE(own.runs, 4);
    struct stat st {};
    QCOMPARE(::stat(k::cache_file().c_str(), &st), 0);
    QVERIFY(S_ISREG(st.st_mode));  // replaced by a regular file
  }

  void linearTakesTheChosenSide() {
    if (k::cpu_isa() < k::Isa::Avx2) QSKIP("no panel kernels on this CPU");
    // A real shape through ops::linear: one choice for the forward and one for the input gradient,
    // and both sides give the same values.
    auto x = torch::randn({ops::panel::kMinRows, 64}, torch::requires_grad()),
         W = torch::randn({48, 64}, torch::requires_grad());
    auto y = ops::linear(x, W);
    y.sum().backward();
    const auto made = k::choices();
    // the input gradient is a choice of its own where the forward took the panels (the library's
    // forward is torch::linear, whose backward is ATen's)
    QCOMPARE(made.size(), size_t(made[0].side == k::Side::Own ? 2 : 1));
    QCOMPARE(made[0].op, std::string("linear.forward"));
    QCOMPARE(made[0].m, int64_t(ops::panel::kMinRows));
    QCOMPARE(made[0].k, int64_t(64));
    QCOMPARE(made[0].n, int64_t(48));
    if (made.size() == 2) QCOMPARE(made[1].op, std::string("linear.input_grad"));
    QVERIFY(made[0].own_ms > 0 && made[0].library_ms > 0);
    QVERIFY((y - torch::linear(x, W)).abs().max().item<double>() < 1e-4);
  }
};

QTEST_GUILESS_MAIN(TestKernelChoice)
#include "test_ops_kernel_choice.moc"
