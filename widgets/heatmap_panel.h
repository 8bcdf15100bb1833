// HeatmapPanel: the grades q and the query scale exp(q_τ) as layer × plane heatmaps, per head or
// averaged over heads, from a live run or any checkpoint, and the A − B difference of two sources.
#pragma once
#include <QMap>
#include <QWidget>
#include <vector>

#include "widgets/grade_grid.h"

class QComboBox;
class QLabel;

namespace gllm::gui {

class CheckpointTimeline;

class HeatmapPanel : public QWidget {
  Q_OBJECT
 public:
  enum Quantity { Grades = 0, QueryScale = 1 };
  explicit HeatmapPanel(QWidget* parent = nullptr);

  // Adds or replaces a named source (a checkpoint, or "live: RUN"); either grid may be empty.
  // `levelGrades` (the MLGE grade of each coordinate, may be empty) is summarised in the status.
  void setSource(const QString& name, const GradeGrid& grades, const GradeGrid& queryScale,
                 const std::vector<double>& levelGrades = {});
  void removeSource(const QString& name);
  // Renames a source (a live run's, once it ends, to its last checkpoint's name), keeping the A
  // and B choices on it; replaces a source already called `to`.
  void renameSource(const QString& from, const QString& to);
  QStringList sourceNames() const { return m_sources.keys(); }

  // View selection as a user makes it; head −1 = average over heads; b empty = no difference.
  void setQuantity(Quantity q);
  Quantity quantity() const;
  void setSourceA(const QString& name);
  void setSourceB(const QString& name);
  void setHead(int head);

  HeatmapWidget* heatmap() const { return m_heatmap; }
  QString sourceA() const;
  // The step slider over the checkpoints of source A's run.
  CheckpointTimeline* timeline() const { return m_timeline; }
  QString statusText() const;

 Q_SIGNALS:
  void openCheckpointRequested();

 private:
  void refresh();
  void refillCombos();
  const GradeGrid* grid(const QString& source) const;

  struct Source {
    GradeGrid grades, queryScale;
    std::vector<double> levelGrades;
  };
  QMap<QString, Source> m_sources;
  QComboBox* m_quantity = nullptr;
  QComboBox* m_a = nullptr;
  QComboBox* m_b = nullptr;
  QComboBox* m_head = nullptr;
  QLabel* m_status = nullptr;
  HeatmapWidget* m_heatmap = nullptr;
  CheckpointTimeline* m_timeline = nullptr;
  bool m_updating = false;
};

}  // namespace gllm::gui
