// ComparePanel: run folders grouped by preset (arm) and matched by seed against a baseline arm —
// the paired Δ table with 95 % t-intervals of seed 001 Table 3 — and token-efficiency ratios.
#pragma once
#include <QFutureWatcher>
#include <QMap>
#include <QSet>
#include <QStringList>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/train/run_store.h"

class QComboBox;
class QTableWidget;
class QTableWidgetItem;
class QLabel;
class QLineEdit;

namespace gllm::gui {

// Two or more run folders of one arm and seed (`gllm train` run twice): one of them is compared,
// the others are listed so the user can move them away.
struct SeedConflict {
  QString arm;
  int seed = 0;
  QString kept;        // the folder compared: the newest completed one (else the newest)
  QStringList others;  // the folders left out
};
// Keeps one run per (arm, seed); the rest are reported in `conflicts`.
std::vector<RunInfo> oneRunPerArmAndSeed(const std::vector<RunInfo>& runs,
                                         std::vector<SeedConflict>* conflicts);

// Runs of one name whose effective configs differ (engine/config/run_identity.h) become arms of
// their own, "NAME#HASH6": a changed config never hides among its preset's seeds.
void splitArmsByConfig(std::vector<RunInfo>& runs);
// Per arm, its settings that differ from its preset (the part of its name before '+' or '#'), one
// per line; "" when it matches its preset or the preset is unknown. Reads the presets: worker only.
QMap<QString, QString> armDiffs(const std::vector<RunInfo>& runs);

// Everything one listing and comparison produces (computed on a worker thread).
struct CompareResult {
  int generation = 0;
  QString folder;
  std::vector<RunInfo> runs;  // one per arm and seed
  std::vector<SeedConflict> conflicts;
  QStringList skipped;  // folders that could not be read
  QStringList arms;
  QMap<QString, QString> armDiffs;  // arm → its settings that differ from its preset
  QString baseline;
  nlohmann::json comparison, efficiency;
  QString error;  // listing or comparison failed (shown in the status line)
};

class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePanel(QWidget* parent = nullptr);
  // Lists every run folder under `parent` on a worker thread and compares them; the GUI thread
  // never waits (the tables fill in when the result arrives). Keeps the baseline if possible.
  void setRunsFolder(const QString& parent);
  QString runsFolder() const { return m_folder; }
  void setBaseline(const QString& arm);
  // Shows or hides an arm in the comparison (its check box in the Δ table); a hidden arm stays
  // listed, unchecked. The baseline is always compared.
  void setArmShown(const QString& arm, bool on);
  bool armShown(const QString& arm) const { return !m_hidden.contains(arm); }
  void setMetric(const QString& metric);  // "heldout_bpb" | "val_bpb"
  void setTargetBpb(double target);       // token efficiency target
  QStringList arms() const { return m_result.arms; }
  // An arm's config diff against its preset, shown on demand (the arm cell's tooltip).
  QString armDiff(const QString& arm) const { return m_result.armDiffs.value(arm); }
  QTableWidget* deltaTable() const { return m_delta; }
  QTableWidget* efficiencyTable() const { return m_eff; }
  const nlohmann::json& comparison() const { return m_result.comparison; }
  const std::vector<SeedConflict>& conflicts() const { return m_result.conflicts; }
  QString statusText() const;
  QString conflictText() const;
  // True until the result of the latest request is shown.
  bool busy() const;
  // Blocks with an event loop until the latest request has its result (tests, screenshots).
  bool waitForResult(int ms = 10000);

 Q_SIGNALS:
  void resultReady();

 private:
  // Starts a worker for the current inputs; `relist` reads the folders again, else the runs of
  // the last result are compared anew (baseline, metric or target changed).
  void schedule(bool relist);
  void startCompute();
  void applyResult(const CompareResult& r);
  QTableWidgetItem* armCell(const QString& arm, const QString& baseline) const;

  QString m_folder;
  QSet<QString> m_hidden;  // arms left out of the comparison
  int m_generation = 0;
  bool m_dirty = false, m_relist = false;
  QFutureWatcher<CompareResult>* m_watcher = nullptr;
  CompareResult m_result;
  QLineEdit* m_folderEdit = nullptr;
  QComboBox* m_baseline = nullptr;
  QComboBox* m_metric = nullptr;
  QLineEdit* m_target = nullptr;
  QTableWidget* m_delta = nullptr;
  QTableWidget* m_eff = nullptr;
  QLabel* m_conflicts = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
