// MainWindow's runs and checkpoints: a run folder opened into the Monitor (whole history, live
// points keyed by folder), a runs folder listed, checkpoints read off the GUI thread into Heatmaps.
#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "engine/io/paths.h"
#include "engine/io/safetensors.h"
#include "engine/train/run_store.h"
#include "widgets/checkpoint_timeline.h"
#include "widgets/compare_panel.h"
#include "widgets/cone_panel.h"
#include "widgets/heatmap_panel.h"
#include "widgets/inspector_panel.h"
#include "widgets/ladder_panel.h"
#include "widgets/main_window.h"
#include "widgets/metric_store.h"
#include "widgets/monitor_panel.h"
#include "widgets/run_queue.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
// A checkpoint's grades as the heatmaps show them: q and exp(q_τ) per (layer, head, plane), and
// the MLGE level grades.
struct CheckpointGrades {
  QString weightsPath;
  GradeGrid grades, queryScale;
  std::vector<double> levelGrades;
  QString error;
};

// Worker thread: resolves a run folder to its newest valid checkpoint (hash checks) and reads the
// file (all of it: safetensors are read whole).
CheckpointGrades readCheckpointGrades(const std::string& runOrCheckpoint) {
  CheckpointGrades out;
  try {
    const std::string path = resolve_weights_path(runOrCheckpoint);
    out.weightsPath = qs(path);
    const SafetensorsFile f = SafetensorsFile::open(path);
    auto read = [&](const char* name, bool exponentiate) {
      if (!f.has(name)) return GradeGrid{};
      return gridFromTensor(f.info(name).shape, f.to_float(name), exponentiate);
    };
    out.grades = read("attn_grades", false);
    out.queryScale = read("q_tau", true);
    if (f.has("mlge.level_grades"))
      for (float v : f.to_float("mlge.level_grades")) out.levelGrades.push_back(v);
  } catch (const std::exception& e) {
    out.error = qs(e.what());
  }
  return out;
}
}  // namespace

QString MainWindow::openRun(const QString& dir) {
  if (!QFileInfo(dir).isDir()) {
    const QString why =
        tr("%1 is not a folder; give a run folder (it holds metrics.jsonl)").arg(dir);
    statusBar()->showMessage(why);
    return why;
  }
  const QDir d(dir);
  if (!d.exists(QStringLiteral("metrics.jsonl")) && !d.exists(QStringLiteral("config.json"))) {
    // A folder of runs (a sweep, committed results): every run in the Monitor, the folder in
    // Compare and Ladder.
    const QString abs = d.absolutePath();
    loadRunsFolder(abs, true);
    m_compare->setRunsFolder(abs);
    m_ladder->setRunsFolder(abs);
    statusBar()->showMessage(tr("Opening the runs in %1 …").arg(abs));
    return {};
  }
  loadRunMetrics(dir);
  loadCheckpointGrades(dir);  // every run opened is a heatmap source (A − B compares two)
  m_heatmaps->timeline()->setRun(dir);
  m_followedRun.clear();  // a run opened by hand is what the heatmaps show now
  m_inspector->open(dir);
  statusBar()->showMessage(tr("Opening %1 …").arg(dir));
  return {};
}

QString MainWindow::liveKey(const QString& queueId) const {
  const QueueEntry* e = m_queue->entry(queueId);
  if (!e) return queueId;
  return e->runDir.isEmpty() ? QStringLiteral("%1-s%2").arg(e->name).arg(e->seed)
                             : runKey(e->runDir);
}

void MainWindow::addLivePoint(const QString& key, const QString& metric, const MetricPoint& p) {
  m_monitor->addPoint(key, metric, p);
  if (m_metricReads.value(key) > 0) m_liveDuringRead[key].push_back({metric, p});
}

void MainWindow::loadRunMetrics(const QString& dir, bool announce) {
  const QString key = runKey(dir);
  ++m_pendingReads;
  ++m_metricReads[key];
  auto* watcher = new QFutureWatcher<LoadedRun>(this);
  connect(watcher, &QFutureWatcher<LoadedRun>::finished, this, [this, watcher, key, dir, announce] {
    --m_pendingReads;
    const bool last = --m_metricReads[key] == 0;
    const LoadedRun data = watcher->result();
    watcher->deleteLater();
    const auto live = last ? m_liveDuringRead.take(key) : m_liveDuringRead.value(key);
    if (last) m_metricReads.remove(key);
    if (!data.error.isEmpty()) {
      statusBar()->showMessage(data.error);
      Q_EMIT runOpenFailed(dir, data.error);
      return;
    }
    m_monitor->setRun(key, data);
    m_monitor->setRunFolder(key, QDir(dir).absolutePath());
    // Steps that arrived live while the file was read and are past what it held.
    for (const auto& [metric, p] : live) {
      const auto& have = data.metrics.value(metric);
      if (have.empty() || p.step > have.back().step) m_monitor->addPoint(key, metric, p);
    }
    if (!data.warning.isEmpty())
      statusBar()->showMessage(data.warning);
    else if (announce)
      statusBar()->showMessage(tr("Opened %1").arg(dir));
  });
  watcher->setFuture(
      QtConcurrent::run(&MetricStore::readMetricsFile, dir + QStringLiteral("/metrics.jsonl")));
}

void MainWindow::loadRunsFolder(const QString& runs, bool opened) {
  ++m_pendingReads;
  auto* watcher = new QFutureWatcher<QStringList>(this);
  connect(watcher, &QFutureWatcher<QStringList>::finished, this, [this, watcher, runs, opened] {
    --m_pendingReads;
    const QStringList dirs = watcher->result();
    watcher->deleteLater();
    if (opened) {
      const QString message =
          dirs.isEmpty()
              ? tr("%1 holds no run folder (none of it or its subfolders has metrics.jsonl); "
                   "open a run folder or a folder of runs")
                    .arg(runs)
              : tr("Opened %1 run(s) from %2 (Monitor, Compare, Ladder)")
                    .arg(dirs.size())
                    .arg(runs);
      statusBar()->showMessage(message);
      if (dirs.isEmpty()) Q_EMIT runOpenFailed(runs, message);
    }
    for (const QString& d : dirs)
      if (!m_monitor->runs().contains(runKey(d))) loadRunMetrics(d, false);
  });
  watcher->setFuture(QtConcurrent::run([runs] {
    // Run folders (they hold metrics.jsonl) one or two levels down (runs/NAME, runs/SWEEP/NAME),
    // oldest first so the legend reads in the order they ran.
    QStringList out;
    QFileInfoList found;
    const QDir top(runs);
    for (const QFileInfo& d : top.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
      if (QFileInfo::exists(QDir(d.filePath()).filePath(QStringLiteral("metrics.jsonl")))) {
        found << d;
        continue;
      }
      for (const QFileInfo& s : QDir(d.filePath()).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
        if (QFileInfo::exists(QDir(s.filePath()).filePath(QStringLiteral("metrics.jsonl"))))
          found << s;
    }
    std::sort(found.begin(), found.end(), [](const QFileInfo& a, const QFileInfo& b) {
      return a.birthTime().isValid() && b.birthTime().isValid()
                 ? a.birthTime() < b.birthTime()
                 : a.lastModified() < b.lastModified();
    });
    for (const QFileInfo& f : found) out << f.absoluteFilePath();
    return out;
  }));
}

QString MainWindow::loadProfiles(const QString& path) {
  return m_cone->loadProfilesFile(path);
}

QString MainWindow::defaultProfilesFile() {
  // The newest `gllm profiles` output in the data cache, else the Brown profiles the ladder presets
  // ship with (presets/ladders), so a fresh clone starts on estimated profiles too.
  const QString cached = newestFile(qs(data_cache_dir()), {QStringLiteral("profiles*.json")});
  if (!cached.isEmpty()) return cached;
  // The route-1 profiles the ladder presets start W_e in (a fresh clone's files share one mtime).
  const QDir ladders(QDir(qs(presets_dir())).filePath(QStringLiteral("ladders")));
  const QString route1 = ladders.filePath(QStringLiteral("brown-tokens-d128-profiles.json"));
  if (QFileInfo::exists(route1)) return route1;
  return newestFile(ladders.path(), {QStringLiteral("*profiles*.json")});
}

bool MainWindow::sameFolder(const QString& a, const QString& b) {
  return !a.isEmpty() && !b.isEmpty() && QDir(a).canonicalPath() == QDir(b).canonicalPath();
}

void MainWindow::followRunCheckpoints(const QString& runDir, const QString& liveSource,
                                      qint64 step) {
  // The heatmaps follow the run started last, until a run is opened by hand.
  if (liveSource.isEmpty()) m_followedRun = runDir;
  if (!sameFolder(m_followedRun, runDir)) return;
  if (!liveSource.isEmpty()) m_heatmaps->setSourceA(liveSource);
  m_heatmaps->timeline()->setRun(runDir, step);
}

QString MainWindow::checkpointSourceName(const QString& weightsPath) {
  const QFileInfo f(weightsPath);
  // runs/NAME/checkpoints/step_000300.safetensors → NAME/step_000300
  if (f.dir().dirName() == QLatin1String("checkpoints"))
    return f.dir().absolutePath().section('/', -2, -2) + '/' + f.completeBaseName();
  return f.fileName();
}

void MainWindow::loadCheckpointGrades(const QString& runOrCheckpoint, bool show) {
  const int generation = ++m_gradeRequests[runOrCheckpoint];
  ++m_pendingReads;
  auto* watcher = new QFutureWatcher<CheckpointGrades>(this);
  connect(watcher, &QFutureWatcher<CheckpointGrades>::finished, this,
          [this, watcher, runOrCheckpoint, generation, show] {
            --m_pendingReads;
            const CheckpointGrades g = watcher->result();
            watcher->deleteLater();
            if (generation != m_gradeRequests.value(runOrCheckpoint))
              return;  // a newer read replaced it
            if (!g.error.isEmpty()) {
              statusBar()->showMessage(g.error);
              return;
            }
            m_heatmaps->setSource(checkpointSourceName(g.weightsPath), g.grades, g.queryScale,
                                  g.levelGrades);
            if (show) m_heatmaps->setSourceA(checkpointSourceName(g.weightsPath));
          });
  watcher->setFuture(QtConcurrent::run(readCheckpointGrades, ss(runOrCheckpoint)));
}

}  // namespace gllm::gui
