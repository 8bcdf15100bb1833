// GradeEditor: the grading part of a preset — level grades, head grades (layer × head × plane table
// and heatmap), output-grade source, λ and clip C, ladder arm — with refusals shown at the field.
#pragma once
#include <QHash>
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
class QPushButton;

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

  // The graded components the editor's sections act through: "mlge" (level grades), "attention"
  // (head grades), "graded_loss" (output grades). While one is off its section says so, offers to
  // turn it on, and refuses edits (they would change nothing in the model).
  bool componentOn(const QString& component) const;
  QString componentNotice(const QString& component) const;  // "" while the component is on
  QString enableComponent(const QString& component);        // "" or why it was refused
  bool levelGradesEditable() const;
  bool headGradesEditable() const;

  QString lambdaError() const;
  QString clipError() const;
  QString levelError() const;
  QString headError() const;
  QString ladderError() const;
  // The editor's fields that show a refusal, as "λ: message" (Launch refuses while any does).
  QStringList invalidFields() const;
  HeatmapWidget* headHeatmap() const { return m_headHeatmap; }
  // The first field that shows a refusal (nullptr when none), and bringing it into view with
  // the focus on it — what Launch's refusal points at.
  QWidget* firstInvalidField() const;
  void revealInvalidField();
  // The text a grade cell shows (a refused value stays there, marked, until corrected).
  QString levelCellText(int level) const;
  QString headCellText(int layer, int head, int plane) const;

 Q_SIGNALS:
  void gradingChanged();

 private:
  void build();
  void refresh();
  void refreshHeadTable();
  void refreshHeadHeatmap();
  QString applyGrading(const std::function<void(nlohmann::json&)>& edit, QLabel* errorLabel);
  void showError(QLabel* label, QWidget* field, const QString& message);
  // Recomputes the head grades the run will get from the config (zeros, the random draw, a grades
  // file's or the explicit values, the diversity spread): initial_head_grades, as the model does.
  void recomputeHeadGrades();
  QString refuseOff(const QString& component, QLabel* errorLabel, QWidget* field);
  void refreshNotices();
  void markCell(QTableWidget* table, int row, int column, const QString& why);
  // "" when every head grade is ≤ qmax, else which one is not and the C that would hold it.
  QString headGradesAbove(double qmax, double base) const;
  // The smallest C with 6 significant digits that holds grade q under base λ: λ^q rounded up.
  static double clipHolding(double lambda, double q);

  RunConfig m_config;
  GradeGrid m_headGrades;
  QLineEdit* m_lambda = nullptr;
  QLineEdit* m_clip = nullptr;
  QLabel* m_lambdaError = nullptr;
  QLabel* m_clipError = nullptr;
  QLabel* m_qmaxLabel = nullptr;
  QTableWidget* m_levels = nullptr;
  QLabel* m_levelError = nullptr;
  QWidget* m_mlgeOff = nullptr;  // "MLGE is off … [Turn MLGE on]"
  QWidget* m_attentionOff = nullptr;
  QWidget* m_gradedLossOff = nullptr;
  QHash<QString, QWidget*> m_offNotices;  // component → its notice
  int m_refusedLevel = -1;                // the level cell holding a refused value, and the value
  QString m_refusedLevelText;
  int m_refusedHead = -1;  // flat (layer, head, plane) index of a refused head cell
  QString m_refusedHeadText;
  QLabel* m_offRefusal = nullptr;  // the label showing a refused edit of a component that is off
  QString m_gradesFileRead;        // the grades file m_gradesFileValues came from
  std::vector<double> m_gradesFileValues;
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
