// InspectorPanel: opens a run folder or a safetensors checkpoint and shows the audit of seed 001
// §4.2 — stable rank and mean-row energy per matrix (table + bar chart), the Table-5a band profile.
#pragma once
#include <QFutureWatcher>
#include <QWidget>

#include "engine/audit/checkpoint_audit.h"

class QTableWidget;
class QLabel;
class QChart;
class QComboBox;
class QChartView;
class QScrollArea;

namespace gllm::gui {

class CheckpointTimeline;

// One audit, computed on a worker thread (resolving a run folder verifies its checkpoints' hashes;
// the audit runs an SVD per matrix).
struct InspectorResult {
  int generation = 0;
  QString weightsPath;
  audit::CheckpointAudit audit;
  QString error;
};

class InspectorPanel : public QWidget {
  Q_OBJECT
 public:
  explicit InspectorPanel(QWidget* parent = nullptr);
  // A run folder (newest valid checkpoint), a .safetensors or its .json sidecar. Reads and audits
  // on a worker thread; the tables fill in (or the error shows) when it is done, and opened() or
  // failed() is emitted. The GUI thread never waits.
  void open(const QString& path);
  bool busy() const;  // true until the latest open() has its result shown
  // Blocks with an event loop until the latest open() has its result (tests, screenshots).
  bool waitForResult(int ms = 10000);
  // name,rows,cols,frobenius_sq,spectral_sq,stable_rank,mean_row_share
  QString exportCsv(const QString& path) const;
  const audit::CheckpointAudit& audit() const { return m_audit; }
  QTableWidget* matrixTable() const { return m_matrices; }
  QTableWidget* bandTable() const { return m_bands; }
  QChartView* chartView() const { return m_chartView; }
  CheckpointTimeline* timeline() const { return m_timeline; }
  QString statusText() const;

 Q_SIGNALS:
  void opened(const QString& weightsPath);
  void failed(const QString& error);

 private:
  void openAudit(const QString& path);  // open() without moving the timeline
  void startAudit();
  void applyResult(const InspectorResult& r);
  void showAudit();
  void refreshChart();
  void fitNumberColumns();
  audit::CheckpointAudit m_audit;
  bool m_has = false;
  QString m_path;
  int m_generation = 0;
  bool m_dirty = false;
  QFutureWatcher<InspectorResult>* m_watcher = nullptr;
  InspectorResult m_last;
  QTableWidget* m_matrices = nullptr;
  QTableWidget* m_bands = nullptr;
  QComboBox* m_chartMetric = nullptr;
  QChart* m_chart = nullptr;
  QChartView* m_chartView = nullptr;
  QScrollArea* m_chartScroll = nullptr;
  QLabel* m_status = nullptr;
  CheckpointTimeline* m_timeline = nullptr;
};

}  // namespace gllm::gui
