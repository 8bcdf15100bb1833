// LadderPanel: the selection ladder against its prediction (seed 000 §6.5) — each arm's
// pre-registered ⟨q, α̂−τ̂⟩ against its paired ΔBPB versus uniform with the 95 % t-interval, tokens
// to a fixed BPB, and Spearman's ρ of the two orders; the report is read off the GUI thread.
#pragma once
#include <QFutureWatcher>
#include <QWidget>

#include "engine/train/ladder_report.h"

class QChart;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace gllm::gui {

struct LadderResult {
  int generation = 0;
  QString error;  // non-empty: no report (the message says why and what to do)
  LadderReport report;
};

class LadderPanel : public QWidget {
  Q_OBJECT
 public:
  explicit LadderPanel(QWidget* parent = nullptr);

  // Reads the ladder runs under `folder` on a worker thread; the panel shows the result when it
  // arrives (the GUI thread never waits). `targetBpb` 0 = the largest final validation BPB.
  void setRunsFolder(const QString& folder, double targetBpb = 0);
  QString runsFolder() const;
  bool busy() const;
  // Blocks with an event loop until the latest request has a result (tests, screenshots).
  bool waitForResult(int ms = 10000);
  const LadderResult& result() const { return m_result; }
  QTableWidget* table() const { return m_table; }
  QString statusText() const;
  QChart* chart() const { return m_chart; }

 Q_SIGNALS:
  void resultReady();

 private:
  void apply(const LadderResult& r);
  void drawChart(const LadderReport& r);

  int m_generation = 0;
  QFutureWatcher<LadderResult>* m_watcher = nullptr;
  LadderResult m_result;
  QLineEdit* m_folder = nullptr;
  QLineEdit* m_target = nullptr;
  QTableWidget* m_table = nullptr;
  QChart* m_chart = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
