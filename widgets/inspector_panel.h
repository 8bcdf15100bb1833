// InspectorPanel: opens a run folder or a safetensors checkpoint and shows the audit of seed 001
// §4.2 — stable rank and mean-row energy per matrix (table + bar chart), the Table-5a band profile.
#pragma once
#include <QWidget>

#include "engine/audit/checkpoint_audit.h"

class QTableWidget;
class QLabel;
class QChart;
class QComboBox;

namespace gllm::gui {

class InspectorPanel : public QWidget {
  Q_OBJECT
 public:
  explicit InspectorPanel(QWidget* parent = nullptr);
  // A run folder (newest valid checkpoint), a .safetensors or its .json sidecar. "" or the error.
  QString open(const QString& path);
  QString exportCsv(const QString& path) const;  // name,rows,cols,frobenius_sq,spectral_sq,stable_rank,mean_row_share
  const audit::CheckpointAudit& audit() const { return m_audit; }
  QTableWidget* matrixTable() const { return m_matrices; }
  QTableWidget* bandTable() const { return m_bands; }
  QString statusText() const;

 signals:
  void opened(const QString& weightsPath);

 private:
  void showAudit();
  void refreshChart();
  audit::CheckpointAudit m_audit;
  bool m_has = false;
  QTableWidget* m_matrices = nullptr;
  QTableWidget* m_bands = nullptr;
  QComboBox* m_chartMetric = nullptr;
  QChart* m_chart = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
