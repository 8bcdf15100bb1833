// Small helpers shared by the workbench panels: string conversion between Qt and the engine,
// number formatting, and running a callable that may throw gllm::Error with the message captured.
#pragma once
#include <QColor>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

class QValueAxis;
class QFileInfo;

class QFontMetrics;

class QTableWidget;

namespace gllm::gui {

inline QString qs(const std::string& s) {
  return QString::fromStdString(s);
}
inline std::string ss(const QString& s) {
  return s.toStdString();
}

// Formats a number with `digits` significant digits, switching to exponent form for
// very small or large magnitudes; NaN and infinities print as "—" / "∞".
QString formatNumber(double v, int digits = 4);

// Parses "1, 2.5, 3" into numbers; returns false and an explanation when an entry is not a number.
bool parseNumberList(const QString& text, std::vector<double>* out, QString* why);

// The viridis colour map at t in [0, 1] and a blue–white–red diverging map at t in [−1, 1].
QColor viridis(double t);
QColor diverging(double t);

// Runs the calling thread's event loop in short slices until `done()` or `ms` milliseconds have
// passed; returns done(). For tests and offscreen screenshots, which wait on a panel's worker.
bool runEventsUntil(const std::function<bool()>& done, int ms);

// A colour for the i-th series of a chart (distinct, print-friendly).
QColor seriesColor(int i);

// True when [lo, hi] is no wider than rounding of its values (a billionth of their magnitude):
// the EMA of a constant metric, for instance.
bool spansOnlyRounding(double lo, double hi);

// The tick spacing of a value axis over [lo, hi]: the smallest 1, 2 or 5 × 10^k that puts at most
// maxTicks of its multiples inside the range, so ticks read 100, 200, 300 rather than 1, 101, 201.
// 0 when the range is empty, not finite, or spans only rounding.
double niceTickInterval(double lo, double hi, int maxTicks = 6);

// A printf label format that prints ticks `interval` apart exactly and no longer than needed:
// whole numbers, as many decimals as the interval has, or %.3g beyond 1e6 and below 1e-4.
QString tickLabelFormat(double interval, double maxAbs);

// Sets the axis to [lo, hi] with at most maxTicks ticks at multiples of niceTickInterval (fixed
// ticks when the range is empty) and the matching label format.
void applyNiceTicks(QValueAxis* axis, double lo, double hi, int maxTicks = 6);

// How many ticks an axis `pixels` long has room for, one per `spacing` pixels, between 2 and 6
// (6 before the first layout, when the length is still unknown).
int ticksThatFit(double pixels, double spacing);

// Gives column 0 of `table` (the names that tell rows apart; Interactive) the width its widest
// name needs (with a check box's room when its items are checkable), at most `maxShare` of the
// viewport: names read whole and the numbers beside them keep their width (the table scrolls
// sideways when both do not fit).
void fitFirstColumnToNames(QTableWidget* table, double maxShare = 0.45);
// The px column 0 of `table` needs: its widest item (and a check box when checkable), its bold
// header plus `headerPad` (room for a sort arrow where the table sorts).
int firstColumnNeed(const QTableWidget* table, int headerPad);

// When a file was made: the YYYYMMDD-HHMMSS stamp in its name (how `gllm bench` names its
// results), else its modification time (a git checkout gives every file the same one).
QDateTime fileStamp(const QFileInfo& file);
// Files of `dir` matching the name patterns, newest first by fileStamp (ties: name, descending).
QStringList filesNewestFirst(const QString& dir, const QStringList& patterns);
// The first of filesNewestFirst, "" when none matches.
QString newestFile(const QString& dir, const QStringList& patterns);

// A hover readout "step … · tokens … — VALUE NAME · VALUE NAME" fitted into `width` pixels:
// every value whole, the names eliding in the middle to share the room left.
QString fitReadout(const QString& full, const QFontMetrics& fm, int width);

// Brings `field` into view inside every scroll area around it and gives it the focus (the field a
// refusal points at).
void revealField(QWidget* field);

// A folder of the project (e.g. "bench/results"): under the current folder when it is a project
// folder that has it, else in the source tree the workbench was built from.
QString projectFolder(const QString& relative);

}  // namespace gllm::gui
