// HeatmapWidget: a generic rows × columns colour grid with axis labels, a colour legend and the
// value under the mouse. Sequential data use viridis; signed data (A − B) a diverging scale at 0.
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

namespace gllm::gui {

struct HeatmapData {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;  // row-major, rows * cols; NaN = no value (drawn grey)
  QStringList rowLabels;       // may be empty: rows are numbered
  QStringList colLabels;       // may be empty: columns are numbered
  QString title;
  QString rowTitle;    // e.g. "layer"
  QString colTitle;    // e.g. "plane"
  QString valueTitle;  // e.g. "exp(q_τ)"
  double at(int r, int c) const { return values[static_cast<size_t>(r) * cols + c]; }
};

class HeatmapWidget : public QWidget {
  Q_OBJECT
 public:
  enum class Scale { Sequential, Diverging };
  explicit HeatmapWidget(QWidget* parent = nullptr);

  void setData(const HeatmapData& data, Scale scale = Scale::Sequential);
  const HeatmapData& data() const { return m_data; }
  Scale scale() const { return m_scale; }
  // Colour range in use: [min, max] for sequential data, [−m, m] with m = max |v| for diverging.
  double rangeLow() const { return m_low; }
  double rangeHigh() const { return m_high; }
  // Draw the numbers inside the cells when they are large enough (default on).
  void setShowValues(bool on);
  // Shown instead of the grid when there is no data.
  void setEmptyText(const QString& text);

  // Geometry, for hover and tests: the cell under a widget point (false outside the grid).
  bool cellAt(const QPoint& pos, int* row, int* col) const;
  QRect cellRect(int row, int col) const;
  QColor colorFor(double value) const;
  // The text shown for the hovered cell ("layer 2, plane 5: 1.234"); empty when none.
  QString hoverText() const { return m_hoverText; }
  QSize minimumSizeHint() const override { return QSize(320, 200); }
  QSize sizeHint() const override { return QSize(560, 360); }

 Q_SIGNALS:
  void cellHovered(int row, int col, double value);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent*) override;
  void resizeEvent(QResizeEvent*) override;

 private:
  void layoutGrid();
  QString rowLabel(int r) const;
  QString colLabel(int c) const;

  HeatmapData m_data;
  Scale m_scale = Scale::Sequential;
  double m_low = 0, m_high = 1;
  bool m_showValues = true;
  QString m_emptyText;
  QRect m_grid;    // area of the cells
  QRect m_legend;  // colour bar
  int m_hoverRow = -1, m_hoverCol = -1;
  QString m_hoverText;
};

}  // namespace gllm::gui
