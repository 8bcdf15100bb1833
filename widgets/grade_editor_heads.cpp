// GradeEditor's head grades: the grades the run will get (initial_head_grades, as the model
// computes them), cell edits that make them explicit, the grades file, the table and the heatmap.
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QTableWidget>
#include <cmath>

#include "engine/io/atomic_file.h"
#include "engine/io/json_read.h"
#include "engine/model/initial_grades.h"
#include "widgets/grade_editor.h"
#include "widgets/heatmap_widget.h"
#include "widgets/widget_util.h"

namespace gllm::gui {

namespace {
// attn_grades[layer][head][plane] of a grades file, flattened; throws with the reason.
std::vector<double> readGradesFile(const std::string& path, int layers, int heads, int planes) {
  const auto j = read_json_file(path, "", large_json_limits());
  const auto& a = j.at("attn_grades");
  std::vector<double> flat;
  bool ok = a.is_array() && int(a.size()) == layers;
  for (int l = 0; ok && l < layers; ++l) {
    ok = a[l].is_array() && int(a[l].size()) == heads;
    for (int h = 0; ok && h < heads; ++h) {
      ok = a[l][h].is_array() && int(a[l][h].size()) == planes;
      for (int p = 0; ok && p < planes; ++p) {
        ok = a[l][h][p].is_number();
        if (ok) flat.push_back(a[l][h][p].get<double>());
      }
    }
  }
  if (!ok)
    throw Error("attn_grades must be [" + std::to_string(layers) + "][" + std::to_string(heads) +
                "][" + std::to_string(planes) + "] numbers for this model");
  return flat;
}
}  // namespace

void GradeEditor::recomputeHeadGrades() {
  const auto& g = m_config.grading;
  const int L = m_config.model.layers(), H = m_config.model.heads(),
            planes = m_config.model.head_dim() / 2;
  GradeGrid grid = GradeGrid::zeros(L, H, planes);
  std::vector<double> given;
  try {
    if (g.head_grades == "file" && !g.grades_file.empty()) {
      if (m_gradesFileRead != qs(g.grades_file)) {  // read once per file chosen
        m_gradesFileValues.clear();
        m_gradesFileRead = qs(g.grades_file);
        m_gradesFileValues = readGradesFile(g.grades_file, L, H, planes);
      }
      given = m_gradesFileValues;
    } else if (g.head_grades == "explicit") {
      given = g.attn_grades;
    }
    const std::vector<float> v = initial_head_grades(m_config, given);
    for (size_t i = 0; i < v.size() && i < grid.values.size(); ++i) grid.values[i] = v[i];
  } catch (const std::exception& e) {
    showError(m_headError, m_heads,
              g.head_grades == "file"
                  ? tr("could not read %1: %2").arg(qs(g.grades_file), qs(e.what()))
                  : qs(e.what()));
  }
  m_headGrades = grid;
}

QString GradeEditor::headGradesAbove(double qmax, double base) const {
  // Uniform and random grades are recomputed for the new box; only given ones can fall outside.
  const std::string& src = m_config.grading.head_grades;
  if (src != "file" && src != "explicit") return {};
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

QString GradeEditor::setHeadGradeText(int layer, int head, int plane, const QString& text) {
  if (!componentOn(QStringLiteral("attention")))
    return refuseOff(QStringLiteral("attention"), m_headError, m_heads);
  bool ok = false;
  const double v = text.trimmed().toDouble(&ok);
  QString why;
  if (layer < 0 || layer >= m_headGrades.layers || head < 0 || head >= m_headGrades.heads ||
      plane < 0 || plane >= m_headGrades.planes)
    return tr("no cell layer %1, head %2, plane %3").arg(layer).arg(head).arg(plane);
  if (!ok || !std::isfinite(v))
    why = tr("layer %1 head %2 plane %3: '%4' is not a number")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(text);
  else if (v < 0)
    why = tr("layer %1 head %2 plane %3: %4 is refused — grades are ≥ 0; type a value in [0, %5]")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(text.trimmed())
              .arg(qMax(), 0, 'g', 6);
  else if (v > qMax() + 1e-12)
    why = tr("layer %1 head %2 plane %3: q = %4 exceeds q_max = %5 (clip C = %6); lower it or "
             "raise C")
              .arg(layer)
              .arg(head)
              .arg(plane)
              .arg(v, 0, 'g', 6)
              .arg(qMax(), 0, 'g', 6)
              .arg(clip(), 0, 'g', 6);
  const int index = (layer * m_headGrades.heads + head) * m_headGrades.planes + plane;
  if (!why.isEmpty()) {
    m_refusedHead = index;  // the refused value stays in its cell, marked, until corrected
    m_refusedHeadText = text;
    showError(m_headError, m_heads, why);
    refreshHeadTable();
    return why;
  }
  m_refusedHead = -1;
  // An edited cell makes the grades explicit: the run gets the table shown, with this cell's
  // value. The explicit grades are those before the diversity spread (which the model adds to
  // them again), so trainable grades with a diversity weight keep their one spread.
  RunConfig unspread = m_config;
  unspread.grading.diversity_weight = 0.0;
  std::vector<double> given;
  if (m_config.grading.head_grades == "explicit") given = m_config.grading.attn_grades;
  if (m_config.grading.head_grades == "file") given = m_gradesFileValues;
  std::vector<double> grades;
  try {
    for (float q : initial_head_grades(unspread, given)) grades.push_back(double(q));
  } catch (const std::exception& e) {
    showError(m_headError, m_heads, qs(e.what()));
    return qs(e.what());
  }
  if (index >= int(grades.size())) return tr("the head grades do not fit this model");
  grades[size_t(index)] = v;
  const QString err = applyGrading(
      [&](nlohmann::json& g) {
        g["head_grades"] = "explicit";
        g["attn_grades"] = grades;
      },
      m_headError);
  showError(m_headError, m_heads, err);
  return err;
}

QString GradeEditor::headCellText(int layer, int head, int plane) const {
  const auto* it = m_heads->item(layer * m_headGrades.heads + head, plane);
  return it ? it->text() : QString();
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
  m_gradesFileRead.clear();  // read back what was written
  return applyGrading(
      [&](nlohmann::json& g) {
        g["head_grades"] = "file";
        g["grades_file"] = ss(path);
        g["attn_grades"] = nlohmann::json::array();
      },
      m_headError);
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
  const Qt::ItemFlags flags = m_config.grading.attention
                                  ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable
                                  : Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  for (int l = 0; l < g.layers; ++l)
    for (int h = 0; h < g.heads; ++h)
      for (int p = 0; p < g.planes; ++p) {
        auto* it = m_heads->item(l * g.heads + h, p);
        if (!it) {
          it = new QTableWidgetItem;
          m_heads->setItem(l * g.heads + h, p, it);
        }
        it->setFlags(flags);
        it->setText(QString::number(g.at(l, h, p), 'g', 4));
        it->setData(Qt::BackgroundRole, QVariant());
        it->setData(Qt::ForegroundRole, QVariant());
        it->setToolTip(QString());
      }
  if (m_refusedHead >= 0 && m_refusedHead < int(g.values.size()) && g.planes > 0) {
    const int row = m_refusedHead / g.planes, col = m_refusedHead % g.planes;
    m_heads->item(row, col)->setText(m_refusedHeadText);
    markCell(m_heads, row, col, m_headError->text());
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
