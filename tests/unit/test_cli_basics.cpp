// The CLI as a user meets it: `gllm version` reports OpenBLAS (never the reference BLAS), --json
// parses, and errors exit non-zero with a message that says what to do.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"

using gllm::test::run_cli;

class TestCliBasics : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void versionReportsOpenBlas() {
    auto r = run_cli({"version", "--json"});
    QCOMPARE(r.exit_code, 0);
    auto j = nlohmann::json::parse(r.out);
    QVERIFY2(j["blas"] == "OpenBLAS",
             ("BLAS in use is " + j["blas"].get<std::string>() + " (" +
              j["blas_detail"].get<std::string>() + "); install libopenblas0-openmp")
                 .c_str());
    QVERIFY(j["threads"].get<int>() >= 1);
    QCOMPARE(j["threads"].get<int>(), j["cores"].get<int>());  // all cores by default
    // The engine's own parallel loops fork too (they run serially where OpenMP flags were lost).
    QCOMPARE(j["kernel_threads"].get<int>(), j["threads"].get<int>());
    QVERIFY(j.contains("torch") && j.contains("cuda"));
    // Scaling out: Debian's LibTorch has Gloo (the 2-process test relies on it) and the attention
    // operator the model calls on CUDA (found by name at run time).
    QVERIFY2(j["c10d_gloo"].get<bool>(),
             "no c10d Gloo in this build; install libgloo-dev (scripts/setup.sh)");
    QVERIFY(j.contains("c10d_nccl") && j.contains("cuda_build"));
    QVERIFY2(j["sdpa_operator"].get<std::string>().find("scaled_dot_product_attention") !=
                 std::string::npos,
             j.dump().c_str());
  }
  void threadsOverride() {
    auto r = run_cli({"version", "--json"}, {"GLLM_THREADS=1"});
    QCOMPARE(r.exit_code, 0);
    QCOMPARE(nlohmann::json::parse(r.out)["threads"].get<int>(), 1);
    QCOMPARE(nlohmann::json::parse(r.out)["kernel_threads"].get<int>(), 1);
  }
  void kernelsForkOnTwoThreadsEvenOnOneCore() {
    // Two threads asked for explicitly, so the check holds on a single-core machine as well.
    auto r = run_cli({"version", "--json", "--threads", "2"});
    QCOMPARE(r.exit_code, 0);
    auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j["threads"].get<int>(), 2);
    QVERIFY2(j["kernel_threads"].get<int>() == 2,
             "the engine's at::parallel_for loops run on one thread: its "
             "sources were compiled without OpenMP (see GllmDependencies.cmake)");
  }
  void unknownSubcommandFails() {
    auto r = run_cli({"frobnicate"});
    QVERIFY(r.exit_code != 0);
    QVERIFY2(!r.err.empty() || !r.out.empty(), "no message on a bad subcommand");
  }
  void missingArchiveFailsWithMessage() {
    auto r = run_cli({"data", "fetch", "--archive", "/nonexistent/corpus.tgz"});
    QVERIFY(r.exit_code != 0);
    QVERIFY2(r.err.find("does not exist") != std::string::npos, r.err.c_str());
  }
  void helpEverywhere() {
    for (auto sub : {"version", "data"}) {
      auto r = run_cli({sub, "--help"});
      QCOMPARE(r.exit_code, 0);
      QVERIFY(r.out.find("--help") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestCliBasics)
#include "test_cli_basics.moc"
