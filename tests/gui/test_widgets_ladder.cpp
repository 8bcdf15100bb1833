// The Ladder panel: a folder of ladder runs becomes one row per arm with its certificate, the plan
// (seeds needed) and the measured token ratio, the predicted and measured ratio per arm and each
// arm's curve in the charts, and Spearman's ρ — computed off the GUI thread; a folder without a
// uniform arm gets the engine's message instead of numbers.
#include <QChart>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "widgets/ladder_panel.h"

using namespace gllm;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Three arms, two seeds: educated (certificate 2, Λ 0.8) improves by 0.02 and reaches any BPB with
// 1/1.25 of uniform's tokens, pos (1, Λ 0.9) by 0.01 with 0.9 of them.
std::string make_runs(const std::string& dir) {
  nlohmann::json arms = nlohmann::json::array();
  const std::vector<std::pair<std::string, double>> cert{
      {"uniform", 0.0}, {"pos", 1.0}, {"educated", 2.0}};
  const std::map<std::string, double> lambda{{"uniform", 1.0}, {"pos", 0.9}, {"educated", 0.8}};
  int rank = 3;
  for (const auto& [name, c] : cert)
    arms.push_back({{"name", name},
                    {"available", true},
                    {"program", "test"},
                    {"grades", {0.0, 0.0}},
                    {"level_grades", {0.0, 0.0}},
                    {"certificate", c},
                    {"sign", 0},
                    {"lambda_q", lambda.at(name)},
                    {"gain", 1 / lambda.at(name)},
                    {"in_cone", false},
                    {"rank", rank--}});
  nlohmann::json ladder = {{"format", "gllm-ladder/1"},
                           {"lambda", 1.1},
                           {"clip", 2.0},
                           {"q_max", 7.27},
                           {"d", 2},
                           {"levels", 2},
                           {"level_dims", {1, 1}},
                           {"bc", 0.9},
                           {"lambda_star", 0.81},
                           {"seed", 0},
                           {"arms", arms},
                           {"order", {"educated", "pos", "uniform"}}};
  write(dir + "/ladder.json", ladder.dump());
  const std::map<std::string, double> delta{{"uniform", 0.0}, {"pos", -0.01}, {"educated", -0.02}};
  for (const auto& [name, c] : cert)
    for (int seed : {41, 42}) {
      const std::string run = dir + "/runs/ladder-" + name + "-s" + std::to_string(seed);
      std::filesystem::create_directories(run);
      write(run + "/config.json", nlohmann::json{{"name", "ladder-" + name},
                                                 {"grading",
                                                  {{"level_grades_source", "ladder"},
                                                   {"ladder_file", dir + "/ladder.json"},
                                                   {"ladder_arm", name}}},
                                                 {"train", {{"seed", seed}}}}
                                      .dump());
      const double held =
          2.0 + 0.01 * (seed - 41) + delta.at(name) + (name == "uniform" ? 0 : 0.001 * (seed - 41));
      // val BPB 3 − 0.2·ln(g·t/1000): linear in log tokens, so every ratio is exactly g.
      const double g = 1 / lambda.at(name);
      std::string m;
      for (int k = 1; k <= 8; ++k)
        m += nlohmann::json{{"step", k},
                            {"tokens", 1000 * k},
                            {"val_bpb", 3 - 0.2 * std::log(g * 1000 * k / 1000)}}
                 .dump() +
             "\n";
      write(run + "/metrics.jsonl", m);
      write(run + "/summary.json",
            nlohmann::json{
                {"status", "completed"}, {"val_bpb", 2.5}, {"heldout_bpb", held}, {"seed", seed}}
                .dump());
    }
  return dir + "/runs";
}

}  // namespace

class TestWidgetsLadder : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void reportsTheArmsAgainstTheirCertificates() {
    QTemporaryDir tmp;
    const std::string runs = make_runs(tmp.path().toStdString());
    gui::LadderPanel panel;
    panel.resize(900, 700);
    panel.show();
    panel.setRunsFolder(QString::fromStdString(runs));
    QVERIFY(panel.waitForResult(20000));
    QVERIFY2(panel.result().error.isEmpty(), qPrintable(panel.result().error));
    QCOMPARE(panel.table()->rowCount(), 3);
    const auto text = [&](int row, int col) { return panel.table()->item(row, col)->text(); };
    QCOMPARE(text(0, 1), QString("educated"));
    QCOMPARE(text(0, 3), QString("×1.250"));  // predicted 1/Λ
    QCOMPARE(text(0, 7), QString("×1.250"));  // measured: the curves are 1.25× apart in tokens
    QCOMPARE(text(1, 7), QString("×1.111"));
    QCOMPARE(text(2, 7), QString("×1.000"));
    QVERIFY(text(0, 10).startsWith("-0.0195"));  // mean of −0.02 and −0.019
    // The plan, with this folder as its pilot: slope 0.2 per e-fold, paired SD 0.000707; the
    // educated effect 0.2·ln 0.8 = −0.0446 needs the minimum of 2 seeds, power 1 at 2.
    QCOMPARE(text(0, 4), QString("-0.0446"));
    QCOMPARE(text(0, 5), QString("2"));
    QCOMPARE(text(2, 5), QString("—"));  // uniform is the baseline
    QVERIFY(panel.statusText().contains("token ratio = 1"));
    QVERIFY(panel.statusText().contains("Plan"));
    // ratio chart: per arm a predicted (hollow) point, and a measured point with its interval
    // whisker where n ≥ 2 — all three here — and the line at 1
    QCOMPARE(panel.chart()->series().size(), 3 * 3 + 1);
    // curves: one line and one crossing per arm, and the target line
    QCOMPARE(panel.curvesChart()->series().size(), 3 * 2 + 1);
  }

  void probesOnAWorkerAndReportsAgain() {
    // The probe button runs `gllm probe` on every run of the folder off the GUI thread; runs
    // without a checkpoint (these) are named with the engine's reason, then the report refreshes.
    QTemporaryDir tmp;
    const std::string runs = make_runs(tmp.path().toStdString());
    gui::LadderPanel panel;
    panel.setRunsFolder(QString::fromStdString(runs));
    QVERIFY(panel.waitForResult(20000));
    QSignalSpy done(&panel, &gui::LadderPanel::probeFinished);
    panel.probeCheckpoints();
    QVERIFY(panel.probing());
    QVERIFY(done.wait(60000));
    const QString message = done.front().front().toString();
    QVERIFY2(message.contains("no committed checkpoint"), qPrintable(message));
    QVERIFY(panel.waitForResult(20000));
    QCOMPARE(panel.table()->rowCount(), 3);
  }

  void explainsAFolderItCannotReport() {
    QTemporaryDir tmp;
    gui::LadderPanel panel;
    panel.setRunsFolder(tmp.path());
    QVERIFY(panel.waitForResult(20000));
    QVERIFY(!panel.result().error.isEmpty());
    QVERIFY(panel.statusText().contains("ladder-tiny.json"));
    QCOMPARE(panel.table()->rowCount(), 0);
  }
};

QTEST_MAIN(TestWidgetsLadder)
#include "test_widgets_ladder.moc"
