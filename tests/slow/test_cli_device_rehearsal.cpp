// The GPU machine check rehearsed on the CPU: scripts/device-deps.sh packs .deps/device, then
// scripts/device-check.sh --device cpu runs end to end from it in a scratch copy, with no network.
#include <QtTest>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/test_support.h"

namespace fs = std::filesystem;
using gllm::test::CommandResult;
using gllm::test::run_program;

namespace {

constexpr int kMinute = 60 * 1000;

std::string tail(const std::string& s, size_t n = 6000) {
  return s.size() > n ? s.substr(s.size() - n) : s;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The folder the tests and `gllm` were built in (<build>/app/gllm).
fs::path build_dir() {
  return fs::path(gllm::test::cli_path()).parent_path().parent_path();
}

// Runs `command` through bash -c, in a network namespace of its own when the kernel lets this
// user make one (unshare -rn): the GPU machine has no network, and neither does the rehearsal.
CommandResult offline(const std::string& command, const std::vector<std::string>& env,
                      int timeout_ms, bool* isolated) {
  *isolated = run_program("unshare", {"-rn", "true"}, {}, 30000).exit_code == 0;
  if (*isolated) return run_program("unshare", {"-rn", "bash", "-c", command}, env, timeout_ms);
  return run_program("bash", {"-c", command}, env, timeout_ms);
}

std::vector<std::string> with(std::vector<std::string> env, const std::vector<std::string>& more) {
  env.insert(env.end(), more.begin(), more.end());
  return env;
}

}  // namespace

class TestCliDeviceRehearsal : public QObject {
  Q_OBJECT
  fs::path scratch_, tree_;
  std::vector<std::string> env_;

 private Q_SLOTS:
  // Packs .deps/device with the one command (into the scratch folder) and copies the working tree
  // (tracked and untracked, not ignored: what the GPU machine receives) beside it. The scratch
  // folder's place is fixed, so its build-device/ and ccache's entries serve the next run; packing
  // and copying keep the files' times, so a build primed by an earlier invocation stays current.
  void initTestCase() {
    GLLM_REQUIRE_TORCH_PYTHON();
    const fs::path root = fs::canonical(fs::path(gllm::test::source_file(".")));
    scratch_ = build_dir() / "device-rehearsal";
    tree_ = scratch_ / "tree";
    fs::create_directories(scratch_);
    const fs::path deps = scratch_ / "deps";
    auto packed = run_program(
        "bash", {(root / "scripts/device-deps.sh").string()},
        {"GLLM_DEVICE_DEPS_DIR=" + deps.string(), "GLLM_BUILD_DIR=" + build_dir().string()},
        20 * kMinute);
    qInfo("%s", tail(packed.out, 3000).c_str());
    QVERIFY2(packed.exit_code == 0,
             ("scripts/device-deps.sh failed:\n" + tail(packed.out) + tail(packed.err)).c_str());
    QVERIFY(packed.out.find("device-deps: packed:") != std::string::npos);

    // The copy: stale files go (build-device/ stays, an incremental build), then git's file list.
    if (fs::exists(tree_))
      for (const auto& e : fs::directory_iterator(tree_))
        if (e.path().filename() != "build-device") fs::remove_all(e.path());
    const std::string copy =
        "set -e; cd '" + root.string() +
        "'; if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then "
        "git ls-files -z -co --exclude-standard | xargs -0 cp --parents -a -t '" +
        tree_.string() +
        "'; else tar --exclude='./build*' --exclude=./.deps -cf - . | tar -xf - -C '" +
        tree_.string() + "'; fi; mkdir -p '" + tree_.string() + "/.deps'; cp -a '" + deps.string() +
        "' '" + tree_.string() + "/.deps/device'";
    fs::create_directories(tree_);
    auto copied = run_program("bash", {"-c", copy}, {}, 5 * kMinute);
    QVERIFY2(copied.exit_code == 0, (copied.out + copied.err).c_str());
    QVERIFY(fs::exists(tree_ / "scripts/device-check.sh"));
    QVERIFY(fs::exists(tree_ / ".deps/device/data/brown"));

    env_ = {"GLLM_DEVICE_PYTHON=" + gllm::test::torch_python(),
            "GLLM_DEVICE_WORK=" + (scratch_ / "work").string(),
            "GLLM_DATA=",  // only what was packed
            "http_proxy=",
            "https_proxy=",
            "HTTP_PROXY=",
            "HTTPS_PROXY="};
  }

  // The build, primed outside the budget: on the CPU its time says nothing of the GPU machine's
  // (16 cores, no ccache). A cold build here takes many minutes (the headers come from
  // .deps/device, so the main build's ccache entries do not serve it), later ones are incremental.
  // CTest runs this function alone, as the fixture test_cli_device_rehearsal_build with a timeout
  // of its own, so the rehearsal's timeout measures the check and not a cold compile.
  void buildIsPrimed() {
    bool isolated = false;
    auto primed = offline(
        "bash '" + (tree_ / "scripts/device-check.sh").string() + "' --device cpu --build-only",
        with(env_, {"OUT=" + (scratch_ / "prime").string()}), 55 * kMinute, &isolated);
    QVERIFY2(primed.exit_code == 0, ("the rehearsal's build failed:\n" + tail(primed.out)).c_str());
  }

  // The whole check, as the GPU machine runs it: every step ok, the two-device steps "not
  // applicable", inside the budget, the report written.
  void rehearsalPassesWithinTheBudget() {
    const fs::path out = scratch_ / "out";
    fs::remove_all(out);
    bool isolated = false;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = offline("bash '" + (tree_ / "scripts/device-check.sh").string() + "' --device cpu",
                     with(env_, {"OUT=" + out.string()}), 15 * kMinute, &isolated);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string report = read_text(out / "device-report.md");
    qInfo("rehearsal (%s): exit %d after %.0f s\n%s", isolated ? "no network" : "network present",
          r.exit_code, wall, report.c_str());
    QVERIFY2(!report.empty(), ("no device-report.md:\n" + tail(r.out)).c_str());
    QVERIFY2(r.exit_code == 0, ("the rehearsal failed:\n" + tail(r.out)).c_str());
    auto j = gllm::test::read_json((out / "device-report.json").string());
    QCOMPARE(j["status"].get<int>(), 0);
    QVERIFY(j["caps_sum_s"].get<int>() * 10 <= j["budget_s"].get<int>() * 9);
    QVERIFY(j["wall_s"].get<int>() <= j["budget_s"].get<int>());
    std::map<std::string, std::string> results;
    for (const auto& s : j["steps"]) results[s["step"]] = s["result"];
    for (const char* step :
         {"configure", "build", "version", "check_gpu", "smoke", "throughput", "compile"})
      QVERIFY2(results[step] == "ok", (std::string(step) + ": " + results[step]).c_str());
    for (const char* step : {"dp", "torchrun"}) QCOMPARE(results[step], std::string("n/a"));
    QVERIFY(report.find("not applicable on this machine") != std::string::npos);
    QVERIFY(report.find("engine/reference") != std::string::npos);
    for (const char* f : {"device-check.log", "gpu-check.json", "smoke-summary.json",
                          "smoke-metrics.jsonl", "reference-throughput.json"})
      QVERIFY2(fs::exists(out / f), f);
  }

  // A step cut by its time limit says so, the steps after it still run, and the report comes back
  // with the check failed.
  void aCutStepIsReported() {
    const fs::path out = scratch_ / "out-cut";
    fs::remove_all(out);
    bool isolated = false;
    auto r = offline("bash '" + (tree_ / "scripts/device-check.sh").string() + "' --device cpu",
                     with(env_, {"OUT=" + out.string(), "GLLM_DEVICE_CAP_SMOKE=2"}), 15 * kMinute,
                     &isolated);
    const std::string report = read_text(out / "device-report.md");
    qInfo("%s", report.c_str());
    QVERIFY(r.exit_code != 0);
    auto j = gllm::test::read_json((out / "device-report.json").string());
    QCOMPARE(j["status"].get<int>(), 1);
    std::map<std::string, nlohmann::json> steps;
    for (const auto& s : j["steps"]) steps[s["step"]] = s;
    QCOMPARE(steps["smoke"]["result"].get<std::string>(), std::string("cut"));
    QVERIFY(steps["smoke"]["note"].get<std::string>().find("stopped after 2 s") !=
            std::string::npos);
    QCOMPARE(steps["version"]["result"].get<std::string>(), std::string("ok"));
    QCOMPARE(steps["dp"]["result"].get<std::string>(), std::string("n/a"));
  }
};

// QtTest's watchdog stops a test function after 5 minutes; a cold build of the rehearsal's tree
// takes longer, so unless one is set the watchdog waits a minute past the build's own 55-minute
// limit, which then reports the build's output.
int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QTEST_FUNCTION_TIMEOUT"))
    qputenv("QTEST_FUNCTION_TIMEOUT", QByteArray::number(56 * kMinute));
  TestCliDeviceRehearsal test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_cli_device_rehearsal.moc"
