// GradeEditor implementation: every edit goes through the RunConfig schema (set on a JSON copy and
// re-read), plus the clip-box rule 0 ≤ q ≤ q_max; a refused value is put back and the reason shown.
#include "widgets/grade_editor.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QStyle>
#include <QTabWidget>
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

}  // namespace

double GradeEditor::clipHolding(double lambda, double q) {
  const double c = std::pow(lambda, q);
  const double scale = std::pow(10.0, 5 - std::floor(std::log10(c)));
  double up = std::ceil(c * scale - 1e-9) / scale;
  while (std::log(up) / std::log(lambda) < q - 1e-12) up += 1 / scale;
  return up;
}

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
  m_config = config;
  m_refusedLevel = m_refusedHead = -1;
  for (QLabel* l :
       {m_lambdaError, m_clipError, m_levelError, m_headError, m_outputError, m_ladderError})
    l->setVisible(false);
  for (QWidget* f : {static_cast<QWidget*>(m_levels), static_cast<QWidget*>(m_heads)})
    showError(m_levelError, f, {});
  m_levelError->setVisible(false);
  recomputeHeadGrades();
  refresh();
  Q_EMIT gradingChanged();
}

void GradeEditor::showError(QLabel* label, QWidget* field, const QString& message) {
  if (label == m_offRefusal) m_offRefusal = nullptr;
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
  recomputeHeadGrades();  // the source, its seed, λ or C may have changed what the run gets
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

QString GradeEditor::setLevelGradeText(int level, const QString& text) {
  if (level < 0 || level >= m_config.grading.levels) return tr("no level %1").arg(level);
  if (!componentOn(QStringLiteral("mlge")))
    return refuseOff(QStringLiteral("mlge"), m_levelError, m_levels);
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (!ok || !std::isfinite(v))
    why = tr("level %1: '%2' is not a number").arg(level).arg(text);
  else if (v < 0)
    why = tr("level %1: %2 is refused — grades are ≥ 0 (the gauge fixes min q = 0); type a value "
             "in [0, %3]")
              .arg(level)
              .arg(text.trimmed())
              .arg(qMax(), 0, 'g', 6);
  else if (v > qMax() + 1e-12)
    why = tr("level %1: q = %2 exceeds q_max = log C / log λ = %3; lower it or raise the clip C")
              .arg(level)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6);
  if (!why.isEmpty()) {
    // The refused value stays in its cell, marked, until it is corrected (as Run settings does).
    m_refusedLevel = level;
    m_refusedLevelText = text;
    showError(m_levelError, m_levels, why);
    refresh();
    return why;
  }
  m_refusedLevel = -1;
  std::vector<double> g = levelGrades();
  g[static_cast<size_t>(level)] = v;
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = g; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setLevelGrades(const std::vector<double>& v) {
  if (!componentOn(QStringLiteral("mlge")))
    return refuseOff(QStringLiteral("mlge"), m_levelError, m_levels);
  if (static_cast<int>(v.size()) != m_config.grading.levels) {
    const QString why =
        tr("%1 grades given but grading.levels = %2").arg(v.size()).arg(m_config.grading.levels);
    showError(m_levelError, m_levels, why);
    return why;
  }
  m_refusedLevel = -1;
  std::vector<double> c = v;
  for (double& x : c) x = std::clamp(x, 0.0, qMax());  // solver output may overshoot by rounding
  const QString err = applyGrading([&](nlohmann::json& j) { j["level_grades"] = c; }, m_levelError);
  showError(m_levelError, m_levels, err);
  return err;
}

QString GradeEditor::setOutputSource(const QString& source, const QString& file) {
  if (!componentOn(QStringLiteral("graded_loss")) &&
      (source != qs(m_config.grading.output_grades) ||
       file != qs(m_config.grading.output_grades_file))) {
    const QString why = refuseOff(QStringLiteral("graded_loss"), m_outputError, m_outputSource);
    refresh();  // the choice shown goes back to the config's
    return why;
  }
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
    if (!labelText(label).isEmpty() && label != m_offRefusal)  // a refused edit of an off part
      out << QString::fromUtf8(name) + QStringLiteral(": ") + label->text();  // leaves no value
  return out;
}

bool GradeEditor::componentOn(const QString& component) const {
  const auto& g = m_config.grading;
  if (component == QLatin1String("mlge")) return g.mlge;
  if (component == QLatin1String("attention")) return g.attention;
  if (component == QLatin1String("graded_loss")) return g.graded_loss;
  return true;
}

QString GradeEditor::componentNotice(const QString& component) const {
  QWidget* w = m_offNotices.value(component);
  if (!w || w->isHidden()) return {};
  const auto* l = w->findChild<QLabel*>();
  return l ? l->text() : QString();
}

QString GradeEditor::enableComponent(const QString& component) {
  QLabel* label = component == QLatin1String("mlge")        ? m_levelError
                  : component == QLatin1String("attention") ? m_headError
                                                            : m_outputError;
  return applyGrading([&](nlohmann::json& g) { g[ss(component)] = true; }, label);
}

QString GradeEditor::refuseOff(const QString& component, QLabel* errorLabel, QWidget* field) {
  const QString name = component == QLatin1String("mlge")        ? tr("MLGE")
                       : component == QLatin1String("attention") ? tr("Graded attention")
                                                                 : tr("The graded loss");
  const QString why = tr("%1 is off (grading.%2 = false), so this edit would change nothing in "
                         "the model; turn it on first (the button above)")
                          .arg(name, component);
  showError(errorLabel, nullptr, why);
  m_offRefusal = errorLabel;  // shown, but nothing invalid is left in a field
  return why;
}

bool GradeEditor::levelGradesEditable() const {
  return m_config.grading.mlge;
}
bool GradeEditor::headGradesEditable() const {
  return m_config.grading.attention;
}

QWidget* GradeEditor::firstInvalidField() const {
  const std::pair<QLabel*, QWidget*> fields[] = {
      {m_lambdaError, m_lambda}, {m_clipError, m_clip},           {m_levelError, m_levels},
      {m_headError, m_heads},    {m_outputError, m_outputSource}, {m_ladderError, m_ladderFile}};
  for (const auto& [label, field] : fields)
    if (!labelText(label).isEmpty() && label != m_offRefusal) return field;
  return nullptr;
}

void GradeEditor::revealInvalidField() {
  QWidget* field = firstInvalidField();
  if (!field) return;
  revealField(field);
  if (field == m_levels && m_refusedLevel >= 0) {
    m_levels->setCurrentCell(m_refusedLevel, 2);
    m_levels->scrollToItem(m_levels->item(m_refusedLevel, 2));
  } else if (field == m_heads && m_refusedHead >= 0 && m_headGrades.planes > 0) {
    if (auto* tabs = qobject_cast<QTabWidget*>(m_heads->parentWidget()->parentWidget()))
      tabs->setCurrentWidget(m_heads);
    m_heads->setCurrentCell(m_refusedHead / m_headGrades.planes,
                            m_refusedHead % m_headGrades.planes);
  }
}

QString GradeEditor::levelCellText(int level) const {
  const auto* it = m_levels->item(level, 2);
  return it ? it->text() : QString();
}

void GradeEditor::markCell(QTableWidget* table, int row, int column, const QString& why) {
  auto* it = table->item(row, column);
  if (!it) return;
  it->setBackground(QColor(0xff, 0xf3, 0xf2));
  it->setForeground(QColor(0xb5, 0x2b, 0x27));
  it->setToolTip(why);
}

void GradeEditor::refreshNotices() {
  for (auto it = m_offNotices.begin(); it != m_offNotices.end(); ++it)
    it.value()->setVisible(!componentOn(it.key()));
}

void GradeEditor::refresh() {
  m_refreshing = true;
  refreshNotices();
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
    if (!g.mlge) c->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);  // read-only while off
    auto* d = new QTableWidgetItem(QString::number(std::pow(lambda(), grades[size_t(l)]), 'f', 4));
    d->setFlags(Qt::ItemIsEnabled);
    m_levels->setItem(l, 0, a);
    m_levels->setItem(l, 1, b);
    m_levels->setItem(l, 2, c);
    m_levels->setItem(l, 3, d);
  }
  if (m_refusedLevel >= 0 && m_refusedLevel < g.levels) {
    m_levels->item(m_refusedLevel, 2)->setText(m_refusedLevelText);
    markCell(m_levels, m_refusedLevel, 2, m_levelError->text());
  }
  m_headSource->setCurrentText(qs(g.head_grades));
  m_headSource->setEnabled(g.attention);
  m_outputSource->setCurrentIndex(std::max(0, m_outputSource->findData(qs(g.output_grades))));
  m_outputSource->setEnabled(g.graded_loss);
  m_outputFile->setEnabled(g.graded_loss);
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
      m_ladderArm->addItem(avail ? tr("%1  (⟨q,αˆ−τˆ⟩ fit %2%3)")
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

}  // namespace gllm::gui
