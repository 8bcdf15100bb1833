// The Ladder panel's two charts (ladder_panel.h): measured against predicted token ratio over the
// certificate axis, and each arm's validation curve in log tokens with the target and crossings.
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "widgets/ladder_panel.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {

void hideFromLegend(QChart* chart, QAbstractSeries* s) {
  for (auto* m : chart->legend()->markers(s)) m->setVisible(false);
}

}  // namespace

void LadderPanel::drawRatioChart(const LadderReport& rep) {
  double xlo = 0, xhi = 0, ylo = 1, yhi = 1;
  int i = 0;
  for (const auto& x : rep.arms) {
    const QColor colour = seriesColor(i++);
    const double c = x.predicted_certificate();
    auto* predicted = new QScatterSeries;  // hollow: what the certificate's Λ predicts
    predicted->setName(tr("%1 predicted").arg(qs(x.ladder_arm)));
    predicted->setColor(Qt::transparent);
    predicted->setBorderColor(colour);
    predicted->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    predicted->setMarkerSize(9);
    predicted->append(c, x.predicted_gain());
    m_chart->addSeries(predicted);
    hideFromLegend(m_chart, predicted);
    ylo = std::min(ylo, x.predicted_gain());
    yhi = std::max(yhi, x.predicted_gain());
    xlo = std::min(xlo, c);
    xhi = std::max(xhi, c);
    if (x.token_ratio.n == 0) continue;
    auto* point = new QScatterSeries;
    point->setName(qs(x.ladder_arm));
    point->setColor(colour);
    point->setMarkerSize(11);
    point->append(c, x.token_ratio.ratio);
    if (x.token_ratio.n >= 2) {
      auto* whisker = new QLineSeries;
      whisker->setColor(colour);
      whisker->append(c, x.token_ratio.low);
      whisker->append(c, x.token_ratio.high);
      m_chart->addSeries(whisker);
      hideFromLegend(m_chart, whisker);
      ylo = std::min(ylo, x.token_ratio.low);
      yhi = std::max(yhi, x.token_ratio.high);
    }
    m_chart->addSeries(point);
    ylo = std::min(ylo, x.token_ratio.ratio);
    yhi = std::max(yhi, x.token_ratio.ratio);
  }
  const double xpad = 0.08 * std::max(xhi - xlo, 1e-3), ypad = 0.1 * std::max(yhi - ylo, 1e-3);
  auto* one = new QLineSeries;  // ratio 1: the uniform arm's tokens
  one->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  one->append(xlo - xpad, 1.0);
  one->append(xhi + xpad, 1.0);
  m_chart->addSeries(one);
  hideFromLegend(m_chart, one);
  auto* ax = new QValueAxis;
  ax->setTitleText(tr("⟨q, αˆ−τˆ⟩ %1").arg(qs(rep.prediction)));
  auto* ay = new QValueAxis;
  ay->setTitleText(tr("ratio"));  // tokens(uniform)/tokens(arm); the title says which points
  m_chart->addAxis(ax, Qt::AlignBottom);
  m_chart->addAxis(ay, Qt::AlignLeft);
  for (auto* s : m_chart->series()) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  applyNiceTicks(ax, xlo - xpad, xhi + xpad);
  applyNiceTicks(ay, ylo - ypad, yhi + ypad);
}

void LadderPanel::drawCurves(const LadderResult& r) {
  const LadderReport& rep = r.report;
  double tlo = 0, thi = 0, vlo = rep.target_bpb, vhi = rep.target_bpb;
  int i = 0;
  for (size_t k = 0; k < r.curves.size() && k < rep.arms.size(); ++k) {
    const auto& c = r.curves[k];
    const QColor colour = seriesColor(i++);
    if (c.tokens.empty()) continue;
    auto* line = new QLineSeries;
    line->setName(qs(c.arm));
    line->setColor(colour);
    for (size_t j = 0; j < c.tokens.size(); ++j) line->append(c.tokens[j], c.value[j]);
    m_curves->addSeries(line);
    tlo = tlo > 0 ? std::min(tlo, c.tokens.front()) : c.tokens.front();
    thi = std::max(thi, c.tokens.back());
    // The curves fall steeply early on; the window that matters is around the target.
    for (size_t j = 0; j < c.tokens.size(); ++j)
      if (c.tokens[j] >= rep.half_budget_tokens / 4) {
        vlo = std::min(vlo, c.value[j]);
        vhi = std::max(vhi, c.value[j]);
      }
    // Where the arm reaches the target: the geometric mean of its seeds' crossings.
    double logsum = 0;
    int n = 0;
    for (double t : rep.arms[k].tokens_to_target)
      if (std::isfinite(t) && t > 0) logsum += std::log(t), ++n;
    if (n > 0) {
      auto* cross = new QScatterSeries;
      cross->setColor(colour);
      cross->setMarkerSize(9);
      cross->append(std::exp(logsum / n), rep.target_bpb);
      m_curves->addSeries(cross);
      hideFromLegend(m_curves, cross);
    }
  }
  if (!(thi > tlo) || !(tlo > 0)) return;
  auto* target = new QLineSeries;
  target->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  target->append(tlo, rep.target_bpb);
  target->append(thi, rep.target_bpb);
  m_curves->addSeries(target);
  hideFromLegend(m_curves, target);
  auto* ax = new QLogValueAxis;
  ax->setBase(2);
  ax->setLabelFormat("%.0f");
  ax->setTitleText(rep.forked ? tr("tokens since fork") : tr("tokens"));
  ax->setRange(std::max(tlo, rep.half_budget_tokens / 4), thi);
  auto* ay = new QValueAxis;
  ay->setTitleText(tr("BPB"));
  m_curves->addAxis(ax, Qt::AlignBottom);
  m_curves->addAxis(ay, Qt::AlignLeft);
  for (auto* s : m_curves->series()) {
    s->attachAxis(ax);
    s->attachAxis(ay);
  }
  const double pad = 0.05 * std::max(vhi - vlo, 1e-3);
  applyNiceTicks(ay, vlo - pad, vhi + pad);
}

}  // namespace gllm::gui
