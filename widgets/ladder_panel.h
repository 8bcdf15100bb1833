// LadderPanel: the selection ladder against its prediction (seed 000 §6.5, §8.2.2) — per arm the
// pre-registered certificate, the plan (predicted token ratio and ΔBPB, seeds needed, power
// achieved) and the measured token ratios (val BPB and task error) with 95 % intervals; the
// token-to-target curves; Spearman's ρ. Reports and probes run off the GUI thread.
#pragma once
#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <memory>

#include "engine/train/ladder_plan.h"
#include "engine/train/ladder_report.h"

class QChart;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace gllm::gui {

// One arm's validation curve, the mean over its seeds at the evaluations they share.
struct ArmCurve {
  std::string arm;
  std::vector<double> tokens, value;
};

struct LadderResult {
  int generation = 0;
  QString error;  // non-empty: no report (the message says why and what to do)
  LadderReport report;
  bool hasPlan = false;  // the plan, with the runs folder as its pilot
  LadderPlan plan;
  QString planError;
  std::vector<ArmCurve> curves;  // in report order
};

class LadderPanel : public QWidget {
  Q_OBJECT
 public:
  explicit LadderPanel(QWidget* parent = nullptr);
  ~LadderPanel() override;

  // Reads the ladder runs under `folder` on a worker thread; the panel shows the result when it
  // arrives (the GUI thread never waits). `targetBpb` 0 = the uniform arm's val BPB at half its
  // budget.
  void setRunsFolder(const QString& folder, double targetBpb = 0);
  QString runsFolder() const;
  bool busy() const;
  // Probes every checkpoint of every run under the folder (gllm probe) on a worker thread, then
  // reports again. Cancelled when the panel closes.
  void probeCheckpoints();
  bool probing() const;
  // Blocks with an event loop until the latest request has a result (tests, screenshots).
  bool waitForResult(int ms = 10000);
  const LadderResult& result() const { return m_result; }
  QTableWidget* table() const { return m_table; }
  QString statusText() const;
  QChart* chart() const { return m_chart; }
  QChart* curvesChart() const { return m_curves; }

 Q_SIGNALS:
  void resultReady();
  void probeFinished(const QString& message);

 private:
  void apply(const LadderResult& r);
  void fillTable(const LadderResult& r);
  void drawRatioChart(const LadderReport& r);
  void drawCurves(const LadderResult& r);

  int m_generation = 0;
  QFutureWatcher<LadderResult>* m_watcher = nullptr;
  QFutureWatcher<QString>* m_probeWatcher = nullptr;
  bool m_probing = false;  // from probeCheckpoints() until its finished() is handled
  std::shared_ptr<std::atomic<bool>> m_cancelProbe;
  LadderResult m_result;
  QLineEdit* m_folder = nullptr;
  QLineEdit* m_target = nullptr;
  QPushButton* m_probe = nullptr;
  QTableWidget* m_table = nullptr;
  QChart* m_chart = nullptr;
  QChart* m_curves = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
