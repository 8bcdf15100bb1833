// GradeEditor: the grading part of a preset — level grades, head grades (layer × head × plane table
// and heatmap), output-grade source, λ and clip C, ladder arm — with refusals shown at the field.
#pragma once
#include <QWidget>
#include <vector>

#include "engine/config/run_config.h"
#include "widgets/grade_grid.h"

class QLineEdit;
class QLabel;
class QComboBox;
class QTableWidget;
class QTableWidgetItem;
class QTabWidget;

namespace gllm::gui {

class HeatmapWidget;

class GradeEditor : public QWidget {
  Q_OBJECT
 public:
  explicit GradeEditor(QWidget* parent = nullptr);

  void setConfig(const RunConfig& config);
  const RunConfig& config() const { return m_config; }

  // The numbers the cone panel needs.
  double lambda() const;  // resolved base λ (e^{1/d_k} when grading.lambda = 0)
  double clip() const { return m_config.grading.clip; }
  double qMax() const;
  std::vector<double> levelGrades() const;  // one per level (zeros when the config has none)
  const GradeGrid& headGrades() const { return m_headGrades; }

  // User actions; each returns "" when accepted or the reason it was refused (also shown at the
  // field).
  QString setLambdaText(const QString& text);
  QString setClipText(const QString& text);
  QString setLevelGradeText(int level, const QString& text);
  QString setHeadGradeText(int layer, int head, int plane, const QString& text);
  QString setLevelGrades(const std::vector<double>& v);  // e.g. the educated q*_C
  QString setOutputSource(const QString& source, const QString& file = {});
  QString loadLadder(const QString& path);
  QString chooseLadderArm(const QString& arm);
  QStringList ladderArms() const;
  QString loadGradingFile(const QString& path);        // a preset (or its grading part)
  QString saveGradingFile(const QString& path) const;  // {"grading": {...}}, atomic
  QString saveHeadGradesFile(const QString& path);     // {"attn_grades": [[[...]]]}; selects it

  QString lambdaError() const;
  QString clipError() const;
  QString levelError() const;
  QString headError() const;
  QString ladderError() const;
  // The editor's fields that show a refusal, as "λ: message" (Launch refuses while any does).
  QStringList invalidFields() const;
  HeatmapWidget* headHeatmap() const { return m_headHeatmap; }

 Q_SIGNALS:
  void gradingChanged();

 private:
  void build();
  void refresh();
  void refreshHeadTable();
  void refreshHeadHeatmap();
  QString applyGrading(const std::function<void(nlohmann::json&)>& edit, QLabel* errorLabel);
  void showError(QLabel* label, QWidget* field, const QString& message);
  void resetHeadGrades();
  // "" when every head grade is ≤ qmax, else which one is not and the C that would hold it.
  QString headGradesAbove(double qmax, double base) const;

  RunConfig m_config;
  GradeGrid m_headGrades;
  QLineEdit* m_lambda = nullptr;
  QLineEdit* m_clip = nullptr;
  QLabel* m_lambdaError = nullptr;
  QLabel* m_clipError = nullptr;
  QLabel* m_qmaxLabel = nullptr;
  QTableWidget* m_levels = nullptr;
  QLabel* m_levelError = nullptr;
  QComboBox* m_headSource = nullptr;
  QTableWidget* m_heads = nullptr;
  QLabel* m_headError = nullptr;
  HeatmapWidget* m_headHeatmap = nullptr;
  QComboBox* m_headView = nullptr;
  QComboBox* m_outputSource = nullptr;
  QLineEdit* m_outputFile = nullptr;
  QLabel* m_outputError = nullptr;
  QLineEdit* m_ladderFile = nullptr;
  QComboBox* m_ladderArm = nullptr;
  QLabel* m_ladderError = nullptr;
  QLabel* m_ladderInfo = nullptr;
  nlohmann::json m_ladder;  // the loaded ladder file
  bool m_refreshing = false;
};

}  // namespace gllm::gui
