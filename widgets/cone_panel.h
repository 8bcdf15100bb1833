// ConePanel: the admissible-cone certificate for the current level grades, recomputed off the GUI
// thread on every edit — ⟨q, α̂−τ̂⟩, bootstrap sign stability, Λ(q), BC, Λ*, C⁻², gain, badge, α̂/τ̂
// bars, and the educated q*_C — from a `gllm profiles` file or geometric (ν, μ) (Table 3 explorer).
#pragma once
#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <vector>

#include "engine/grading/cone.h"
#include "engine/grading/profiles.h"
#include "engine/grading/select.h"

class QLabel;
class QSlider;
class QRadioButton;
class QLineEdit;
class QPushButton;
class QChart;
class QBarSet;
class QBarSeries;

namespace gllm::gui {

// Everything one recomputation produces (computed on a worker thread).
struct ConeResult {
  int generation = 0;
  QString error;                       // non-empty: inputs refused, numbers below are stale
  grading::ConeReport report;          // for the current grades (level-constant, Rem. 9)
  grading::Selection educated;         // q*_C on the L-level box (Prop. 11)
  bool hasBootstrap = false;
  double bootstrapSignFraction = 0;    // fraction of resamples with the same certificate sign
  int bootstrapResamples = 0;
  std::vector<double> levelAlpha, levelTau;  // a_l, s_l for the bar chart
  QString deletion;                    // Def. 2 deletions, reported
};

class ConePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ConePanel(QWidget* parent = nullptr);

  // Inputs. Each schedules a recomputation (coalesced; the GUI thread never waits for it).
  void setGrades(const std::vector<double>& levelGrades, double lambda, double clip);
  void setGeometric(double nu, double mu);
  QString loadProfilesFile(const QString& path);  // "" or the error (also shown)
  void useGeometric();

  // The inputs as the panel would send them to the engine, for tests and the CSV of a session.
  grading::Profiles currentProfiles() const;
  std::vector<double> grades() const { return m_grades; }
  double lambda() const { return m_lambda; }
  double clip() const { return m_clip; }
  double nu() const;
  double mu() const;

  const ConeResult& result() const { return m_result; }
  bool busy() const;
  // Blocks with an event loop until the latest inputs have a result (tests, screenshots).
  bool waitForResult(int ms = 5000);
  QString badgeText() const;
  QString valueText(const QString& key) const;  // "certificate", "lambda_q", "bc", ... as shown

 signals:
  void resultReady();
  // "Set to the educated q*_C": the per-level grades for the grade editor.
  void educatedRequested(const std::vector<double>& levelGrades);

 private:
  void schedule();
  void startCompute();
  void applyResult(const ConeResult& r);
  void updateSliderLabels();

  std::vector<double> m_grades;
  double m_lambda = std::exp(1.0 / 32.0);
  double m_clip = 2.0;
  bool m_fromFile = false;
  std::shared_ptr<grading::ProfilesFile> m_file;
  QString m_filePath;
  int m_levels = 4;

  int m_generation = 0;
  bool m_dirty = false;
  QFutureWatcher<ConeResult>* m_watcher = nullptr;
  ConeResult m_result;

  QRadioButton* m_geoButton = nullptr;
  QRadioButton* m_fileButton = nullptr;
  QSlider* m_nu = nullptr;
  QSlider* m_mu = nullptr;
  QLabel* m_nuLabel = nullptr;
  QLabel* m_muLabel = nullptr;
  QLineEdit* m_filePathEdit = nullptr;
  QLabel* m_sourceError = nullptr;
  QLabel* m_badge = nullptr;
  QLabel* m_badgeReason = nullptr;
  QMap<QString, QLabel*> m_values;
  QPushButton* m_educated = nullptr;
  QChart* m_chart = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
