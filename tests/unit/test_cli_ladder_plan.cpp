// The ladder's plan and probe from the command line: `gllm ladder plan` on a pilot reads its slope
// and paired seed SD and gives each arm the seeds the paired t-test needs; `gllm train --sweep
// --seeds auto --pilot` takes that number; bad requests exit non-zero with the fix.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/stats/power.h"
#include "tests/support/test_support.h"

using gllm::test::run_cli;

namespace {

// A completed run whose val BPB falls 0.15 per e-fold of tokens (1000 … 20000 tokens).
void make_run(const std::string& dir, const std::string& arm, int seed, double heldout) {
  std::filesystem::create_directories(dir);
  gllm::test::write_text(
      dir + "/config.json",
      nlohmann::json{{"name", "ladder-" + arm},
                     {"grading", {{"level_grades_source", "ladder"}, {"ladder_arm", arm}}},
                     {"train", {{"seed", seed}}}}
          .dump());
  std::string m;
  for (int k = 1; k <= 20; ++k)
    m += nlohmann::json{{"step", k}, {"tokens", 1000 * k}, {"val_bpb", 3 - 0.15 * std::log(k)}}
             .dump() +
         "\n";
  gllm::test::write_text(dir + "/metrics.jsonl", m);
  gllm::test::write_text(
      dir + "/summary.json",
      nlohmann::json{{"status", "completed"}, {"heldout_bpb", heldout}, {"seed", seed}}.dump());
}

nlohmann::json ok_json(const std::vector<std::string>& args) {
  auto r = run_cli(args);
  if (r.exit_code != 0) {
    QTest::qFail(("exit " + std::to_string(r.exit_code) + ": " + r.err).c_str(), __FILE__,
                 __LINE__);
    return {};
  }
  return nlohmann::json::parse(r.out);
}

bool fails_saying(const std::vector<std::string>& args, const std::string& needle) {
  auto r = run_cli(args);
  return r.exit_code != 0 && r.err.find(needle) != std::string::npos;
}

}  // namespace

class TestCliLadderPlan : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir(const std::string& n) const { return tmp_.path().toStdString() + "/" + n; }
  const std::string ladder_ =
      gllm::test::source_file("presets/ladders/tiny-cpu-tokens-ladder.json");

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    // Uniform × 3 seeds; oracle paired with deltas −0.020, −0.026, −0.023 (SD 0.003).
    const std::vector<double> base{1.98, 1.99, 2.00}, d{-0.020, -0.026, -0.023};
    for (int i = 0; i < 3; ++i) {
      const std::string s = std::to_string(41 + i);
      make_run(dir("pilot/uniform-s" + s), "uniform", 41 + i, base[i]);
      make_run(dir("pilot/oracle-s" + s), "oracle", 41 + i, base[i] + d[i]);
    }
  }

  void planReadsThePilot() {
    const auto p = ok_json({"ladder", "plan", ladder_, "--pilot", dir("pilot"), "--json"});
    QVERIFY(std::abs(p["slope_bpb_per_efold"].get<double>() - 0.15) < 1e-9);
    QVERIFY(std::abs(p["paired_sd"].get<double>() - 0.003) < 1e-12);
    QCOMPARE(p["pilot_seeds"].get<int>(), 3);
    QCOMPARE(p["prediction"].get<std::string>(), std::string("held-out"));
    int most = 0;
    double previous = 1e300;
    for (const auto& a : p["arms"]) {
      QVERIFY(a["certificate"].get<double>() <= previous);  // ordered by the prediction
      previous = a["certificate"].get<double>();
      if (a["arm"] == "uniform") continue;
      const double delta = 0.15 * std::log(a["lambda_q"].get<double>());
      QVERIFY(std::abs(a["predicted_delta_bpb"].get<double>() - delta) < 1e-12);
      const int n = gllm::stats::seeds_for_power(delta, 0.003, 0.8, 0.05, 10);
      QCOMPARE(a["seeds_needed"].is_null() ? 0 : a["seeds_needed"].get<int>(), n);
      QCOMPARE(a["in_reach"].get<bool>(), n > 0);
      most = std::max(most, n);
    }
    QCOMPARE(p["seeds_recommended"].get<int>(), std::max(2, most));
    auto text = run_cli({"ladder", "plan", ladder_, "--pilot", dir("pilot")});
    QCOMPARE(text.exit_code, 0);
    QVERIFY(text.out.find("seeds for 80 %") != std::string::npos);

    // The sweep takes the plan's number: the file's seeds first, then the next integers.
    gllm::test::write_text(dir("sweep.json"),
                           R"({"name": "s", "arms": ["ladder-uniform", "ladder-educated"],
                               "seeds": [41, 42]})");
    const auto dry = ok_json({"train", "--sweep", dir("sweep.json"), "--seeds", "auto", "--pilot",
                              dir("pilot"), "--out", dir("runs"), "--dry-run", "--json"});
    const int want = p["seeds_recommended"].get<int>();
    QCOMPARE(static_cast<int>(dry["seeds"].size()), want);
    QCOMPARE(dry["seeds"][0].get<int>(), 41);
    QCOMPARE(static_cast<int>(dry["runs"].size()), 2 * want);
    QCOMPARE(dry["runs"][1]["seed"].get<int>(), 41);  // seed by seed: every arm of 41 first
    QVERIFY(!std::filesystem::exists(dir("runs")));   // a dry run trains nothing
  }

  void badRequestsSayTheFix() {
    QVERIFY(fails_saying({"train", "--sweep", dir("sweep.json"), "--seeds", "auto"}, "--pilot"));
    QVERIFY(fails_saying({"train", "--sweep", dir("sweep.json"), "--seeds", "41,41", "--dry-run"},
                         "given twice"));
    QVERIFY(fails_saying({"train", "--sweep", dir("sweep.json"), "--seeds", "4.5", "--dry-run"},
                         "not a seed"));
    make_run(dir("one/uniform-s41"), "uniform", 41, 2.0);
    QVERIFY(fails_saying({"ladder", "plan", ladder_, "--pilot", dir("one")}, "at least 2 seeds"));
    QVERIFY(fails_saying({"ladder"}, "--profiles is required"));
    QVERIFY(fails_saying({"probe", dir("pilot/uniform-s41")}, "no committed checkpoint"));
  }
};

QTEST_APPLESS_MAIN(TestCliLadderPlan)
#include "test_cli_ladder_plan.moc"
