// `ladder_report` on run folders written here: paired ΔBPB against uniform by seed, tokens to a
// fixed BPB, Spearman's ρ of predicted and measured order — each checked against a hand value.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/io/error.h"
#include "engine/stats/paired.h"
#include "engine/train/ladder_report.h"
#include "tests/support/test_support.h"

using namespace gllm;

namespace {

struct ArmSpec {
  std::string name;
  double certificate;
  double delta;  // true mean held-out Δ against uniform
};

const std::vector<ArmSpec> kArms{{"uniform", 0.0, 0.0},
                                 {"random", -0.5, 0.01},
                                 {"taxonomic", 1.0, -0.01},
                                 {"pos", 2.0, -0.005},
                                 {"educated", 3.0, -0.02}};
const std::vector<int> kSeeds{41, 42, 47};
const double kNoise[3] = {0.001, 0.0, -0.001};  // per-seed deviation of every non-uniform arm

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string make_ladder(const std::string& dir) {
  nlohmann::json arms = nlohmann::json::array();
  std::vector<std::string> order{"educated", "pos", "taxonomic", "uniform", "random"};
  for (const auto& a : kArms) {
    int rank = static_cast<int>(std::find(order.begin(), order.end(), a.name) - order.begin()) + 1;
    arms.push_back({{"name", a.name},
                    {"available", true},
                    {"program", "test"},
                    {"grades", {0.0, 0.0}},
                    {"level_grades", {0.0, 0.0}},
                    {"certificate", a.certificate},
                    {"sign", 0},
                    {"lambda_q", 1.0},
                    {"gain", 1.0},
                    {"in_cone", false},
                    {"rank", rank}});
  }
  arms.push_back({{"name", "oracle"}, {"available", false}, {"reason", "no held-out profiles"}});
  nlohmann::json j = {{"format", "gllm-ladder/1"},
                      {"lambda", 1.1},
                      {"clip", 2.0},
                      {"q_max", std::log(2.0) / std::log(1.1)},
                      {"d", 2},
                      {"levels", 2},
                      {"level_dims", {1, 1}},
                      {"bc", 0.9},
                      {"lambda_star", 0.81},
                      {"seed", 0},
                      {"alpha", {0.5, 0.5}},
                      {"tau", {0.5, 0.5}},
                      {"arms", arms},
                      {"order", order}};
  const std::string path = dir + "/ladder.json";
  write(path, j.dump());
  return path;
}

// A completed run: config, metrics with a validation curve falling by `slope` per 1000 tokens,
// summary.
void make_run(const std::string& dir, const std::string& ladder, const ArmSpec& a, int seed,
              double heldout, double slope) {
  std::filesystem::create_directories(dir);
  nlohmann::json cfg = {{"name", "ladder-" + a.name},
                        {"grading",
                         {{"mlge", true},
                          {"level_grades_source", "ladder"},
                          {"ladder_file", ladder},
                          {"ladder_arm", a.name}}},
                        {"train", {{"seed", seed}, {"steps", 4}}}};
  write(dir + "/config.json", cfg.dump());
  std::string metrics;
  for (int s = 1; s <= 4; ++s) {
    const double val = 3.0 - slope * s;
    metrics += nlohmann::json{{"step", s}, {"tokens", 1000 * s}, {"val_bpb", val}}.dump() + "\n";
  }
  metrics += nlohmann::json{{"step", 4}, {"tokens", 4000}, {"heldout_bpb", heldout}}.dump() + "\n";
  write(dir + "/metrics.jsonl", metrics);
  write(dir + "/summary.json", nlohmann::json{{"status", "completed"},
                                              {"val_bpb", 3.0 - 4 * slope},
                                              {"heldout_bpb", heldout},
                                              {"seed", seed}}
                                   .dump());
}

}  // namespace

class TestTrainLadderReport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void pairedDeltasTokensAndRankCorrelation() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    const std::string runs = dir + "/runs";
    for (const auto& a : kArms)
      for (size_t i = 0; i < kSeeds.size(); ++i) {
        const double base = 2.0 + 0.01 * static_cast<double>(i);  // the seed's uniform held-out BPB
        const double heldout = base + a.delta + (a.name == "uniform" ? 0.0 : kNoise[i]);
        // Faster arms fall faster: the educated curve reaches 2.7 after 2000 tokens, uniform after
        // 3000.
        const double slope = a.name == "educated" ? 0.15 : 0.1;
        make_run(runs + "/ladder-" + a.name + "-s" + std::to_string(kSeeds[i]), ladder, a,
                 kSeeds[i], heldout, slope);
      }
    const LadderReport r = ladder_report(runs, 2.7, 500, 1);
    QCOMPARE(static_cast<int>(r.arms.size()), 5);
    QCOMPARE(r.target_bpb, 2.7);
    for (const auto& x : r.arms) {
      const auto it = std::find_if(kArms.begin(), kArms.end(),
                                   [&](const ArmSpec& a) { return a.name == x.ladder_arm; });
      QVERIFY(it != kArms.end());
      QVERIFY(x.has_delta);
      QCOMPARE(x.delta_heldout.delta.n, 3);
      QVERIFY(std::abs(x.delta_heldout.delta.mean - it->delta) < 1e-12);
      if (x.ladder_arm != "uniform") {
        // deltas δ + (0.001, 0, −0.001): sd 0.001, half-width t(0.975, 2)·0.001/√3
        const double half = stats::student_t_quantile(0.975, 2) * 0.001 / std::sqrt(3.0);
        QVERIFY(std::abs(x.delta_heldout.delta.ci_high - x.delta_heldout.delta.ci_low - 2 * half) <
                1e-9);
      }
      // Tokens to 2.7: educated 2000, every other arm 3000 (reached exactly at an evaluation).
      QCOMPARE(x.token_ratio.n, 3);
      QVERIFY(std::abs(x.token_ratio.ratio - (x.ladder_arm == "educated" ? 1.5 : 1.0)) < 1e-12);
      QVERIFY(std::abs(x.token_ratio.low - x.token_ratio.ratio) < 1e-12);  // no seed spread
      QVERIFY(std::isnan(x.certificate_readback));  // no checkpoints here: reported as a warning
    }
    // Certificates rank random < uniform < taxonomic < pos < educated; improvements −Δ rank
    // random < uniform < pos < taxonomic < educated: Σd² = 2 over n = 5, ρ = 1 − 6·2/(5·24) = 0.9.
    QVERIFY(std::abs(r.rho_delta.rho - 0.9) < 1e-12);
    QVERIFY(r.rho_delta.low <= r.rho_delta.rho && r.rho_delta.rho <= r.rho_delta.high);
    QCOMPARE(r.rho_delta.seeds, 3);
    // Token ratios: educated 1.5, the rest tied at 1 → ranks (5, 2.5 ×4) against (5, 4, 3, 2, 1):
    // ρ = 5 / √(10·5).
    QVERIFY(std::abs(r.rho_tokens.rho - 5.0 / std::sqrt(50.0)) < 1e-12);
    QCOMPARE(r.prediction, std::string("fit"));  // the test ladder has no held-out scores
    QCOMPARE(r.arms.front().ladder_arm, std::string("educated"));
    QCOMPARE(r.arms.front().measured_rank, 1);
    QCOMPARE(r.arms.front().delta_rank, 1);
    QVERIFY(!r.warnings.empty());
  }

  void oneArmAndNonLadderRunsGiveNoCorrelation() {
    // uniform and one arm: no order to correlate, so no ρ (it printed one from a single arm); a
    // run that is not a ladder run is named as left out.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    const std::string runs = dir + "/runs";
    for (const auto& a : {kArms[0], kArms[4]})
      for (size_t i = 0; i < kSeeds.size(); ++i)
        make_run(runs + "/ladder-" + a.name + "-s" + std::to_string(kSeeds[i]), ladder, a,
                 kSeeds[i], 2.0 + a.delta + kNoise[i], 0.1);
    std::filesystem::create_directories(runs + "/plain");
    write(runs + "/plain/config.json", R"({"name": "plain", "train": {"seed": 1}})");
    const gllm::LadderReport r = gllm::ladder_report(runs, 0, 50, 7);
    QVERIFY(std::isnan(r.rho_tokens.rho));
    QVERIFY(std::isnan(r.rho_delta.rho));
    bool said = false, plain = false;
    for (const auto& w : r.warnings) {
      said = said || w.find("at least two ladder arms") != std::string::npos;
      plain = plain || w.find("plain: not a ladder run") != std::string::npos;
    }
    QVERIFY(said);
    QVERIFY(plain);
  }

  void defaultTargetIsUniformAtHalfBudget() {
    // §8.2.2: the target every arm crosses during training. Uniform's budget is 4000 tokens; its
    // val BPB at 2000 is 3 − 0.1·2 = 2.8. Educated (slope 0.15) is at 2.85 at 1000 and 2.7 at
    // 2000: log tokens interpolate a third of the way, 1000·2^{1/3}, so its ratio is 2^{2/3}.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    const std::string runs = dir + "/runs";
    for (const auto& a : {kArms[0], kArms[2], kArms[4]})
      for (size_t i = 0; i < kSeeds.size(); ++i)
        make_run(runs + "/ladder-" + a.name + "-s" + std::to_string(kSeeds[i]), ladder, a,
                 kSeeds[i], 2.0 + a.delta + kNoise[i], a.name == "educated" ? 0.15 : 0.1);
    const LadderReport r = ladder_report(runs, LadderReportOptions{});
    QVERIFY(std::abs(r.target_bpb - 2.8) < 1e-12);
    QVERIFY(std::abs(r.half_budget_tokens - 2000) < 1e-9);
    for (const auto& x : r.arms) {
      const double t = x.ladder_arm == "educated" ? 1000 * std::cbrt(2.0) : 2000.0;
      for (double v : x.tokens_to_target) QVERIFY(std::abs(v - t) < 1e-9);
      QVERIFY(std::abs(x.token_ratio.ratio - 2000 / t) < 1e-12);
    }
    QVERIFY(!r.has_task);  // no probe.jsonl: said in a warning
  }

  void spearmanWithTies() {
    // Average ranks: x = (1, 2, 2, 3) → (1, 2.5, 2.5, 4); y ranks (1, 2, 3, 4): ρ = 4.5 / √(4.5·5).
    QVERIFY(std::abs(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) - 4.5 / std::sqrt(4.5 * 5.0)) < 1e-12);
    QCOMPARE(spearman({1, 2, 3}, {3, 2, 1}), -1.0);
    QCOMPARE(spearman({1, 1, 1}, {3, 2, 1}), 0.0);
  }

  void refusesWithoutUniform() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    make_run(dir + "/runs/ladder-pos-s41", ladder, kArms[3], 41, 2.0, 0.1);
    QVERIFY_THROWS_EXCEPTION(Error, ladder_report(dir + "/runs"));
  }
};

QTEST_APPLESS_MAIN(TestTrainLadderReport)
#include "test_train_ladder_report.moc"
