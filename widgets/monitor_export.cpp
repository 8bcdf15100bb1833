// MonitorPanel exports: the charts as PNG (at the size shown or a chosen resolution) or SVG, and
// every point as CSV with the run's folder and seed beside its name.
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>
#include <QTimer>
#include <QToolButton>
#include <cmath>
#include <map>
#ifdef GLLM_HAVE_QT_SVG
#include <QSvgGenerator>
#endif

#include "widgets/monitor_panel.h"

namespace gllm::gui {

QToolButton* MonitorPanel::buildExportButton() {
  // One Export button with a menu keeps the bar narrow enough for a ~560 px dock.
  auto* exportButton = new QToolButton(this);
  exportButton->setObjectName(QStringLiteral("exportCharts"));
  exportButton->setIcon(QIcon(QStringLiteral(":/icons/export.svg")));
  exportButton->setText(tr("Export"));
  exportButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  exportButton->setPopupMode(QToolButton::InstantPopup);
  auto* exportMenu = new QMenu(exportButton);
  QAction* png = exportMenu->addAction(tr("Charts as PNG…"));
  QAction* svg = exportMenu->addAction(tr("Charts as SVG…"));
  QAction* pngSized = exportMenu->addAction(tr("Charts as PNG at a chosen size…"));
  QAction* chartPng = exportMenu->addAction(tr("One chart as PNG at a chosen size…"));
  QAction* csv = exportMenu->addAction(tr("Data as CSV (with run folder and seed)…"));
  exportButton->setMenu(exportMenu);
  connect(png, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Export charts as PNG"), QStringLiteral("monitor.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) exportPng(f);
  });
  connect(svg, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Export charts as SVG"), QStringLiteral("monitor.svg"), tr("SVG (*.svg)"));
    if (!f.isEmpty()) exportSvg(f);
  });
  // A resolution as WxH (e.g. 2400x1600 for print), asked before the file name.
  auto askSize = [this](QSize shown, QSize* size) {
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, tr("Export resolution"), tr("Width × height in pixels:"), QLineEdit::Normal,
        QStringLiteral("%1x%2").arg(shown.width() * 2).arg(shown.height() * 2), &ok);
    const QStringList wh = text.split(QRegularExpression(QStringLiteral("[x×* ]+")));
    if (!ok || wh.size() != 2) return false;
    *size = QSize(wh[0].toInt(), wh[1].toInt());
    return size->width() >= 16 && size->height() >= 16 && size->width() <= 16384 &&
           size->height() <= 16384;
  };
  connect(pngSized, &QAction::triggered, this, [this, askSize] {
    QSize size;
    if (!askSize(m_chartArea->size(), &size)) return;
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Export charts as PNG"), QStringLiteral("monitor.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) exportPng(f, size);
  });
  connect(chartPng, &QAction::triggered, this, [this, askSize] {
    QStringList titles;
    for (const Chart& c : m_charts) titles << c.title;
    bool ok = false;
    const QString title =
        QInputDialog::getItem(this, tr("Export one chart"), tr("Chart:"), titles, 0, false, &ok);
    const int i = int(titles.indexOf(title));
    QSize size;
    if (!ok || i < 0 || !askSize(m_charts[size_t(i)].view->size(), &size)) return;
    const QString f = QFileDialog::getSaveFileName(this, tr("Export chart as PNG"),
                                                   QStringLiteral("chart.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) exportChartPng(m_charts[size_t(i)].metrics.first(), f, size);
  });
  connect(csv, &QAction::triggered, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Export data as CSV"), QStringLiteral("monitor.csv"), tr("CSV (*.csv)"));
    if (!f.isEmpty()) exportCsv(f);
  });
  return exportButton;
}

namespace {
// Hides the charts' seeds toggles while an export renders the chart area.
struct TogglesHidden {
  std::vector<QWidget*> hidden;
  explicit TogglesHidden(const std::vector<QWidget*>& toggles) {
    for (QWidget* w : toggles)
      if (!w->isHidden()) w->hide(), hidden.push_back(w);
  }
  ~TogglesHidden() {
    for (QWidget* w : hidden) w->show();
  }
};
}  // namespace

QString MonitorPanel::exportPng(const QString& path, QSize size) {
  if (m_timer->isActive()) redrawNow();
  std::vector<QWidget*> toggles;
  for (const Chart& c : m_charts) toggles.push_back(c.seeds);
  TogglesHidden hide(toggles);
  QPixmap pix;
  if (size.isValid() && size != m_chartArea->size()) {
    // A chosen resolution: the charts drawn again at that scale (text and lines stay sharp).
    pix = QPixmap(size);
    pix.fill(Qt::white);
    QPainter p(&pix);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(double(size.width()) / m_chartArea->width(),
            double(size.height()) / m_chartArea->height());
    m_chartArea->render(&p);
  } else {
    pix = m_chartArea->grab();
  }
  if (pix.isNull() || !pix.save(path, "PNG"))
    return tr("could not write %1; check the folder is writable").arg(path);
  return {};
}

QString MonitorPanel::exportSvg(const QString& path) {
#ifdef GLLM_HAVE_QT_SVG
  if (m_timer->isActive()) redrawNow();
  std::vector<QWidget*> toggles;
  for (const Chart& c : m_charts) toggles.push_back(c.seeds);
  TogglesHidden hide(toggles);
  QSvgGenerator gen;
  gen.setFileName(path);
  gen.setSize(m_chartArea->size());
  gen.setViewBox(QRect(QPoint(0, 0), m_chartArea->size()));
  gen.setTitle(tr("GLLM Workbench monitor"));
  gen.setDescription(tr("Training curves: %1").arg(m_store.runs().join(QStringLiteral(", "))));
  QPainter painter;
  if (!painter.begin(&gen)) return tr("could not write %1; check the folder is writable").arg(path);
  m_chartArea->render(&painter);
  painter.end();
  return QFile::exists(path) ? QString() : tr("could not write %1").arg(path);
#else
  Q_UNUSED(path);
  return tr("this build has no Qt Svg; export PNG instead");
#endif
}

QString MonitorPanel::exportChartPng(const QString& metric, const QString& path, QSize size) {
  if (m_timer->isActive()) redrawNow();
  for (Chart& c : m_charts) {
    if (!c.metrics.contains(metric)) continue;
    if (!size.isValid()) size = c.view->size();
    QPixmap pix(size);
    pix.fill(Qt::white);
    QPainter p(&pix);
    p.setRenderHint(QPainter::Antialiasing);
    // The chart's scene drawn into the whole image: a larger size is a sharper chart, not a
    // blown-up bitmap; alone, the chart carries its own legend.
    showChartLegend(c, true);
    c.view->render(&p, QRectF(QPointF(0, 0), QSizeF(size)), c.view->viewport()->rect(),
                   Qt::IgnoreAspectRatio);
    showChartLegend(c, false);
    p.end();
    if (!pix.save(path, "PNG"))
      return tr("could not write %1; check the folder is writable").arg(path);
    return {};
  }
  return tr("no chart shows '%1'").arg(metric);
}

QString MonitorPanel::exportCsv(const QString& path) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
    return tr("could not open %1 for writing").arg(path);
  QTextStream out(&file);
  out << "run,run_folder,seed,metric,step,tokens,flops,wall_s,value,ema,group,seeds,band,band_of,"
         "band_low,band_high\n";
  auto num = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 12) : QString(); };
  auto quoted = [](QString s) {
    if (s.contains(',') || s.contains('"') || s.contains('\n'))
      s = '"' + s.replace('"', QStringLiteral("\"\"")) + '"';
    return s;
  };
  auto groupName = [this](const QString& run) {
    const SeedGroup* g = m_store.groupOf(run);
    return g && g->runs.size() >= 2 ? g->label : QString();
  };
  for (const QString& run : m_store.runs()) {
    const QString name = quoted(run), group = quoted(groupName(run));
    const int seed = m_seeds.value(run, -1);
    const QString folderSeed =
        quoted(m_folders.value(run)) + ',' + (seed >= 0 ? QString::number(seed) : QString());
    for (const QString& metric : metricKeys()) {
      const auto& pts = points(run, metric);
      const std::vector<double>& sm = m_store.smoothed(run, metric);
      for (size_t i = 0; i < pts.size(); ++i)
        out << name << ',' << folderSeed << ',' << metric << ',' << num(pts[i].step) << ','
            << num(pts[i].tokens) << ',' << num(pts[i].flops) << ',' << num(pts[i].wall) << ','
            << num(pts[i].value) << ',' << num(sm[i]) << ',' << group << ",,,,,\n";
    }
  }
  // Seed groups: the mean of the seeds' raw values (value) and EMAs (ema) per step, and the band
  // the chart draws, over the values it draws (the EMA of a smoothed training metric).
  for (const SeedGroup& g : m_store.groups()) {
    if (g.runs.size() < 2) continue;
    const QString name = quoted(g.label);
    for (const QString& metric : metricKeys()) {
      const bool overEma = m_store.smoothing() > 0 && !MetricStore::isEvaluation(metric);
      using V = MetricStore::Values;
      // step → the same step of another curve (tokens and FLOPs ride along as x values).
      auto byStep = [&](XAxis x, V values) {
        std::map<double, BandPoint> m;
        for (const BandPoint& b : m_store.groupCurve(g, metric, x, values)) m[b.step] = b;
        return m;
      };
      const auto rawMean = byStep(XAxis::Tokens, V::Raw),
                 emaMean = byStep(XAxis::Flops, V::Smoothed), wall = byStep(XAxis::Wall, V::Raw);
      auto field = [&](const std::map<double, BandPoint>& m, double step, bool x) {
        auto it = m.find(step);
        return it == m.end() ? QString() : num(x ? it->second.x : it->second.mean);
      };
      for (const BandPoint& b : m_store.groupCurve(g, metric, XAxis::Step, V::Drawn)) {
        const BandKind kind = bandKind(b.n);
        const bool band = kind != BandKind::None;
        out << name << ",," << ',' << metric << ',' << num(b.step) << ','
            << field(rawMean, b.step, true) << ',' << field(emaMean, b.step, true) << ','
            << field(wall, b.step, true) << ',' << field(rawMean, b.step, false) << ','
            << field(emaMean, b.step, false) << ',' << name << ',' << b.n << ',' << bandName(kind)
            << ',' << (band ? overEma ? QStringLiteral("ema") : QStringLiteral("value") : QString())
            << ',' << (band ? num(b.low) : QString()) << ',' << (band ? num(b.high) : QString())
            << '\n';
      }
    }
  }
  out.flush();
  if (!file.commit()) return tr("could not write %1").arg(path);
  return {};
}

}  // namespace gllm::gui
