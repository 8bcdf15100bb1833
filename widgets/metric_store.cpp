// MetricStore implementation: appends, the EMA cache, decimation, seed groups and their bands
// (the t quantile from engine/stats, the same one the compare view's paired intervals use).
#include "widgets/metric_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <limits>
#include <map>

#include "engine/config/run_identity.h"
#include "engine/io/atomic_file.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
#include "engine/stats/paired.h"
#include "engine/train/run_store.h"

namespace gllm::gui {

namespace {
const std::vector<MetricPoint> kNoPoints;
}

double xOf(const MetricPoint& p, XAxis x) {
  switch (x) {
    case XAxis::Tokens:
      return p.tokens;
    case XAxis::Flops:
      return p.flops;
    case XAxis::Wall:
      return p.wall;
    default:
      return p.step;
  }
}

BandKind bandKind(int n) {
  return n <= 1 ? BandKind::None : n == 2 ? BandKind::MinMax : BandKind::TInterval95;
}

QString bandName(BandKind k) {
  switch (k) {
    case BandKind::MinMax:
      return QStringLiteral("min-max");
    case BandKind::TInterval95:
      return QStringLiteral("t95");
    default:
      return {};
  }
}

BandPoint bandOf(const std::vector<double>& values) {
  BandPoint b;
  b.n = int(values.size());
  if (values.empty()) return b;
  double sum = 0;
  for (double v : values) sum += v;
  b.mean = sum / b.n;
  switch (bandKind(b.n)) {
    case BandKind::None:
      b.low = b.high = b.mean;
      break;
    case BandKind::MinMax:
      b.low = std::min(values[0], values[1]);
      b.high = std::max(values[0], values[1]);
      break;
    case BandKind::TInterval95: {
      const stats::Summary s = stats::summarize(values, 0.95);
      b.low = s.ci_low;
      b.high = s.ci_high;
      break;
    }
  }
  return b;
}

void MetricStore::addPoint(const QString& run, const QString& metric, const MetricPoint& p) {
  if (!m_runOrder.contains(run)) {
    m_runOrder << run;
    m_groupsDirty = true;
    ++m_generation;
  }
  MetricPoint q = p;
  if (std::isfinite(q.flops) && q.tokens > 0)
    m_flopsPerToken[run] = q.flops / q.tokens;
  else if (!std::isfinite(q.flops) && m_flopsPerToken.contains(run))
    q.flops = m_flopsPerToken[run] * q.tokens;
  m_data[run][metric].push_back(q);
}

LoadedRun MetricStore::readMetricsFile(const QString& path) {
  LoadedRun out;
  if (!QFile::exists(path)) {
    out.error =
        QObject::tr("%1 does not exist; open a run folder that has a metrics.jsonl").arg(path);
    return out;
  }
  MetricsFile mf;
  try {
    mf = read_metrics(path.toStdString());
  } catch (const std::exception& e) {
    out.error = QString::fromStdString(e.what());
    return out;
  }
  auto num = [](const nlohmann::json& r, const char* k) {
    auto it = r.find(k);
    return it != r.end() && it->is_number() ? it->get<double>() : NAN;
  };
  for (const auto& r : mf.records) {
    const double f = num(r, "flops"), t = num(r, "tokens");
    if (std::isfinite(f) && t > 0) out.flopsPerToken = f / t;
  }
  for (const auto& r : mf.records) {
    MetricPoint base;
    base.step = num(r, "step");
    base.tokens = num(r, "tokens");
    base.flops = num(r, "flops");
    if (std::isnan(base.flops) && std::isfinite(out.flopsPerToken))
      base.flops = out.flopsPerToken * base.tokens;
    base.wall = num(r, "wall_s");
    for (const QString& key : metricKeys()) {
      const double v = num(r, key.toUtf8().constData());
      if (std::isnan(v)) continue;
      MetricPoint p = base;
      p.value = v;
      out.metrics[key].push_back(p);
    }
  }
  if (mf.torn_tail) out.warning = QString::fromStdString(mf.warning);
  const QString config = QFileInfo(path).dir().filePath(QStringLiteral("config.json"));
  if (QFile::exists(config)) {
    try {
      out.config = read_json_file(config.toStdString(), "", large_json_limits());
    } catch (const std::exception&) {
      out.config = nullptr;  // the run is shown on its own; its curves do not depend on the config
    }
  }
  return out;
}

void MetricStore::setRun(const QString& run, const LoadedRun& data) {
  m_data.remove(run);
  m_ema.remove(run);
  if (!m_runOrder.contains(run)) m_runOrder << run;
  m_data[run] = data.metrics;
  if (std::isfinite(data.flopsPerToken)) m_flopsPerToken[run] = data.flopsPerToken;
  if (data.config.is_object()) setRunConfig(run, data.config);
  m_groupsDirty = true;
  ++m_generation;
}

void MetricStore::removeRun(const QString& run) {
  m_data.remove(run);
  m_ema.remove(run);
  m_runOrder.removeAll(run);
  m_groupKey.remove(run);
  m_configName.remove(run);
  m_flopsPerToken.remove(run);
  m_groupsDirty = true;
  ++m_generation;
}

void MetricStore::clear() {
  m_data.clear();
  m_ema.clear();
  m_runOrder.clear();
  m_groupKey.clear();
  m_configName.clear();
  m_flopsPerToken.clear();
  m_groupsDirty = true;
  ++m_generation;
}

const std::vector<MetricPoint>& MetricStore::points(const QString& run,
                                                    const QString& metric) const {
  auto r = m_data.find(run);
  if (r == m_data.end()) return kNoPoints;
  auto m = r->find(metric);
  return m == r->end() ? kNoPoints : *m;
}

size_t MetricStore::pointCount(const QStringList& metrics) const {
  size_t total = 0;
  for (const QString& metric : metrics)
    for (const QString& run : m_runOrder) total += points(run, metric).size();
  return total;
}

QString MetricStore::groupKey(const nlohmann::json& config) {
  if (!config.is_object()) return {};
  // One arm across seeds, as Compare pairs them: its name and arm_config_hash (the seed written
  // as {seed} in string settings, so forks with per-seed ladder files group too).
  try {
    const std::string name = config.value("name", std::string());
    return QString::fromStdString(name + '\n' + arm_config_hash(config));
  } catch (const std::exception&) {  // a config the hash cannot read: all of it but the seed
    nlohmann::json c = config;
    if (c.contains("train") && c["train"].is_object()) c["train"].erase("seed");
    return QString::fromStdString(c.dump());  // object keys are sorted: equal configs, equal text
  }
}

void MetricStore::setRunConfig(const QString& run, const nlohmann::json& config) {
  const QString key = groupKey(config);
  if (key.isEmpty()) return;
  if (!m_runOrder.contains(run)) m_runOrder << run;
  const QString name = config.contains("name") && config["name"].is_string()
                           ? QString::fromStdString(config["name"].get<std::string>())
                           : QString();
  if (m_groupKey.value(run) == key && m_configName.value(run) == name) return;
  m_groupKey[run] = key;
  m_configName[run] = name;
  m_groupsDirty = true;
  ++m_generation;
}

const std::vector<SeedGroup>& MetricStore::groups() const {
  if (!m_groupsDirty) return m_groups;
  m_groups.clear();
  QMap<QString, int> index;  // key → position in m_groups
  QMap<QString, int> nameUses;
  for (const QString& run : m_runOrder) {
    const QString key = m_groupKey.contains(run) ? m_groupKey[run] : QStringLiteral("run:") + run;
    auto it = index.find(key);
    if (it == index.end()) {
      SeedGroup g;
      g.key = key;
      QString name = m_configName.value(run);
      if (!m_groupKey.contains(run)) name = run;
      if (name.isEmpty()) name = QStringLiteral("run");
      const int uses = ++nameUses[name];
      g.label = uses == 1 ? name : QStringLiteral("%1 (%2)").arg(name).arg(uses);
      it = index.insert(key, int(m_groups.size()));
      m_groups.push_back(g);
    }
    m_groups[size_t(*it)].runs << run;
  }
  m_groupsDirty = false;
  return m_groups;
}

const SeedGroup* MetricStore::groupOf(const QString& run) const {
  for (const SeedGroup& g : groups())
    if (g.runs.contains(run)) return &g;
  return nullptr;
}

bool MetricStore::hasSeedGroups() const {
  for (const SeedGroup& g : groups())
    if (g.runs.size() >= 2) return true;
  return false;
}

void MetricStore::setSmoothing(double w) {
  w = std::clamp(w, 0.0, 0.999);
  if (w == m_smoothing) return;
  m_smoothing = w;
  ++m_generation;
}

std::vector<double> MetricStore::ema(const std::vector<double>& x, double w) {
  std::vector<double> out(x.size());
  double s = 0, wt = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    s = w * s + (1 - w) * x[i];
    wt *= w;
    out[i] = w > 0 ? s / (1 - wt) : x[i];
  }
  return out;
}

const std::vector<double>& MetricStore::smoothed(const QString& run, const QString& metric) const {
  const auto& pts = points(run, metric);
  EmaCache& c = m_ema[run][metric];
  if (c.w != m_smoothing || c.out.size() > pts.size()) c = EmaCache{m_smoothing, 0, 1, {}};
  // The same recurrence as ema(), continued from the cached state over the new points only.
  const double w = c.w;
  c.out.reserve(pts.size());
  for (size_t i = c.out.size(); i < pts.size(); ++i) {
    c.s = w * c.s + (1 - w) * pts[i].value;
    c.wt *= w;
    c.out.push_back(w > 0 ? c.s / (1 - c.wt) : pts[i].value);
  }
  return c.out;
}

std::vector<double> MetricStore::drawnValues(const QString& run, const QString& metric) const {
  if (m_smoothing > 0 && !isEvaluation(metric)) return smoothed(run, metric);
  const auto& pts = points(run, metric);
  std::vector<double> v(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) v[i] = pts[i].value;
  return v;
}

std::vector<BandPoint> MetricStore::groupCurve(const SeedGroup& g, const QString& metric, XAxis x,
                                               Values values) const {
  // step → (values, x values) over the members; a run's repeated step (a resumed segment that
  // re-logged it) counts once, with its newest value.
  struct Acc {
    std::vector<double> values, xs;
  };
  std::map<double, Acc> bySteps;
  for (const QString& run : g.runs) {
    const auto& pts = points(run, metric);
    if (pts.empty()) continue;
    std::vector<double> vals;
    if (values == Values::Smoothed) {
      vals = smoothed(run, metric);
    } else if (values == Values::Drawn) {
      vals = drawnValues(run, metric);
    } else {
      vals.resize(pts.size());
      for (size_t i = 0; i < pts.size(); ++i) vals[i] = pts[i].value;
    }
    std::map<double, std::pair<double, double>> mine;  // step → (value, x)
    for (size_t i = 0; i < pts.size(); ++i)
      if (std::isfinite(pts[i].step) && std::isfinite(vals[i]))
        mine[pts[i].step] = {vals[i], xOf(pts[i], x)};
    for (const auto& [step, vx] : mine) {
      Acc& a = bySteps[step];
      a.values.push_back(vx.first);
      a.xs.push_back(vx.second);
    }
  }
  std::vector<BandPoint> out;
  out.reserve(bySteps.size());
  for (const auto& [step, a] : bySteps) {
    BandPoint b = bandOf(a.values);
    b.step = step;
    double sx = 0;
    int nx = 0;
    for (double v : a.xs)
      if (std::isfinite(v)) sx += v, ++nx;
    b.x = nx > 0 ? sx / nx : NAN;
    out.push_back(b);
  }
  return out;
}

QList<QPointF> MetricStore::decimate(const QList<QPointF>& pts, int buckets, double x0, double x1,
                                     bool logX) {
  if (buckets < 1 || pts.size() <= 2 * qsizetype(buckets) || !(x1 > x0)) return pts;
  QList<QPointF> out;
  out.reserve(2 * buckets + 3);
  const double scale = buckets / (x1 - x0);
  qsizetype lo = -1, hi = -1;  // indices of the current bucket's minimum and maximum
  long long bucket = std::numeric_limits<long long>::min();
  auto flush = [&] {
    if (lo < 0) return;
    if (lo == hi)
      out.append(pts[lo]);
    else if (lo < hi)
      out << pts[lo] << pts[hi];
    else
      out << pts[hi] << pts[lo];
  };
  for (qsizetype i = 0; i < pts.size(); ++i) {
    const double x = logX ? std::log10(pts[i].x()) : pts[i].x();
    const long long b = (long long)std::floor(std::clamp((x - x0) * scale, -1.0, double(buckets)));
    if (b != bucket) {
      flush();
      bucket = b;
      lo = hi = i;
      continue;
    }
    if (pts[i].y() < pts[lo].y()) lo = i;
    if (pts[i].y() > pts[hi].y()) hi = i;
  }
  flush();
  if (out.last() != pts.last()) out.append(pts.last());  // the newest value is always drawn exactly
  return out;
}

}  // namespace gllm::gui
