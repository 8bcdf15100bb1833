// GradeEditor implementation: every edit goes through the RunConfig schema (set on a JSON copy and
// re-read), plus the clip-box rule 0 ≤ q ≤ q_max; a refused value is put back and the reason shown.
#include "widgets/grade_editor.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QStyle>
#include <QTableWidget>
#include <cmath>

#include "engine/grading/ladder.h"
#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "widgets/heatmap_widget.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
QString labelText(const QLabel* l) {
  return l->isHidden() ? QString() : l->text();
}

// The smallest C with 6 significant digits that holds grade q under base λ: λ^q rounded up.
double clipHolding(double lambda, double q) {
  const double c = std::pow(lambda, q);
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(c)));
  double up = std::ceil(c * scale - 1e-9) / scale;
  while (std::log(up) / std::log(lambda) < q - 1e-12) up += 1 / scale;
  return up;
}
}  // namespace

GradeEditor::GradeEditor(QWidget* parent) : QWidget(parent) {
  build();
  setConfig(RunConfig{});
}

double GradeEditor::lambda() const {
  return m_config.grading.base_for(m_config.model.head_dim());
}
double GradeEditor::qMax() const {
  return m_config.grading.q_max(m_config.model.head_dim());
}

std::vector<double> GradeEditor::levelGrades() const {
  std::vector<double> v = m_config.grading.level_grades;
  if (v.empty()) v.assign(static_cast<size_t>(m_config.grading.levels), 0.0);
  return v;
}

void GradeEditor::setConfig(const RunConfig& config) {
  const bool shapeChanged = config.model.layers() != m_headGrades.layers ||
                            config.model.heads() != m_headGrades.heads ||
                            config.model.head_dim() / 2 != m_headGrades.planes;
  m_config = config;
  if (shapeChanged) resetHeadGrades();
  for (QLabel* l :
       {m_lambdaError, m_clipError, m_levelError, m_headError, m_outputError, m_ladderError})
    l->setVisible(false);
  refresh();
  Q_EMIT gradingChanged();
}

void GradeEditor::resetHeadGrades() {
  m_headGrades = GradeGrid::zeros(m_config.model.layers(), m_config.model.heads(),
                                  m_config.model.head_dim() / 2);
  const auto& g = m_config.grading;
  if (g.head_grades == "file" && !g.grades_file.empty()) {
    try {
      const auto j = read_json_file(g.grades_file, "", large_json_limits());
      const auto& a = j.at("attn_grades");
      for (int l = 0; l < m_headGrades.layers && l < int(a.size()); ++l)
        for (int h = 0; h < m_headGrades.heads && h < int(a[l].size()); ++h)
          for (int p = 0; p < m_headGrades.planes && p < int(a[l][h].size()); ++p)
            m_headGrades.at(l, h, p) = a[l][h][p].get<double>();
    } catch (const std::exception& e) {
      showError(m_headError, m_heads, tr("could not read %1: %2").arg(qs(g.grades_file), e.what()));
    }
  }
}

void GradeEditor::showError(QLabel* label, QWidget* field, const QString& message) {
  label->setText(message);
  label->setVisible(!message.isEmpty());
  if (field) {
    field->setProperty("invalid", !message.isEmpty());
    field->style()->unpolish(field);
    field->style()->polish(field);
  }
}

QString GradeEditor::applyGrading(const std::function<void(nlohmann::json&)>& edit,
                                  QLabel* errorLabelWidget) {
  nlohmann::json j = m_config.to_json();
  edit(j["grading"]);
  try {
    RunConfig next = RunConfig::from_json(j);
    m_config = next;
  } catch (const ConfigError& e) {
    QString msg = qs(e.what());
    showError(errorLabelWidget, nullptr, msg);
    refresh();
    return msg;
  }
  showError(errorLabelWidget, nullptr, {});
  refresh();
  Q_EMIT gradingChanged();
  return {};
}

QString GradeEditor::setLambdaText(const QString& text) {
  bool ok = false;
  // An empty field is the automatic base, stored as 0.
  const double v = text.trimmed().isEmpty() ? (ok = true, 0.0) : text.trimmed().toDouble(&ok);
  if (!ok) {
    const QString why = tr("'%1' is not a number; λ must be > 1 (or 0 for e^{1/d_k})").arg(text);
    showError(m_lambdaError, m_lambda, why);
    return why;
  }
  // The clip box must keep holding the grades under the new base.
  const double base = v > 0 ? v : std::exp(1.0 / m_config.model.head_dim());
  if (v == 0 || v > 1) {
    const double qmax = std::log(m_config.grading.clip) / std::log(base);
    for (double q : levelGrades())
      if (q > qmax + 1e-12) {
        const QString why = tr("with λ = %1 the clip allows q ≤ %2, but a level grade is %3; lower "
                               "the grades or raise C first")
                                .arg(base, 0, 'g', 6)
                                .arg(qmax, 0, 'g', 6)
                                .arg(q, 0, 'g', 6);
        showError(m_lambdaError, m_lambda, why);
        return why;
      }
    if (const QString why = headGradesAbove(qmax, base); !why.isEmpty()) {
      showError(m_lambdaError, m_lambda, tr("λ = %1: %2").arg(base, 0, 'g', 6).arg(why));
      return m_lambdaError->text();
    }
  }
  const QString err = applyGrading([&](nlohmann::json& g) { g["lambda"] = v; }, m_lambdaError);
  showError(m_lambdaError, m_lambda, err);
  return err;
}

QString GradeEditor::setClipText(const QString& text) {
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  if (!ok) {
    const QString why = tr("'%1' is not a number; the clip C must be > 1").arg(text);
    showError(m_clipError, m_clip, why);
    return why;
  }
  if (v > 1) {
    const double qmax = std::log(v) / std::log(lambda());
    const auto grades = levelGrades();
    // Name the level that needs the largest C, and a C that holds every level (rounded up at
    // the digits shown, so the hinted value is accepted).
    size_t worst = 0;
    for (size_t l = 1; l < grades.size(); ++l)
      if (grades[l] > grades[worst]) worst = l;
    if (!grades.empty() && grades[worst] > qmax + 1e-12) {
      const QString why = tr("C = %1 allows q ≤ %2 but level %3 has q = %4; lower that grade "
                             "first or choose C ≥ %5")
                              .arg(v, 0, 'g', 6)
                              .arg(qmax, 0, 'g', 6)
                              .arg(worst)
                              .arg(grades[worst], 0, 'g', 6)
                              .arg(clipHolding(lambda(), grades[worst]), 0, 'g', 6);
      showError(m_clipError, m_clip, why);
      return why;
    }
    if (const QString why = headGradesAbove(qmax, lambda()); !why.isEmpty()) {
      showError(m_clipError, m_clip, tr("C = %1: %2").arg(v, 0, 'g', 6).arg(why));
      return m_clipError->text();
    }
  }
  const QString err = applyGrading([&](nlohmann::json& g) { g["clip"] = v; }, m_clipError);
  showError(m_clipError, m_clip, err);
  return err;
}

QString GradeEditor::headGradesAbove(double qmax, double base) const {
  int worst = -1;
  for (int i = 0; i < int(m_headGrades.values.size()); ++i)
    if (m_headGrades.values[size_t(i)] > qmax + 1e-12 &&
        (worst < 0 || m_headGrades.values[size_t(i)] > m_headGrades.values[size_t(worst)]))
      worst = i;
  if (worst < 0) return {};
  const int planes = m_headGrades.planes, heads = m_headGrades.heads;
  const double q = m_headGrades.values[size_t(worst)];
  return tr("the clip allows q ≤ %1 but head grade (layer %2, head %3, plane %4) is %5; lower the "
            "head grades first or choose C ≥ %6")
      .arg(qmax, 0, 'g', 6)
      .arg(worst / (planes * heads))
      .arg(worst / planes % heads)
      .arg(worst % planes)
      .arg(q, 0, 'g', 6)
      .arg(clipHolding(base, q), 0, 'g', 6);
}

QString GradeEditor::setLevelGradeText(int level, const QString& text) {
  if (level < 0 || level >= m_config.grading.levels) return tr("no level %1").arg(level);
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (!ok || !std::isfinite(v))
    why = tr("level %1: '%2' is not a number").arg(level).arg(text);
  else if (v < 0)
    why = tr("level %1: grades are ≥ 0 (the gauge fixes min q = 0)").arg(level);
  else if (v > qMax() + 1e-12)
    why = tr("level %1: q = %2 exceeds q_max = log C / log λ = %3; lower it or raise the clip C")
              .arg(level)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6);
  if (!why.isEmpty()) {
    showError(m_levelError, m_levels, why);
    refresh();
    m_levelError->setVisible(true);
    return why;
  }
  std::vector<double> g = levelGrades();
  g[static_cast<size_t>(level)] = v;
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = g; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setLevelGrades(const std::vector<double>& v) {
  if (static_cast<int>(v.size()) != m_config.grading.levels) {
    const QString why =
        tr("%1 grades given but grading.levels = %2").arg(v.size()).arg(m_config.grading.levels);
    showError(m_levelError, m_levels, why);
    return why;
  }
  std::vector<double> c = v;
  for (double& x : c) x = std::clamp(x, 0.0, qMax());  // solver output may overshoot by rounding
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = c; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setHeadGradeText(int layer, int head, int plane, const QString& text) {
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (layer < 0 || layer >= m_headGrades.layers || head < 0 || head >= m_headGrades.heads ||
      plane < 0 || plane >= m_headGrades.planes)
    why = tr("no cell layer %1, head %2, plane %3").arg(layer).arg(head).arg(plane);
  else if (!ok || !std::isfinite(v))
    why = tr("layer %1 head %2 plane %3: '%4' is not a number")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(text);
  else if (v < 0)
    why = tr("layer %1 head %2 plane %3: grades are ≥ 0").arg(layer).arg(head).arg(plane);
  else if (v > qMax() + 1e-12)
    why = tr("layer %1 head %2 plane %3: q = %4 exceeds q_max = %5 (clip C = %6); lower it or "
             "raise C")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6)
              .arg(clip(), 0, 'g', 6);
  if (!why.isEmpty()) {
    showError(m_headError, m_heads, why);
    refreshHeadTable();
    return why;
  }
  m_headGrades.at(layer, head, plane) = v;
  showError(m_headError, m_heads, {});
  refreshHeadTable();
  refreshHeadHeatmap();
  Q_EMIT gradingChanged();
  return {};
}

QString GradeEditor::saveHeadGradesFile(const QString& path) {
  nlohmann::json a = nlohmann::json::array();
  for (int l = 0; l < m_headGrades.layers; ++l) {
    nlohmann::json hl = nlohmann::json::array();
    for (int h = 0; h < m_headGrades.heads; ++h) {
      nlohmann::json pl = nlohmann::json::array();
      for (int p = 0; p < m_headGrades.planes; ++p) pl.push_back(m_headGrades.at(l, h, p));
      hl.push_back(pl);
    }
    a.push_back(hl);
  }
  try {
    write_file_atomic(ss(path), nlohmann::json({{"attn_grades", a}}).dump(1) + "\n");
  } catch (const Error& e) {
    showError(m_headError, m_heads, qs(e.what()));
    return qs(e.what());
  }
  return applyGrading(
      [&](nlohmann::json& g) {
        g["head_grades"] = "file";
        g["grades_file"] = ss(path);
      },
      m_headError);
}

QString GradeEditor::setOutputSource(const QString& source, const QString& file) {
  const QString err = applyGrading(
      [&](nlohmann::json& g) {
        g["output_grades"] = ss(source);
        g["output_grades_file"] = ss(file);
      },
      m_outputError);
  showError(m_outputError, m_outputSource, err);
  return err;
}

QString GradeEditor::loadLadder(const QString& path) {
  try {
    const grading::Ladder ladder = grading::load_ladder_file(ss(path));
    m_ladder = grading::ladder_to_json(ladder);
  } catch (const std::exception& e) {
    m_ladder = nullptr;
    showError(m_ladderError, m_ladderFile, qs(e.what()));
    refresh();
    return qs(e.what());
  }
  m_ladderFile->setText(path);
  showError(m_ladderError, m_ladderFile, {});
  refresh();
  return {};
}

QStringList GradeEditor::ladderArms() const {
  QStringList arms;
  if (m_ladder.is_object())
    for (const auto& a : m_ladder["arms"])
      if (a.value("available", true)) arms << qs(a.value("name", ""));
  return arms;
}

QString GradeEditor::chooseLadderArm(const QString& arm) {
  if (!m_ladder.is_object()) {
    const QString why = tr("open a ladder file first (`gllm ladder --out FILE`)");
    showError(m_ladderError, m_ladderArm, why);
    return why;
  }
  for (const auto& a : m_ladder["arms"]) {
    if (qs(a.value("name", "")) != arm) continue;
    if (!a.value("available", true)) {
      const QString why = tr("arm %1 is not available: %2").arg(arm, qs(a.value("reason", "")));
      showError(m_ladderError, m_ladderArm, why);
      return why;
    }
    std::vector<double> lg = a.value("level_grades", std::vector<double>{});
    const std::string file = ss(m_ladderFile->text());
    // Ladder grades are MLGE per-coordinate grades, acting in the graded basis of the profiles
    // they were certified against: the model takes both, frozen.
    std::string profiles = m_ladder.value("profiles_file", std::string());
    if (!profiles.empty() && QFileInfo(qs(profiles)).isRelative())
      profiles = ss(QFileInfo(m_ladderFile->text()).dir().filePath(qs(profiles)));
    if (profiles.empty()) {
      const QString why =
          tr("this ladder does not name its profiles file; rebuild it with `gllm ladder --profiles "
             "FILE --out …`");
      showError(m_ladderError, m_ladderArm, why);
      return why;
    }
    const QString err = applyGrading(
        [&](nlohmann::json& g) {
          g["mlge"] = true;
          g["level_grades_source"] = "ladder";
          g["ladder_file"] = file;
          g["ladder_arm"] = ss(arm);
          g["profiles_file"] = profiles;
          g["basis_trainable"] = false;
          g["grades_trainable"] = false;
          if (static_cast<int>(lg.size()) == g.value("levels", 4)) {
            const double qmax = qMax();
            for (double& x : lg) x = std::clamp(x, 0.0, qmax);
            g["level_grades"] = lg;
          }
        },
        m_ladderError);
    showError(m_ladderError, m_ladderArm, err);
    return err;
  }
  const QString why = tr("the ladder has no arm '%1'; choose one of %2")
                          .arg(arm, ladderArms().join(QStringLiteral(", ")));
  showError(m_ladderError, m_ladderArm, why);
  return why;
}

QString GradeEditor::loadGradingFile(const QString& path) {
  try {
    const auto j = read_json_file(ss(path), "", large_json_limits());
    if (!j.is_object() || !j.contains("grading"))
      throw Error(ss(path) +
                  " has no \"grading\" section; pick a preset or a file saved by Save grading");
    nlohmann::json full = m_config.to_json();
    full["grading"] =
        RunConfig::from_json(nlohmann::json{{"grading", j["grading"]}}).to_json()["grading"];
    setConfig(RunConfig::from_json(full));
    return {};
  } catch (const std::exception& e) {
    showError(m_levelError, nullptr, qs(e.what()));
    return qs(e.what());
  }
}

QString GradeEditor::saveGradingFile(const QString& path) const {
  try {
    write_file_atomic(ss(path),
                      nlohmann::json({{"grading", m_config.to_json()["grading"]}}).dump(2) + "\n");
    return {};
  } catch (const Error& e) {
    return qs(e.what());
  }
}

QString GradeEditor::lambdaError() const {
  return labelText(m_lambdaError);
}
QString GradeEditor::clipError() const {
  return labelText(m_clipError);
}
QString GradeEditor::levelError() const {
  return labelText(m_levelError);
}
QString GradeEditor::headError() const {
  return labelText(m_headError);
}
QString GradeEditor::ladderError() const {
  return labelText(m_ladderError);
}
QStringList GradeEditor::invalidFields() const {
  QStringList out;
  const std::pair<const char*, QLabel*> fields[] = {{"grading λ", m_lambdaError},
                                                    {"grading C", m_clipError},
                                                    {"level grades", m_levelError},
                                                    {"head grades", m_headError}};
  for (const auto& [name, label] : fields)
    if (!labelText(label).isEmpty())
      out << QString::fromUtf8(name) + QStringLiteral(": ") + label->text();
  return out;
}

void GradeEditor::refresh() {
  m_refreshing = true;
  const auto& g = m_config.grading;
  if (!m_lambda->hasFocus())
    m_lambda->setText(g.lambda == 0 ? QString() : QString::number(g.lambda, 'g', 10));
  if (!m_clip->hasFocus()) m_clip->setText(QString::number(g.clip, 'g', 10));
  m_qmaxLabel->setText(tr("λ = %1 (d_k = %2) · q_max = log C / log λ = %3 · C⁻² = %4")
                           .arg(lambda(), 0, 'g', 6)
                           .arg(m_config.model.head_dim())
                           .arg(qMax(), 0, 'g', 6)
                           .arg(1.0 / (g.clip * g.clip), 0, 'g', 4));
  const auto grades = levelGrades();
  const int width = m_config.model.width();
  m_levels->setRowCount(g.levels);
  for (int l = 0; l < g.levels; ++l) {
    auto* a = new QTableWidgetItem(QString::number(l));
    a->setFlags(Qt::ItemIsEnabled);
    const int dims =
        g.level_dims.empty() ? (g.levels > 0 ? width / g.levels : 0) : g.level_dims[size_t(l)];
    auto* b = new QTableWidgetItem(QString::number(dims));
    b->setFlags(Qt::ItemIsEnabled);
    auto* c = new QTableWidgetItem(QString::number(grades[size_t(l)], 'g', 6));
    c->setToolTip(tr("0 ≤ q_l ≤ q_max = %1").arg(qMax(), 0, 'g', 6));
    auto* d = new QTableWidgetItem(QString::number(std::pow(lambda(), grades[size_t(l)]), 'f', 4));
    d->setFlags(Qt::ItemIsEnabled);
    m_levels->setItem(l, 0, a);
    m_levels->setItem(l, 1, b);
    m_levels->setItem(l, 2, c);
    m_levels->setItem(l, 3, d);
  }
  m_headSource->setCurrentText(qs(g.head_grades));
  m_outputSource->setCurrentIndex(std::max(0, m_outputSource->findData(qs(g.output_grades))));
  if (!m_outputFile->hasFocus()) m_outputFile->setText(qs(g.output_grades_file));
  if (m_ladderFile->text().isEmpty() && !g.ladder_file.empty())
    m_ladderFile->setText(qs(g.ladder_file));
  m_ladderArm->clear();
  if (m_ladder.is_object()) {
    for (const auto& a : m_ladder["arms"]) {
      const QString name = qs(a.value("name", ""));
      const bool avail = a.value("available", true);
      const QString held =
          a.contains("certificate_heldout")
              ? tr(", held-out %1").arg(a.value("certificate_heldout", 0.0), 0, 'g', 4)
              : QString();
      m_ladderArm->addItem(avail ? tr("%1  (⟨q,α̂−τ̂⟩ fit %2%3)")
                                       .arg(name)
                                       .arg(a.value("certificate", 0.0), 0, 'g', 4)
                                       .arg(held)
                                 : tr("%1 (unavailable)").arg(name),
                           name);
    }
    const int i = m_ladderArm->findData(qs(g.ladder_arm));
    m_ladderArm->setCurrentIndex(i);
    const bool levels = m_ladder.value("program_kind", std::string()) == "levels";
    const auto ref = m_ladder.value("reference", nlohmann::json());
    m_ladderInfo->setText(tr("ladder: d = %1, BC = %2 (%3); coordinates: %4; order %5")
                              .arg(m_ladder.value("d", 0))
                              .arg(m_ladder.value("bc", 0.0), 0, 'g', 5)
                              .arg(levels ? tr("per level, L-level program")
                                          : tr("per coordinate, d-variable program"))
                              .arg(ref.is_object()
                                       ? tr("token reference %1 (route 1 presets start W_e in it)")
                                             .arg(qs(ref.value("kind", std::string())))
                                       : tr("word types (no model's embedding has them)"))
                              .arg(qs(m_ladder.value("order", nlohmann::json::array()).dump())));
  } else {
    m_ladderInfo->setText(g.ladder_arm.empty()
                              ? tr("No ladder loaded.")
                              : tr("arm %1 of %2").arg(qs(g.ladder_arm), qs(g.ladder_file)));
  }
  m_refreshing = false;
  refreshHeadTable();
  m_refreshing = true;
  const int view = m_headView->currentData().isValid() ? m_headView->currentData().toInt() : -1;
  m_headView->clear();
  m_headView->addItem(tr("mean over heads"), -1);
  for (int h = 0; h < m_headGrades.heads; ++h) m_headView->addItem(tr("head %1").arg(h), h);
  m_headView->setCurrentIndex(std::max(0, m_headView->findData(view)));
  m_refreshing = false;
  refreshHeadHeatmap();
}

void GradeEditor::refreshHeadTable() {
  m_refreshing = true;
  const GradeGrid& g = m_headGrades;
  m_heads->setRowCount(g.layers * g.heads);
  m_heads->setColumnCount(g.planes);
  QStringList rows, cols;
  for (int l = 0; l < g.layers; ++l)
    for (int h = 0; h < g.heads; ++h) rows << QStringLiteral("L%1 H%2").arg(l).arg(h);
  for (int p = 0; p < g.planes; ++p) cols << QString::number(p);
  m_heads->setVerticalHeaderLabels(rows);
  m_heads->setHorizontalHeaderLabels(cols);
  for (int l = 0; l < g.layers; ++l)
    for (int h = 0; h < g.heads; ++h)
      for (int p = 0; p < g.planes; ++p) {
        auto* it = m_heads->item(l * g.heads + h, p);
        if (!it) {
          it = new QTableWidgetItem;
          m_heads->setItem(l * g.heads + h, p, it);
        }
        it->setText(QString::number(g.at(l, h, p), 'g', 4));
      }
  m_refreshing = false;
}

void GradeEditor::refreshHeadHeatmap() {
  const int head = m_headView->currentData().isValid() ? m_headView->currentData().toInt() : -1;
  HeatmapData d = layerPlaneView(m_headGrades, head, QStringLiteral("q"));
  d.title = head < 0 ? tr("head grades, mean over heads") : tr("head grades, head %1").arg(head);
  m_headHeatmap->setData(d);
}

}  // namespace gllm::gui
