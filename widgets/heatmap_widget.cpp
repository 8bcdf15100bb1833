// HeatmapWidget painting: grid, labels (thinned when crowded), colour legend with ticks, hover
// highlight and tool tip. All geometry comes from layoutGrid() so hit tests match the drawing.
#include "widgets/heatmap_widget.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "widgets/widget_util.h"

namespace gllm::gui {

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAttribute(Qt::WA_OpaquePaintEvent, false);
}

void HeatmapWidget::setData(const HeatmapData& data, Scale scale) {
  m_data = data;
  if (static_cast<int>(m_data.values.size()) != m_data.rows * m_data.cols) {
    m_data.rows = m_data.cols = 0;
    m_data.values.clear();
  }
  m_scale = scale;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : m_data.values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (scale == Scale::Diverging) {
    double m = std::max(std::fabs(lo), std::fabs(hi));
    if (m == 0) m = 1;
    m_low = -m;
    m_high = m;
  } else {
    if (hi == lo) {
      const double pad = lo == 0 ? 1 : std::fabs(lo) * 1e-3;
      lo -= pad;
      hi += pad;
    }
    m_low = lo;
    m_high = hi;
  }
  m_hoverRow = m_hoverCol = -1;
  m_hoverText.clear();
  layoutGrid();
  update();
}

void HeatmapWidget::setShowValues(bool on) {
  m_showValues = on;
  update();
}

void HeatmapWidget::setEmptyText(const QString& text) {
  m_emptyText = text;
  update();
}

QString HeatmapWidget::rowLabel(int r) const {
  return r < m_data.rowLabels.size() ? m_data.rowLabels[r] : QString::number(r);
}
QString HeatmapWidget::colLabel(int c) const {
  return c < m_data.colLabels.size() ? m_data.colLabels[c] : QString::number(c);
}

void HeatmapWidget::layoutGrid() {
  const QFontMetrics fm(font());
  int labelW = fm.horizontalAdvance(m_data.rowTitle) + 6;
  for (int r = 0; r < m_data.rows; ++r)
    labelW = std::max(labelW, fm.horizontalAdvance(rowLabel(r)) + 10);
  const int top = (m_data.title.isEmpty() ? 6 : fm.height() + 12);
  const int bottom = 2 * fm.height() + 10;
  const int legendW = 78;
  QRect area(labelW + 6, top, width() - labelW - 6 - legendW - 10, height() - top - bottom);
  if (area.width() < 10 || area.height() < 10 || m_data.rows == 0 || m_data.cols == 0) {
    m_grid = QRect();
    m_legend = QRect();
    return;
  }
  // Square-ish cells when there is room, otherwise fill.
  int cw = area.width() / m_data.cols, ch = area.height() / m_data.rows;
  if (cw <= 0 || ch <= 0) {
    m_grid = QRect();
    return;
  }
  if (ch > 3 * cw) ch = std::max(cw, std::min(ch, 3 * cw));
  m_grid = QRect(area.left(), area.top(), cw * m_data.cols, ch * m_data.rows);
  m_legend = QRect(m_grid.right() + 16, m_grid.top(), 14, m_grid.height());
}

void HeatmapWidget::resizeEvent(QResizeEvent*) {
  layoutGrid();
}

QRect HeatmapWidget::cellRect(int row, int col) const {
  if (m_grid.isNull()) return {};
  const int cw = m_grid.width() / m_data.cols, ch = m_grid.height() / m_data.rows;
  return QRect(m_grid.left() + col * cw, m_grid.top() + row * ch, cw, ch);
}

bool HeatmapWidget::cellAt(const QPoint& pos, int* row, int* col) const {
  if (m_grid.isNull() || !m_grid.contains(pos)) return false;
  const int cw = m_grid.width() / m_data.cols, ch = m_grid.height() / m_data.rows;
  *col = std::min(m_data.cols - 1, (pos.x() - m_grid.left()) / cw);
  *row = std::min(m_data.rows - 1, (pos.y() - m_grid.top()) / ch);
  return true;
}

QColor HeatmapWidget::colorFor(double v) const {
  if (!std::isfinite(v)) return QColor(205, 209, 214);
  if (m_scale == Scale::Diverging) return diverging(v / m_high);
  return viridis((v - m_low) / (m_high - m_low));
}

void HeatmapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const QFontMetrics fm(font());
  if (m_data.rows == 0 || m_grid.isNull()) {
    p.setPen(QColor(0x5b, 0x6b, 0x7d));
    p.drawText(rect().adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap,
               m_emptyText.isEmpty() ? tr("No data") : m_emptyText);
    return;
  }
  if (!m_data.title.isEmpty()) {
    QFont f = font();
    f.setBold(true);
    p.setFont(f);
    p.setPen(QColor(0x22, 0x35, 0x4d));
    // Elided rather than cut when the widget is narrower than the title (a 700 px dock).
    const int room = width() - m_grid.left() - 4;
    p.drawText(QRect(m_grid.left(), 4, room, fm.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetrics(f).elidedText(m_data.title, Qt::ElideRight, room));
    p.setFont(font());
  }
  const int cw = m_grid.width() / m_data.cols, ch = m_grid.height() / m_data.rows;
  const bool values = m_showValues && cw >= fm.horizontalAdvance(QStringLiteral("0.000")) + 4 &&
                      ch >= fm.height() + 2;
  for (int r = 0; r < m_data.rows; ++r) {
    for (int c = 0; c < m_data.cols; ++c) {
      const QRect cell = cellRect(r, c);
      const double v = m_data.at(r, c);
      const QColor col = colorFor(v);
      p.fillRect(cell, col);
      if (values && std::isfinite(v)) {
        p.setPen(col.lightnessF() > 0.55 ? QColor(20, 20, 20) : QColor(250, 250, 250));
        p.drawText(cell, Qt::AlignCenter, formatNumber(v, 3));
      }
    }
  }
  if (cw >= 6 && ch >= 6) {
    p.setPen(QPen(QColor(255, 255, 255, 90), 1));
    for (int c = 1; c < m_data.cols; ++c)
      p.drawLine(m_grid.left() + c * cw, m_grid.top(), m_grid.left() + c * cw, m_grid.bottom());
    for (int r = 1; r < m_data.rows; ++r)
      p.drawLine(m_grid.left(), m_grid.top() + r * ch, m_grid.right(), m_grid.top() + r * ch);
  }
  p.setPen(QColor(0x9a, 0xa7, 0xb5));
  p.drawRect(m_grid.adjusted(0, 0, -1, -1));

  // Axis labels, thinned to what fits.
  p.setPen(QColor(0x33, 0x47, 0x5b));
  const int rowStep = std::max(1, (fm.height() + 2 + ch - 1) / std::max(1, ch));
  for (int r = 0; r < m_data.rows; r += rowStep) {
    const QRect cell = cellRect(r, 0);
    p.drawText(QRect(0, cell.top(), m_grid.left() - 6, ch), Qt::AlignRight | Qt::AlignVCenter,
               rowLabel(r));
  }
  int widest = 0;
  for (int c = 0; c < m_data.cols; ++c)
    widest = std::max(widest, fm.horizontalAdvance(colLabel(c)));
  const int colStep = std::max(1, (widest + 8 + cw - 1) / std::max(1, cw));
  for (int c = 0; c < m_data.cols; c += colStep) {
    const QRect cell = cellRect(0, c);
    p.drawText(QRect(cell.center().x() - 40, m_grid.bottom() + 3, 80, fm.height()),
               Qt::AlignHCenter | Qt::AlignTop, colLabel(c));
  }
  if (!m_data.colTitle.isEmpty())
    p.drawText(QRect(m_grid.left(), m_grid.bottom() + fm.height() + 5, m_grid.width(), fm.height()),
               Qt::AlignHCenter, m_data.colTitle);
  if (!m_data.rowTitle.isEmpty()) {
    p.save();
    p.translate(fm.height() * 0.2, m_grid.center().y());
    p.rotate(-90);
    p.drawText(QRect(-m_grid.height() / 2, -2, m_grid.height(), fm.height()),
               Qt::AlignHCenter | Qt::AlignTop, m_data.rowTitle);
    p.restore();
  }

  // Colour legend: a bar from low (bottom) to high (top) with five ticks.
  if (!m_legend.isNull()) {
    for (int y = 0; y < m_legend.height(); ++y) {
      const double t = 1.0 - double(y) / std::max(1, m_legend.height() - 1);
      const double v = m_low + t * (m_high - m_low);
      p.setPen(colorFor(v));
      p.drawLine(m_legend.left(), m_legend.top() + y, m_legend.right(), m_legend.top() + y);
    }
    p.setPen(QColor(0x9a, 0xa7, 0xb5));
    p.drawRect(m_legend.adjusted(0, 0, -1, -1));
    p.setPen(QColor(0x33, 0x47, 0x5b));
    for (int i = 0; i <= 4; ++i) {
      const double t = i / 4.0;
      const int y = m_legend.bottom() - int(t * (m_legend.height() - 1));
      const double v = m_low + t * (m_high - m_low);
      p.drawLine(m_legend.right(), y, m_legend.right() + 3, y);
      p.drawText(QRect(m_legend.right() + 5, y - fm.height() / 2, 70, fm.height()),
                 Qt::AlignLeft | Qt::AlignVCenter, formatNumber(v, 3));
    }
    if (!m_data.valueTitle.isEmpty())
      p.drawText(QRect(m_legend.left() - 20, m_legend.bottom() + 4, 90, fm.height()), Qt::AlignLeft,
                 m_data.valueTitle);
  }

  if (m_hoverRow >= 0) {
    p.setPen(QPen(QColor(0, 0, 0), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cellRect(m_hoverRow, m_hoverCol).adjusted(1, 1, -1, -1));
  }
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* e) {
  int r = -1, c = -1;
  if (!cellAt(e->position().toPoint(), &r, &c)) {
    if (m_hoverRow >= 0) leaveEvent(nullptr);
    return;
  }
  if (r == m_hoverRow && c == m_hoverCol) return;
  m_hoverRow = r;
  m_hoverCol = c;
  const double v = m_data.at(r, c);
  const QString rt = m_data.rowTitle.isEmpty() ? tr("row") : m_data.rowTitle;
  const QString ct = m_data.colTitle.isEmpty() ? tr("column") : m_data.colTitle;
  m_hoverText =
      QStringLiteral("%1 %2, %3 %4: %5").arg(rt, rowLabel(r), ct, colLabel(c), formatNumber(v, 5));
  if (!m_data.valueTitle.isEmpty()) m_hoverText.prepend(m_data.valueTitle + QStringLiteral(" — "));
  QToolTip::showText(e->globalPosition().toPoint(), m_hoverText, this);
  Q_EMIT cellHovered(r, c, v);
  update();
}

void HeatmapWidget::leaveEvent(QEvent*) {
  m_hoverRow = m_hoverCol = -1;
  m_hoverText.clear();
  update();
}

}  // namespace gllm::gui
