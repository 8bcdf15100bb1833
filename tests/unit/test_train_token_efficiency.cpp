// Token efficiency (seed 000 §8.2.2) and the ladder's power plan, against closed forms: curves
// linear in log tokens give exact crossings and ratios; a pilot whose curves fall 0.2 BPB per
// e-fold and whose paired deltas have a known SD gives the plan's slope, SD and seed counts.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/io/error.h"
#include "engine/stats/paired.h"
#include "engine/stats/power.h"
#include "engine/train/ladder_plan.h"
#include "engine/train/token_efficiency.h"

using namespace gllm;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::vector<nlohmann::json> records(const std::vector<std::pair<double, double>>& pts) {
  std::vector<nlohmann::json> out;
  for (const auto& [t, v] : pts) out.push_back({{"tokens", t}, {"val_bpb", v}});
  return out;
}

// A ladder of three arms with Λ(q) on held-out profiles: educated 0.8, pos 1.1, uniform 1.
std::string make_ladder(const std::string& dir) {
  nlohmann::json arms = nlohmann::json::array();
  const std::vector<std::tuple<std::string, double, double>> spec{
      {"educated", 2.0, 0.8}, {"uniform", 0.0, 1.0}, {"pos", -1.0, 1.1}};
  int rank = 1;
  for (const auto& [name, cert, lam] : spec)
    arms.push_back({{"name", name},
                    {"available", true},
                    {"program", "test"},
                    {"grades", {0.0, 0.0}},
                    {"level_grades", {0.0, 0.0}},
                    {"certificate", cert},
                    {"sign", 0},
                    {"lambda_q", lam},
                    {"gain", 1 / lam},
                    {"in_cone", false},
                    {"certificate_heldout", cert},
                    {"lambda_q_heldout", lam},
                    {"gain_heldout", 1 / lam},
                    {"verdict_heldout", "outside"},
                    {"rank", rank++}});
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
                      {"order", {"educated", "uniform", "pos"}}};
  write(dir + "/ladder.json", j.dump());
  return dir + "/ladder.json";
}

// A completed run whose val BPB is 3 − 0.2·ln(t/1000) + offset at t = 1000 … 16000.
void make_run(const std::string& dir, const std::string& name, const std::string& arm, int seed,
              double offset, double heldout) {
  std::filesystem::create_directories(dir);
  write(dir + "/config.json",
        nlohmann::json{{"name", name},
                       {"grading", {{"level_grades_source", "ladder"}, {"ladder_arm", arm}}},
                       {"train", {{"seed", seed}}}}
            .dump());
  std::string m;
  for (int k = 1; k <= 16; ++k) {
    const double t = 1000.0 * k;
    m +=
        nlohmann::json{
            {"step", k}, {"tokens", 1000 * k}, {"val_bpb", 3 - 0.2 * std::log(t / 1000) + offset}}
            .dump() +
        "\n";
  }
  write(dir + "/metrics.jsonl", m);
  write(dir + "/summary.json",
        nlohmann::json{{"status", "completed"}, {"heldout_bpb", heldout}, {"seed", seed}}.dump());
}

}  // namespace

class TestTrainTokenEfficiency : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void curveReadsAndSorts() {
    auto recs = records({{4000, 2.5}, {1000, 3.0}, {2000, 2.8}});
    recs.push_back({{"tokens", 3000}});                     // no value: skipped
    recs.push_back({{"tokens", 0}, {"val_bpb", 9.0}});      // no tokens: skipped
    recs.push_back({{"tokens", 2000}, {"val_bpb", 2.75}});  // a re-evaluation: the last stands
    const auto c = metric_curve(recs, "val_bpb");
    QCOMPARE(c.size(), size_t(3));
    QCOMPARE(c[0].tokens, 1000.0);
    QCOMPARE(c[1].value, 2.75);
    QCOMPARE(c[2].tokens, 4000.0);
  }

  void logTokenInterpolation() {
    const auto c = metric_curve(records({{1000, 3.0}, {4000, 2.0}}), "val_bpb");
    // Value at the geometric midpoint 2000 is the arithmetic midpoint of the values.
    QVERIFY(std::abs(value_at_tokens(c, 2000) - 2.5) < 1e-12);
    QVERIFY(std::isnan(value_at_tokens(c, 500)));
    QVERIFY(std::isnan(value_at_tokens(c, 5000)));
    // Target 2.25 is three quarters of the way down: t = 1000·4^{3/4}.
    const auto x = tokens_to_target(c, 2.25);
    QVERIFY(x.reached && !x.at_first_point);
    QVERIFY(std::abs(x.tokens - 1000 * std::pow(4.0, 0.75)) < 1e-9);
    QVERIFY(!tokens_to_target(c, 1.5).reached);
    QVERIFY(std::isnan(tokens_to_target(c, 1.5).tokens));
    const auto first = tokens_to_target(c, 3.5);
    QVERIFY(first.reached && first.at_first_point);
    QCOMPARE(first.tokens, 1000.0);
  }

  void forksCountFromTheirFork() {
    // A fork at 2000 tokens: its curve in tokens since the fork, points up to the fork dropped.
    const auto c =
        metric_curve(records({{1000, 3.0}, {2000, 2.9}, {3000, 2.8}, {6000, 2.5}}), "val_bpb");
    const auto f = since_start(c, 2000);
    QCOMPARE(f.size(), size_t(2));
    QCOMPARE(f[0].tokens, 1000.0);
    QCOMPARE(f[1].tokens, 4000.0);
    QCOMPARE(since_start(c, 0).size(), c.size());
    QVERIFY(std::abs(tokens_to_target(f, 2.65).tokens - 2000) < 1e-9);  // halfway in log tokens
  }

  void ratioIntervalOnTheLogScale() {
    // Ratios 1.1, 1.2, 1.3 (and a seed where the arm never reached the target).
    const std::vector<double> u{1100, 1200, 1300, 1000}, a{1000, 1000, 1000, NAN};
    const auto r = token_ratio(u, a);
    QCOMPARE(r.n, 3);
    QVERIFY(std::isnan(r.per_seed[3]));
    const std::vector<double> logs{std::log(1.1), std::log(1.2), std::log(1.3)};
    const auto s = stats::summarize(logs);
    QVERIFY(std::abs(r.ratio - std::exp(s.mean)) < 1e-12);
    QVERIFY(std::abs(r.low - std::exp(s.ci_low)) < 1e-12);
    QVERIFY(std::abs(r.high - std::exp(s.ci_high)) < 1e-12);
    QVERIFY(r.low < 1.2 && 1.2 < r.high);
    QCOMPARE(token_ratio({1000}, {NAN}).n, 0);
  }

  void planFromAPilot() {
    // Uniform × 4 seeds; pos paired by seed with deltas 0.010, 0.012, 0.008, 0.010 (SD
    // 0.0016330); curves fall 0.2 BPB per e-fold everywhere.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    const std::vector<int> seeds{41, 42, 43, 44};
    const std::vector<double> base{2.00, 2.01, 1.99, 2.02}, d{0.010, 0.012, 0.008, 0.010};
    for (size_t i = 0; i < seeds.size(); ++i) {
      const std::string s = std::to_string(seeds[i]);
      make_run(dir + "/pilot/uniform-s" + s, "ladder-uniform", "uniform", seeds[i], 0.01 * i,
               base[i]);
      make_run(dir + "/pilot/pos-s" + s, "ladder-pos", "pos", seeds[i], 0.01 * i, base[i] + d[i]);
    }
    PlanOptions o;
    o.max_seeds = 20;
    const auto p = ladder_plan(ladder, dir + "/pilot", o);
    QCOMPARE(p.pilot_seeds, 4);
    QCOMPARE(p.prediction, std::string("held-out"));
    QVERIFY(std::abs(p.slope - 0.2) < 1e-9);
    QVERIFY(std::abs(p.budget_tokens - 16000) < 1e-9);
    const double sd = stats::summarize(d).sd;
    QVERIFY(std::abs(p.paired_sd - sd) < 1e-12);
    QCOMPARE(p.seeds_at, 4);
    QCOMPARE(p.arms.size(), size_t(3));
    for (const auto& a : p.arms) {
      const double lam = a.arm == "educated" ? 0.8 : a.arm == "pos" ? 1.1 : 1.0;
      QVERIFY(std::abs(a.predicted_gain - 1 / lam) < 1e-12);
      QVERIFY(std::abs(a.predicted_delta_bpb - 0.2 * std::log(lam)) < 1e-12);
      if (a.arm == "uniform") continue;
      QCOMPARE(a.seeds_needed, stats::seeds_for_power(0.2 * std::log(lam), sd, 0.8, 0.05, 20));
      QVERIFY(a.in_reach);
      QVERIFY(std::abs(a.power_at_seeds - stats::paired_t_power(0.2 * std::log(lam), sd, 4, 0.05)) <
              1e-12);
    }
    // A noisier pilot puts pos (ΔBPB 0.019) out of reach of 5 seeds and keeps educated in it.
    o.max_seeds = 5;
    for (size_t i = 0; i < seeds.size(); ++i)
      make_run(dir + "/pilot/pos-s" + std::to_string(seeds[i]), "ladder-pos", "pos", seeds[i],
               0.01 * i, base[i] + (i % 2 ? 0.03 : -0.01));
    const auto q = ladder_plan(ladder, dir + "/pilot", o);
    bool pos_out = false, edu_in = false;
    for (const auto& a : q.arms) {
      pos_out = pos_out || (a.arm == "pos" && !a.in_reach && a.seeds_needed == 0);
      edu_in = edu_in || (a.arm == "educated" && a.in_reach);
    }
    QVERIFY(pos_out);
    QVERIFY(edu_in);
    QVERIFY(q.recommendation.find("out of reach") != std::string::npos);
  }

  void planNeedsAUniformPilot() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const std::string ladder = make_ladder(dir);
    make_run(dir + "/pilot/uniform-s41", "ladder-uniform", "uniform", 41, 0, 2.0);
    QVERIFY_THROWS_EXCEPTION(Error, ladder_plan(ladder, dir + "/pilot"));  // one seed
    try {
      ladder_plan(ladder, dir + "/pilot");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("at least 2 seeds") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainTokenEfficiency)
#include "test_train_token_efficiency.moc"
