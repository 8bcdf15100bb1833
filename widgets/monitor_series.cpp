// MonitorPanel series: the charts' axes (linear or log, made once per kind), legend names and
// colours of runs and seed groups, removing a curve, and what each chart draws (for tests).
#include <QAbstractSeries>
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRegularExpression>
#include <QSet>
#include <QValueAxis>
#include <algorithm>

#include "widgets/monitor_panel.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

QString MonitorPanel::legendName(const QString& run) const {
  // A run folder's start time ("-20261202-151800", maybe "-2") makes the key unique but the
  // legend unreadable in a 330 px chart: shown without it unless another run then reads the same.
  static const QRegularExpression stamp(QStringLiteral("-\\d{8}-\\d{6}(-\\d+)?$"));
  QString shortName = run;
  shortName.remove(stamp);
  if (shortName == run || shortName.isEmpty()) return run;
  for (const QString& other : m_store.runs())
    if (other != run && QString(other).remove(stamp) == shortName) return run;
  return shortName;
}

void MonitorPanel::updateSharedLegend() {
  // Every drawn curve of every chart once, with its colour and dash, in the order the runs arrived
  // (a seed group where its first seed is): the order stays when a chart's seeds toggle changes
  // what it draws.
  struct Entry {
    int order;
    QString name, html;
  };
  std::vector<Entry> found;
  QSet<QString> named;
  for (const Chart& c : m_charts)
    for (auto it = c.curves.cbegin(); it != c.curves.cend(); ++it) {
      const Curve& cv = it.value();
      if (!cv.main || !cv.named || !cv.main->isVisible() || cv.main->count() == 0) continue;
      const bool asGroup = !cv.legendAs.isEmpty();
      const QString name = asGroup ? cv.legendAs : cv.main->name();
      // A run's curve is keyed run + '\n' + metric, a seed group's "group\n" + key + '\n' + metric;
      // a group carries no note.
      const bool isGroup = it.key().startsWith(QLatin1String("group\n"));
      const QString run = it.key().section(QLatin1Char('\n'), 0, 0);
      const QString note = asGroup || isGroup ? QString() : m_notes.value(run);
      if (named.contains(name)) continue;
      named.insert(name);
      QString first = run;
      if (isGroup) {
        const QString key = it.key().section(QLatin1Char('\n'), 1, -2);
        for (const SeedGroup& g : m_store.groups())
          if (g.key == key && !g.runs.isEmpty()) first = g.runs.first();
      } else if (const SeedGroup* g = asGroup ? m_store.groupOf(run) : nullptr) {
        first = g->runs.first();
      }
      const QPen pen = cv.main->pen();
      const QColor colour = asGroup ? cv.legendColor : pen.color();
      const QString mark =
          pen.style() == Qt::DashLine ? QStringLiteral("╌╌") : QStringLiteral("━━");
      QString entry =
          QStringLiteral("<span style=\"color:%1\">%2</span>&nbsp;%3")
              .arg(colour.name(), mark,
                   // An entry never breaks inside itself: no-break spaces and hyphens (U+2011),
                   // so a wrapped legend reads "ladder-random · 5 seeds" whole on one line.
                   name.toHtmlEscaped()
                       .replace(QLatin1Char(' '), QStringLiteral("&nbsp;"))
                       .replace(QLatin1Char('-'), QChar(0x2011)));
      if (!note.isEmpty())
        entry += QStringLiteral("&nbsp;<span style=\"color:#5b6b7d\">(%1)</span>")
                     .arg(note.toHtmlEscaped());
      found.push_back({int(m_store.runs().indexOf(first)), name, entry});
    }
  std::stable_sort(found.begin(), found.end(),
                   [](const Entry& x, const Entry& y) { return x.order < y.order; });
  QStringList entries, names;
  for (const Entry& e : found) names << e.name, entries << e.html;
  m_legendNames = names;
  const QStringList all = m_store.runs();
  const int runs = int(all.size());
  if (!entries.isEmpty())
    m_legend->setText(entries.join(QStringLiteral(" &nbsp; ")));
  else if (runs > 0 &&
           std::all_of(all.begin(), all.end(), [this](const QString& r) { return !runVisible(r); }))
    m_legend->setText(runs == 1 ? tr("The run is hidden: show it under Runs ▾.")
                                : tr("All %1 runs are hidden: show them under Runs ▾.").arg(runs));
  else
    m_legend->setText(
        tr("No runs yet: launch one under Runs, or open a run folder (File ▸ Open)."));
}

QColor MonitorPanel::seedShade(const SeedGroup& group, const QString& run) const {
  // The group's hue and saturation, lightness spread from darker to lighter over its seeds.
  const QColor base = groupColor(group);
  const int n = int(group.runs.size()), k = std::max(0, int(group.runs.indexOf(run)));
  const int light = n <= 1 ? base.lightness() : 70 + (k * (170 - 70)) / (n - 1);
  return QColor::fromHsl(base.hslHue(), base.hslSaturation(), light);
}

void MonitorPanel::setRunNote(const QString& run, const QString& note) {
  if (m_notes.value(run) == note) return;
  if (note.isEmpty())
    m_notes.remove(run);
  else
    m_notes[run] = note;
  updateSharedLegend();
}

QColor MonitorPanel::runColor(const QString& run) const {
  return seriesColor(std::max(0, int(m_store.runs().indexOf(run))));
}

QColor MonitorPanel::groupColor(const SeedGroup& group) const {
  int i = 0;
  for (const SeedGroup& g : m_store.groups()) {
    if (g.key == group.key) break;
    ++i;
  }
  return seriesColor(i);
}

void MonitorPanel::ensureAxes(Chart& c, bool logX, bool logY) {
  QFont f = font();
  f.setPointSizeF(8);
  f.setBold(false);
  auto make = [&](bool log, bool horizontal) -> QAbstractAxis* {
    QAbstractAxis* a;
    if (log) {
      auto* l = new QLogValueAxis;
      l->setBase(10);
      l->setLabelFormat(QStringLiteral("%.3g"));
      if (!horizontal) l->setMinorTickCount(8);
      a = l;
    } else {
      auto* v = new QValueAxis;
      v->setTickCount(5);  // ticks and labels are set with each range (applyNiceTicks)
      a = v;
    }
    a->setTitleFont(f);
    a->setLabelsFont(f);
    // Qt Charts elides tick labels to "…" after a relayout (a margin or size change) however much
    // room they have; ticks are already spaced to fit (ticksThatFit).
    a->setTruncateLabels(false);
    if (!horizontal) a->setTitleText(c.yTitle);
    watchAxis(c, a);
    return a;
  };
  auto swap = [&](QAbstractAxis*& slot, bool log, bool horizontal) {
    const bool isLog = slot && slot->type() == QAbstractAxis::AxisTypeLogValue;
    if (slot && isLog == log) return;
    QAbstractAxis* a = make(log, horizontal);
    c.chart->addAxis(a, horizontal ? Qt::AlignBottom : Qt::AlignLeft);
    const QList<QAbstractSeries*> series = c.chart->series();
    for (QAbstractSeries* s : series) {
      if (slot) s->detachAxis(slot);
      s->attachAxis(a);
    }
    if (slot) {
      c.chart->removeAxis(slot);
      delete slot;
    }
    slot = a;
  };
  swap(c.ax, logX, true);
  swap(c.ay, logY, false);
}

void MonitorPanel::showChartLegend(Chart& c, bool on) {
  c.chart->legend()->setVisible(on);
  if (!on) return;
  // Showing a legend shows every marker again: the drawn curves the shared legend names keep
  // theirs, the raw twins, bands and dashed second metrics have none.
  for (const Curve& cv : c.curves) {
    for (QAbstractSeries* s :
         {static_cast<QAbstractSeries*>(cv.raw), static_cast<QAbstractSeries*>(cv.band)})
      if (s)
        for (QLegendMarker* m : c.chart->legend()->markers(s)) m->setVisible(false);
    for (QLegendMarker* m : c.chart->legend()->markers(cv.main))
      m->setVisible(cv.named && cv.main->isVisible() && cv.main->count() > 0);
  }
}

void MonitorPanel::removeCurve(Chart& c, Curve& cv) {
  for (QAbstractSeries* s :
       {static_cast<QAbstractSeries*>(cv.raw), static_cast<QAbstractSeries*>(cv.main),
        static_cast<QAbstractSeries*>(cv.band)}) {
    if (!s) continue;
    c.chart->removeSeries(s);
    delete s;  // a band takes its edge series with it (they are its children)
  }
  cv = Curve{};
}

int MonitorPanel::seriesCount(const QString& metric) const {
  for (const Chart& c : m_charts) {
    if (!c.metrics.contains(metric)) continue;
    int n = 0;
    for (QAbstractSeries* s : c.chart->series()) n += s->isVisible() ? 1 : 0;
    return n;
  }
  return 0;
}

int MonitorPanel::drawnPointCount(const QString& metric) const {
  int n = 0;
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric))
      for (QAbstractSeries* s : c.chart->series())
        if (auto* l = qobject_cast<QLineSeries*>(s); l && l->isVisible()) n += int(l->count());
  return n;
}

QChart* MonitorPanel::chartFor(const QString& metric) const {
  for (const Chart& c : m_charts)
    if (c.metrics.contains(metric)) return c.chart;
  return nullptr;
}

}  // namespace gllm::gui
