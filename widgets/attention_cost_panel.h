// AttentionCostPanel: the graded-vs-standard attention overhead grid (width × sequence length)
// from `gllm bench attention` results in bench/results/*.json, as a heatmap; an empty state says
// which command produces the results when there are none.
#pragma once
#include <QWidget>

class QComboBox;
class QLabel;

namespace gllm::gui {

class HeatmapWidget;

class AttentionCostPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionCostPanel(QWidget* parent = nullptr);
  // Lists `dir`'s attention results (attention-<stamp>.json), newest first, and shows the newest;
  // returns how many it found.
  int setResultsDir(const QString& dir);
  QString currentFile() const;
  QString loadResult(const QString& path);  // "" or the error
  HeatmapWidget* heatmap() const { return m_heatmap; }
  QString statusText() const;
  bool isEmptyState() const;

 private:
  QComboBox* m_files = nullptr;
  QLabel* m_empty = nullptr;
  QLabel* m_status = nullptr;
  HeatmapWidget* m_heatmap = nullptr;
};

}  // namespace gllm::gui
