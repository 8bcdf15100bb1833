// The Cluster panel against the real one-node SLURM of this test's CTest fixture: Submit sends the
// Runs panel's settings × seeds as one array, the table follows each task to completed (the same
// states `gllm runs --json` reads, and the Runs table lists them too), the Monitor draws the runs
// from their folders; the Runs panel submits and cancels; sbatch's refusal leaves nothing queued.
#include <QDir>
#include <QPushButton>
#include <QTableWidget>
#include <QtTest>
#include <filesystem>
#include <set>

#include "engine/cluster/scheduler_record.h"
#include "engine/io/atomic_file.h"
#include "engine/io/paths.h"
#include "tests/support/test_configs.h"
#include "tests/support/test_support.h"
#include "widgets/cluster_panel.h"
#include "widgets/launcher_panel.h"
#include "widgets/main_window.h"
#include "widgets/monitor_panel.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

using namespace gllm;
using namespace gllm::gui;

class TestWidgetsCluster : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::vector<std::string> env_;

  std::string path(const std::string& n) const { return tmp_.path().toStdString() + "/" + n; }
  std::string writePreset(const std::string& name, int steps) {
    RunConfig c = test::tiny_text_run(steps);
    c.name = name;
    c.train.checkpoint_every = 0;
    const std::string p = path(name + ".json");
    write_file_atomic(p, c.to_json().dump(2));
    return p;
  }
  // The runs under `dir` as `gllm runs --json` lists them: folder → scheduler state.
  std::map<QString, QString> cliStates(const std::string& dir) {
    auto r = test::run_cli({"runs", dir, "--json"}, env_, 120000);
    if (r.exit_code != 0) qFatal("gllm runs failed: %s", (r.out + r.err).c_str());
    std::map<QString, QString> out;
    const auto listing = nlohmann::json::parse(r.out);
    for (const auto& run : listing["runs"])
      if (run["scheduler"].is_object())
        out[QString::fromStdString(run["dir"].get<std::string>())] =
            QString::fromStdString(run["scheduler"]["state"].get<std::string>());
    return out;
  }
  static QStringList folders(ClusterPanel* p) {
    QStringList out;
    for (int i = 0; i < p->table()->rowCount(); ++i)
      out << p->table()->item(i, 0)->data(Qt::UserRole).toString();
    return out;
  }
  // The Runs table's Status cell of a cluster run ("" when it is not listed there).
  static QString runsTableState(LauncherPanel* l, const QString& dir) {
    for (int i = 0; i < l->table()->rowCount(); ++i)
      if (l->table()->item(i, 0) && l->table()->item(i, 0)->data(Qt::UserRole + 2) == dir)
        return l->table()->item(i, 2)->text();
    return {};
  }
  static bool idle(ClusterPanel* p, int ms = 120000) {
    return runEventsUntil([p] { return !p->busy(); }, ms);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    const char* conf = std::getenv("SLURM_CONF");
    QVERIFY2(conf && file_exists(conf),
             "SLURM_CONF names no slurm.conf: this test runs under CTest, whose fixture starts "
             "the local cluster with scripts/slurm-local.sh start");
    qputenv("GLLM_WORKBENCH_NO_SETTINGS", "1");
    qputenv("GLLM_WORKBENCH_QUEUE", tmp_.filePath("queue.json").toUtf8());
    qputenv("GLLM_RUNS", tmp_.filePath("runs").toUtf8());
    qputenv("GLLM_DATA", tmp_.filePath("data").toUtf8());
    qputenv("GLLM_CONFIG", tmp_.filePath("config").toUtf8());
    qputenv("GLLM_CLUSTER_POLL_S", "1");
    qputenv("GLLM_TEST_STEP_DELAY_MS", "100");  // the tasks inherit it: watchable mid-way
    env_ = {"GLLM_DATA=" + path("data"), "GLLM_CONFIG=" + path("config"),
            "GLLM_RUNS=" + path("runs"), "GLLM_TEST_STEP_DELAY_MS=100"};
    for (const auto& [name, partition] : {std::pair{"local", "debug"}, {"nowhere", "nosuch"}}) {
      auto r = test::run_cli({"cluster", "set", name, "--partition", partition, "--time-limit",
                              "00:20:00", "--cpus-per-task", "1", "--mem-per-task", "1G",
                              "--max-parallel", "2", "--gllm", test::cli_path()},
                             env_);
      QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    }
  }

  // Submit two seeds from the panel: a dry run shows the script and makes nothing; the real one
  // lists both tasks at once, follows them to completed as `gllm runs` does, and the Monitor
  // draws them from their folders with the scheduler's word beside them.
  void submitWatchAndDraw() {
    MainWindow w;
    auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
    auto* cluster = qobject_cast<ClusterPanel*>(w.panel("cluster"));
    auto* monitor = qobject_cast<MonitorPanel*>(w.panel("monitor"));
    QVERIFY(launcher && cluster && monitor);
    QVERIFY(runEventsUntil([cluster] { return cluster->pollCount() >= 1; }, 60000));
    QVERIFY2(cluster->setProfile("local"), "the panel lists the profiles of the config folder");
    QVERIFY(launcher->choosePreset(QString::fromStdString(writePreset("gui-tiny", 12))).isEmpty());
    launcher->setSeedsText("41, 42");

    QVERIFY(cluster->submit(true).isEmpty());
    QVERIFY(idle(cluster));
    QVERIFY2(cluster->lastScript().contains("#SBATCH --array=0-1%2"),
             qPrintable(cluster->lastScript() + cluster->statusText()));
    QVERIFY(!QDir(tmp_.filePath("runs")).exists() ||
            QDir(tmp_.filePath("runs")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty());

    QVERIFY(cluster->submit(false).isEmpty());
    QVERIFY(idle(cluster));
    QVERIFY2(cluster->statusText().startsWith("Submitted job"), qPrintable(cluster->statusText()));
    QVERIFY(runEventsUntil([cluster] { return folders(cluster).size() == 2; }, 60000));
    std::map<QString, std::set<QString>> seen;
    const bool done = runEventsUntil(
        [&] {
          bool all = true;
          for (const QString& d : folders(cluster)) {
            seen[d].insert(cluster->stateOf(d));
            all = all && cluster->stateOf(d) == "completed";
          }
          return all;
        },
        600000);
    QString trace;
    for (const auto& [d, states] : seen)
      trace += QDir(d).dirName() + ": " + QStringList(states.begin(), states.end()).join(",") + " ";
    QVERIFY2(done, qPrintable(trace));
    qInfo("states seen by the panel: %s", qPrintable(trace));
    const std::string sweep =
        std::filesystem::path(folders(cluster).first().toStdString()).parent_path().string();
    const auto cli = cliStates(sweep);
    QVERIFY2(cli.size() == 2,
             qPrintable(QString::fromStdString(
                 sweep + ": " + test::run_cli({"runs", sweep, "--json"}, env_).out)));
    for (const auto& [d, state] : cli) {
      QCOMPARE(cluster->stateOf(d), state);
      QCOMPARE(runsTableState(launcher, d), "cluster: " + state);  // the Runs table lists it too
    }
    // The Monitor: each run's 12 steps from its metrics.jsonl, and the scheduler's word.
    QVERIFY(runEventsUntil(
        [&] {
          for (const QString& d : folders(cluster)) {
            const QString key = QDir(d).dirName();
            if (monitor->points(key, "loss").size() != 12) return false;
            if (!monitor->runNote(key).startsWith("cluster: completed")) return false;
          }
          return true;
        },
        60000));
  }

  // From the Runs panel: Run on "cluster: local", Launch (now "Submit to cluster") submits, the
  // run shows in the Runs table with the scheduler's state, and Cancel there cancels its task.
  // Then a profile whose partition does not exist: sbatch's own words, shown red, and no folder
  // left behind as if queued.
  void runsPanelSubmitCancelAndRefusal() {
    MainWindow w;
    auto* launcher = qobject_cast<LauncherPanel*>(w.panel("queue"));
    auto* cluster = qobject_cast<ClusterPanel*>(w.panel("cluster"));
    QVERIFY(runEventsUntil([cluster] { return cluster->pollCount() >= 1; }, 60000));
    QVERIFY2(launcher->setRunTarget("local"), "Run on offers the config folder's profiles");
    QPushButton* launch = nullptr;
    for (auto* b : launcher->findChildren<QPushButton*>())
      if (b->text() == "Submit to cluster") launch = b;
    QVERIFY2(launch, "Launch reads Submit to cluster when Run on names a profile");
    QVERIFY(
        launcher->choosePreset(QString::fromStdString(writePreset("gui-long", 100000))).isEmpty());
    launcher->setSeedsText("7");
    const QStringList before = folders(cluster);
    const int queued = launcher->queue()->entries().size();
    launch->click();
    QVERIFY(idle(cluster));
    QCOMPARE(launcher->queue()->entries().size(), queued);  // nothing in the local queue
    QVERIFY2(launcher->statusText().startsWith("Submitted job"),
             qPrintable(launcher->statusText()));
    QString run;
    QVERIFY(runEventsUntil(
        [&] {
          for (const QString& d : folders(cluster))
            if (!before.contains(d)) run = d;
          return !run.isEmpty() && runsTableState(launcher, run) == "cluster: running";
        },
        120000));
    QVERIFY(launcher->selectClusterRun(run));
    QPushButton* cancel = nullptr;
    for (auto* b : launcher->findChildren<QPushButton*>())
      if (b->text() == "Cancel") cancel = b;
    QVERIFY(cancel && cancel->isEnabled());
    cancel->click();
    QVERIFY(idle(cluster));
    QVERIFY2(launcher->statusText().startsWith("Cancelled task"),
             qPrintable(launcher->statusText()));
    QVERIFY(runEventsUntil([&] { return runsTableState(launcher, run) == "cluster: cancelled"; },
                           120000));
    QCOMPARE(cluster->stateOf(run), QString("cancelled"));
    QVERIFY(launcher->selectClusterRun(run));
    QVERIFY(!cancel->isEnabled());  // an ended task has nothing to cancel

    QVERIFY(cluster->setProfile("nowhere"));
    const QStringList listed = folders(cluster);
    QVERIFY(cluster->submit(false).isEmpty());
    QVERIFY(idle(cluster));
    QVERIFY2(cluster->statusText().contains("partition", Qt::CaseInsensitive),
             qPrintable(cluster->statusText()));
    QVERIFY(idle(cluster));
    cluster->pollNow();
    QVERIFY(idle(cluster));
    for (const QString& d : folders(cluster))
      if (!listed.contains(d)) QCOMPARE(cluster->stateOf(d), QString("never_submitted"));
    // Nothing on disk says "submitting" or "submitted" that sbatch never took.
    int records = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path("runs")))
      if (e.path().filename() == "scheduler.json") {
        ++records;
        const auto rec = read_scheduler_record(e.path().parent_path().string());
        QVERIFY2(rec.submission == "submitted" || rec.submission == "never_submitted",
                 e.path().c_str());
        if (rec.submission == "submitted") QVERIFY(!rec.job_id.empty());
      }
    QVERIFY(records >= int(listed.size()));
  }
};

QTEST_MAIN(TestWidgetsCluster)
#include "test_widgets_cluster.moc"
