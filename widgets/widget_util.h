// Small helpers shared by the workbench panels: string conversion between Qt and the engine,
// number formatting, and running a callable that may throw gllm::Error with the message captured.
#pragma once
#include <QColor>
#include <QString>
#include <QStringList>
#include <cmath>
#include <string>
#include <vector>

namespace gllm::gui {

inline QString qs(const std::string& s) { return QString::fromStdString(s); }
inline std::string ss(const QString& s) { return s.toStdString(); }

// Formats a number with `digits` significant digits, switching to exponent form for
// very small or large magnitudes; NaN and infinities print as "—" / "∞".
QString formatNumber(double v, int digits = 4);

// Parses "1, 2.5, 3" into numbers; returns false and an explanation when an entry is not a number.
bool parseNumberList(const QString& text, std::vector<double>* out, QString* why);

// The viridis colour map at t in [0, 1] and a blue–white–red diverging map at t in [−1, 1].
QColor viridis(double t);
QColor diverging(double t);

// A colour for the i-th series of a chart (distinct, print-friendly).
QColor seriesColor(int i);

}  // namespace gllm::gui
