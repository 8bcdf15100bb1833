// ConePanel: the admissible-cone certificate recomputed off the GUI thread on every edit. With a
// `gllm profiles` file it certifies the grade tensors the model of the editor's settings holds
// (read back from the built model; head grades only against head profiles); with geometric (ν, μ)
// it is the Table 3 explorer of the editor's level grades — badge (Eq. 15), sign stability, Λ(q),
// gain, BC.
#pragma once
#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <vector>

#include "engine/config/run_config.h"
#include "engine/grading/certify.h"
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
  QString error;                // non-empty: inputs refused, numbers below are stale
  grading::ConeReport report;   // for the current grades (level-constant, Rem. 9)
  grading::Selection educated;  // q*_C on the L-level box (Prop. 11)
  bool hasBootstrap = false;
  double bootstrapSignFraction = 0;  // fraction of resamples with the same certificate sign
  int bootstrapResamples = 0;
  std::vector<double> levelAlpha, levelTau;  // a_l, s_l for the bar chart
  QString deletion;                          // Def. 2 deletions, reported
  // The grades the model holds (profiles file and a config given): one certificate per graded
  // component; `model` is the MLGE component's when it was certified, and then drives the badge.
  std::vector<grading::ComponentCertificate> components;
  bool fromModel = false;
  grading::ComponentCertificate model;
  QString gradesSource;  // where the certified grades come from, in words
};

class ConePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ConePanel(QWidget* parent = nullptr);

  // Inputs. Each schedules a recomputation (coalesced; the GUI thread never waits for it).
  void setGrades(const std::vector<double>& levelGrades, double lambda, double clip);
  // The settings whose model is certified (built off the GUI thread and its grade tensors read
  // back) when a profiles file is loaded; `label` names them in the source line.
  void setConfig(const RunConfig& config, const QString& label);
  // Head profiles (`gllm profiles --checkpoint`) for the head grades: "" or the error.
  QString loadHeadProfilesFile(const QString& path);
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
  QString headsText() const;
  QString sourceText() const;
  QString valueText(const QString& key) const;  // "certificate", "lambda_q", "bc", ... as shown

 Q_SIGNALS:
  void resultReady();
  // "Set to the educated q*_C": the per-level grades for the grade editor.
  void educatedRequested(const std::vector<double>& levelGrades);

 private:
  // Shows why a profiles file was not loaded under the source buttons; returns the message.
  QString showSourceError(const QString& message);
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
  std::shared_ptr<const RunConfig> m_config;
  QString m_configLabel;
  std::shared_ptr<grading::HeadProfiles> m_heads;
  QString m_headsPath;
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
  QLabel* m_source = nullptr;
  QLabel* m_headsLabel = nullptr;
  QMap<QString, QLabel*> m_values;
  QPushButton* m_educated = nullptr;
  QChart* m_chart = nullptr;
  QLabel* m_status = nullptr;
};

}  // namespace gllm::gui
