// ComparePanel: run folders grouped by preset (arm) and matched by seed against a baseline arm —
// the paired Δ table with 95 % t-intervals of seed 001 Table 3 — and token-efficiency ratios.
#pragma once
#include <QWidget>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/train/run_store.h"

class QComboBox;
class QTableWidget;
class QLabel;
class QLineEdit;

namespace gllm::gui {

class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePanel(QWidget* parent = nullptr);
  // Reads every run folder under `parent`; "" or the error. Keeps the baseline choice if possible.
  QString setRunsFolder(const QString& parent);
  void setBaseline(const QString& arm);
  void setMetric(const QString& metric);   // "heldout_bpb" | "val_bpb"
  void setTargetBpb(double target);        // token efficiency target
  QStringList arms() const;
  QTableWidget* deltaTable() const { return m_delta; }
  QTableWidget* efficiencyTable() const { return m_eff; }
  const nlohmann::json& comparison() const { return m_comparison; }
  QString statusText() const;

 private:
  void recompute();
  QString m_folder;
  std::vector<RunInfo> m_runs;
  nlohmann::json m_comparison, m_efficiency;
  QLineEdit* m_folderEdit = nullptr;
  QComboBox* m_baseline = nullptr;
  QComboBox* m_metric = nullptr;
  QLineEdit* m_target = nullptr;
  QTableWidget* m_delta = nullptr;
  QTableWidget* m_eff = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
