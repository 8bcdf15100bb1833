// SIGKILL then resume through the CLI: `gllm train` killed at several points resumes with
// `gllm resume` and reaches the uninterrupted run's per-step and final losses (within 1e-6, CPU).
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>
#include <cmath>
#include <thread>

#include "engine/io/atomic_file.h"
#include "engine/train/run_store.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"

namespace {

nlohmann::json tiny_config() {
  gllm::RunConfig c = gllm::test::tiny_text_run(16);
  c.name = "resume-test";
  c.train.checkpoint_every = 2;
  c.train.keep_checkpoints = 2;
  return c.to_json();
}

std::vector<double> step_losses(const std::string& dir) {
  std::vector<double> out;
  for (const auto& r : gllm::read_metrics(dir + "/metrics.jsonl").records)
    if (r.contains("loss")) out.push_back(r["loss"].get<double>());
  return out;
}

int64_t last_step(const std::string& dir) {
  int64_t s = 0;
  try {
    for (const auto& r : gllm::read_metrics(dir + "/metrics.jsonl").records)
      s = std::max<int64_t>(s, r["step"].get<int64_t>());
  } catch (...) {
  }
  return s;
}

}  // namespace

class TestTrainResume : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string cfg_;
  std::vector<std::string> env_;
  std::string path(const std::string& n) const { return tmp_.path().toStdString() + "/" + n; }

 private Q_SLOTS:
  void initTestCase() {
    cfg_ = path("tiny.json");
    gllm::write_file_atomic(cfg_, tiny_config().dump(2));
    env_ = {"GLLM_DATA=" + path("cache")};
  }

  void sigkill_then_resume_matches() {
    auto ref =
        gllm::test::run_cli({"train", cfg_, "--out", path("ref"), "--quiet", "--json"}, env_);
    QVERIFY2(ref.exit_code == 0, (ref.out + ref.err).c_str());
    auto ref_j = nlohmann::json::parse(ref.out);
    double ref_loss = ref_j["final_loss"].get<double>();
    auto ref_losses = step_losses(path("ref"));
    QCOMPARE(ref_losses.size(), size_t(16));

    for (int kill_at : {3, 8, 13}) {
      std::string dir = path("cut" + std::to_string(kill_at));
      QProcess p;
      auto e = QProcessEnvironment::systemEnvironment();
      e.insert("GLLM_DATA", QString::fromStdString(path("cache")));
      p.setProcessEnvironment(e);
      p.start(
          QString::fromStdString(gllm::test::cli_path()),
          {"train", QString::fromStdString(cfg_), "--out", QString::fromStdString(dir), "--quiet"});
      QVERIFY(p.waitForStarted());
      while (last_step(dir) < kill_at && p.state() == QProcess::Running)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      QVERIFY2(p.state() == QProcess::Running, "the run ended before it could be killed");
      p.kill();  // SIGKILL
      p.waitForFinished();
      int64_t reached = last_step(dir);
      QVERIFY(reached >= kill_at && reached < 16);
      QCOMPARE(gllm::read_run(dir).status, std::string("interrupted"));
      auto res = gllm::test::run_cli({"resume", dir, "--quiet", "--json"}, env_);
      QVERIFY2(res.exit_code == 0, (res.out + res.err).c_str());
      auto j = nlohmann::json::parse(res.out);
      QCOMPARE(j["status"].get<std::string>(), std::string("completed"));
      double loss = j["final_loss"].get<double>();
      QVERIFY2(std::fabs(loss - ref_loss) <= 1e-6, qPrintable(QString("killed at %1: %2 vs %3")
                                                                  .arg(kill_at)
                                                                  .arg(loss, 0, 'g', 17)
                                                                  .arg(ref_loss, 0, 'g', 17)));
      QVERIFY(std::fabs(j["heldout_bpb"].get<double>() - ref_j["heldout_bpb"].get<double>()) <=
              1e-6);
      auto losses = step_losses(dir);
      QCOMPARE(losses.size(), ref_losses.size());
      for (size_t i = 0; i < losses.size(); ++i)
        QVERIFY(std::fabs(losses[i] - ref_losses[i]) <= 1e-6);
      QCOMPARE(gllm::read_run(dir).status, std::string("completed"));
    }
    // `gllm runs` lists all four with their results.
    auto runs = gllm::test::run_cli({"runs", tmp_.path().toStdString(), "--json"}, env_);
    QVERIFY2(runs.exit_code == 0, runs.err.c_str());
    auto rj = nlohmann::json::parse(runs.out);
    QCOMPARE(rj["runs"].size(), size_t(4));
    for (const auto& r : rj["runs"])
      QCOMPARE(r["status"].get<std::string>(), std::string("completed"));
  }
};

QTEST_APPLESS_MAIN(TestTrainResume)
#include "test_train_resume.moc"
