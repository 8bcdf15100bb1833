// Number formatting, list parsing and colour maps used by every workbench panel.
// Colour maps are piecewise-linear fits of viridis and a blue–white–red diverging scale.
#include "widgets/widget_util.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHeaderView>
#include <QRegularExpression>
#include <QScrollArea>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QValueAxis>
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
  const QStringList parts =
      t.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts);
  for (const QString& p : parts) {
    bool ok = false;
    double v = p.toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
      if (why)
        *why = QStringLiteral("'%1' is not a number; write numbers separated by commas").arg(p);
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
  static const Stop stops[] = {{0.0, 68, 1, 84},      {0.125, 71, 44, 122},  {0.25, 59, 81, 139},
                               {0.375, 44, 113, 142}, {0.5, 33, 144, 141},   {0.625, 39, 173, 129},
                               {0.75, 92, 200, 99},   {0.875, 170, 220, 50}, {1.0, 253, 231, 37}};
  if (std::isnan(t)) return QColor(200, 200, 200);
  return lerpStops(stops, 9, t);
}

QColor diverging(double t) {
  static const Stop stops[] = {{-1.0, 33, 102, 172},
                               {-0.5, 103, 169, 207},
                               {0.0, 247, 247, 247},
                               {0.5, 239, 138, 98},
                               {1.0, 178, 24, 43}};
  if (std::isnan(t)) return QColor(200, 200, 200);
  return lerpStops(stops, 5, t);
}

QColor seriesColor(int i) {
  static const std::array<QColor, 10> palette = {
      QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),   QColor(214, 39, 40),
      QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127),
      QColor(188, 189, 34),  QColor(23, 190, 207)};
  return palette[static_cast<size_t>(i) % palette.size()];
}

bool spansOnlyRounding(double lo, double hi) {
  return hi - lo <= 1e-9 * std::max(std::fabs(lo), std::fabs(hi));
}

double niceTickInterval(double lo, double hi, int maxTicks) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo) || maxTicks < 2) return 0;
  // A range within rounding of its values (an EMA of a constant) has no ticks that adding the
  // interval would move past: Qt's label loop would never end.
  if (spansOnlyRounding(lo, hi)) return 0;
  // Start a decade below span / maxTicks and widen through 1, 2, 5 × 10^k until the ticks fit.
  double decade = std::pow(10.0, std::floor(std::log10((hi - lo) / maxTicks)) - 1);
  for (int step = 0; step < 64; ++step) {
    for (double mantissa : {1.0, 2.0, 5.0}) {
      const double interval = mantissa * decade;
      const double ticks = std::floor(hi / interval) - std::ceil(lo / interval) + 1;
      if (ticks <= maxTicks) return interval;
    }
    decade *= 10;
  }
  return 0;
}

QString tickLabelFormat(double interval, double maxAbs) {
  if (!(interval > 0) || maxAbs >= 1e6 || interval < 1e-4) return QStringLiteral("%.3g");
  if (interval >= 1) return QStringLiteral("%.0f");
  // The decimals of 1, 2 or 5 × 10^-k: k (0.05 → 2, 0.2 → 1); the epsilon absorbs log10's rounding.
  const int decimals = int(std::ceil(-std::log10(interval) - 1e-9));
  return QStringLiteral("%.%1f").arg(decimals);
}

int firstColumnNeed(const QTableWidget* table, int headerPad) {
  QFont bold = table->horizontalHeader()->font();
  bold.setBold(true);
  int need = 0;
  if (const QTableWidgetItem* h = table->horizontalHeaderItem(0))
    need = QFontMetrics(bold).horizontalAdvance(h->text()) + headerPad;
  const QFontMetrics fm(table->font());
  const int check = table->style()->pixelMetric(QStyle::PM_IndicatorWidth) + 8;
  for (int r = 0; r < table->rowCount(); ++r)
    if (const QTableWidgetItem* it = table->item(r, 0))
      need = std::max(need, fm.horizontalAdvance(it->text()) + 16 +
                                ((it->flags() & Qt::ItemIsUserCheckable) ? check : 0));
  return need;
}

void fitFirstColumnToNames(QTableWidget* table, double maxShare) {
  const int need = firstColumnNeed(table, 24);  // and a sort arrow
  const int most = std::max(80, int(table->viewport()->width() * maxShare));
  table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
  table->setColumnWidth(0, std::min(need, most));
}

int ticksThatFit(double pixels, double spacing) {
  if (!(pixels > 0) || !(spacing > 0)) return 6;
  return std::clamp(int(pixels / spacing), 2, 6);
}

void applyNiceTicks(QValueAxis* axis, double lo, double hi, int maxTicks) {
  const double interval = niceTickInterval(lo, hi, maxTicks);
  // Every setter lays the axis out again: widen the spacing before the range grows and narrow it
  // after, so that no layout in between has a tick every 0.2 over a range of thousands.
  if (interval > axis->tickInterval()) axis->setTickInterval(interval);
  axis->setRange(lo, hi);
  if (interval > 0) {
    axis->setTickAnchor(0);
    axis->setTickInterval(interval);
    axis->setTickType(QValueAxis::TicksDynamic);
  } else {
    axis->setTickType(QValueAxis::TicksFixed);
  }
  const QString fmt = tickLabelFormat(interval, std::max(std::fabs(lo), std::fabs(hi)));
  if (axis->labelFormat() != fmt) axis->setLabelFormat(fmt);
}

QDateTime fileStamp(const QFileInfo& file) {
  static const QRegularExpression stamp(QStringLiteral("(\\d{8})-(\\d{6})"));
  const auto m = stamp.match(file.fileName());
  if (m.hasMatch()) {
    const QDateTime t =
        QDateTime::fromString(m.captured(1) + m.captured(2), QStringLiteral("yyyyMMddHHmmss"));
    if (t.isValid()) return t;
  }
  return file.lastModified();
}

QStringList filesNewestFirst(const QString& dir, const QStringList& patterns) {
  QFileInfoList files = QDir(dir).entryInfoList(patterns, QDir::Files);
  std::stable_sort(files.begin(), files.end(), [](const QFileInfo& a, const QFileInfo& b) {
    const QDateTime ta = fileStamp(a), tb = fileStamp(b);
    return ta != tb ? ta > tb : a.fileName() > b.fileName();
  });
  QStringList out;
  for (const QFileInfo& f : files) out << f.absoluteFilePath();
  return out;
}

QString newestFile(const QString& dir, const QStringList& patterns) {
  const QStringList files = filesNewestFirst(dir, patterns);
  return files.isEmpty() ? QString() : files.first();
}

bool runEventsUntil(const std::function<bool()>& done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < ms) {
    QEventLoop loop;
    QTimer::singleShot(5, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return done();
}

QString projectFolder(const QString& relative) {
  const QDir here = QDir::current();
  if (here.exists(QStringLiteral("presets/tiny-cpu.json")) && here.exists(relative))
    return QDir::cleanPath(here.absoluteFilePath(relative));
  return QDir::cleanPath(QDir(QStringLiteral(GLLM_SOURCE_DIR)).filePath(relative));
}

void revealField(QWidget* field) {
  if (!field) return;
  for (QWidget* p = field->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(field, 20, 60);
  field->setFocus(Qt::OtherFocusReason);
}

QString fitReadout(const QString& full, const QFontMetrics& fm, int width) {
  if (fm.horizontalAdvance(full) <= width) return full;
  // "step … · tokens … — V1 NAME1 · V2 NAME2": every value stays whole; the names share the
  // room left and are elided in the middle, keeping both their start and their distinct end.
  const QString dash = QStringLiteral(" — "), sep = QStringLiteral(" · ");
  const int cut = full.indexOf(dash);
  if (cut < 0) return full;
  const QString head = full.left(cut + dash.size());
  const QStringList entries = full.mid(cut + dash.size()).split(sep);
  int room =
      width - fm.horizontalAdvance(head) - int(entries.size() - 1) * fm.horizontalAdvance(sep);
  QStringList values, names;
  for (const QString& e : entries) {
    const int space = e.indexOf(QLatin1Char(' '));
    values << (space < 0 ? e : e.left(space));
    names << (space < 0 ? QString() : e.mid(space + 1));
    room -= fm.horizontalAdvance(values.last() + QLatin1Char(' '));
  }
  const int each = std::max(fm.horizontalAdvance(QStringLiteral("ab…yz")),
                            room / std::max<int>(1, int(entries.size())));
  QStringList out;
  for (int i = 0; i < entries.size(); ++i)
    out << values[i] + QLatin1Char(' ') + fm.elidedText(names[i], Qt::ElideMiddle, each);
  return head + out.join(sep);
}

}  // namespace gllm::gui
