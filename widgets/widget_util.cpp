// Number formatting, list parsing and colour maps used by every workbench panel.
// Colour maps are piecewise-linear fits of viridis and a blue–white–red diverging scale.
#include "widgets/widget_util.h"

#include <QRegularExpression>
#include <algorithm>
#include <array>

namespace gllm::gui {

QString formatNumber(double v, int digits) {
  if (std::isnan(v)) return QStringLiteral("—");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
  double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6)) return QString::number(v, 'e', std::max(1, digits - 1));
  return QString::number(v, 'g', digits);
}

bool parseNumberList(const QString& text, std::vector<double>* out, QString* why) {
  out->clear();
  const QString t = text.trimmed();
  if (t.isEmpty()) return true;
  const QStringList parts = t.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
  for (const QString& p : parts) {
    bool ok = false;
    double v = p.toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
      if (why) *why = QStringLiteral("'%1' is not a number; write numbers separated by commas").arg(p);
      return false;
    }
    out->push_back(v);
  }
  return true;
}

namespace {
struct Stop {
  double t;
  int r, g, b;
};
QColor lerpStops(const Stop* stops, int n, double t) {
  t = std::clamp(t, stops[0].t, stops[n - 1].t);
  for (int i = 1; i < n; ++i) {
    if (t <= stops[i].t) {
      const Stop& a = stops[i - 1];
      const Stop& b = stops[i];
      double u = (t - a.t) / (b.t - a.t);
      return QColor(int(a.r + u * (b.r - a.r) + 0.5), int(a.g + u * (b.g - a.g) + 0.5),
                    int(a.b + u * (b.b - a.b) + 0.5));
    }
  }
  return QColor(stops[n - 1].r, stops[n - 1].g, stops[n - 1].b);
}
}  // namespace

QColor viridis(double t) {
  static const Stop stops[] = {{0.0, 68, 1, 84},     {0.125, 71, 44, 122}, {0.25, 59, 81, 139},
                               {0.375, 44, 113, 142}, {0.5, 33, 144, 141},  {0.625, 39, 173, 129},
                               {0.75, 92, 200, 99},   {0.875, 170, 220, 50}, {1.0, 253, 231, 37}};
  if (std::isnan(t)) return QColor(200, 200, 200);
  return lerpStops(stops, 9, t);
}

QColor diverging(double t) {
  static const Stop stops[] = {{-1.0, 33, 102, 172}, {-0.5, 103, 169, 207}, {0.0, 247, 247, 247},
                               {0.5, 239, 138, 98},  {1.0, 178, 24, 43}};
  if (std::isnan(t)) return QColor(200, 200, 200);
  return lerpStops(stops, 5, t);
}

QColor seriesColor(int i) {
  static const std::array<QColor, 10> palette = {
      QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),  QColor(214, 39, 40),
      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
      QColor(188, 189, 34),  QColor(23, 190, 207)};
  return palette[static_cast<size_t>(i) % palette.size()];
}

}  // namespace gllm::gui
