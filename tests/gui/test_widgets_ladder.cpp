// The Ladder panel: a folder of ladder runs becomes one row per arm with its certificate and paired
// ΔBPB, a point with its interval per arm in the chart, and Spearman's ρ — computed off the GUI
// thread; a folder without a uniform arm gets the engine's message instead of numbers.
#include <QChart>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "widgets/ladder_panel.h"

using namespace gllm;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Three arms, two seeds: educated (certificate 2) improves by 0.02, pos (1) by 0.01.
std::string make_runs(const std::string& dir) {
  nlohmann::json arms = nlohmann::json::array();
  const std::vector<std::pair<std::string, double>> cert{
      {"uniform", 0.0}, {"pos", 1.0}, {"educated", 2.0}};
  int rank = 3;
  for (const auto& [name, c] : cert)
    arms.push_back({{"name", name},
                    {"available", true},
                    {"program", "test"},
                    {"grades", {0.0, 0.0}},
                    {"level_grades", {0.0, 0.0}},
                    {"certificate", c},
                    {"sign", 0},
                    {"lambda_q", 1.0},
                    {"gain", 1.0},
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
      write(run + "/metrics.jsonl",
            nlohmann::json{{"step", 1}, {"tokens", 1000}, {"val_bpb", 2.5}}.dump() + "\n");
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
    QCOMPARE(panel.table()->item(0, 1)->text(), QString("educated"));
    QCOMPARE(panel.table()->item(0, 6)->text(), QString("-0.0195"));  // mean of −0.02 and −0.019
    QVERIFY(panel.statusText().contains("ρ(certificate, −ΔBPB) = 1"));
    // one point and one interval per arm, and the zero line
    QCOMPARE(panel.chart()->series().size(), 3 * 2 + 1);
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
