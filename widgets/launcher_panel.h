// LauncherPanel: choose a preset, edit it in the generated form, pick seeds, and launch, queue,
// cancel, resume or remove runs in the persistent queue; shows each entry's progress and results.
#pragma once
#include <QWidget>

class QComboBox;
class QLineEdit;
class QLabel;
class QTableWidget;
class QPushButton;

namespace gllm::gui {

class PresetForm;
class RunQueue;

class LauncherPanel : public QWidget {
  Q_OBJECT
 public:
  LauncherPanel(RunQueue* queue, PresetForm* form, QWidget* parent = nullptr);

  // Loads a preset (name or path) into the form; returns "" or the error shown.
  QString choosePreset(const QString& nameOrPath);
  // Parses the seed field ("42, 43, 47" or "41-43"); false with the reason when it cannot.
  bool parseSeeds(QList<int>* seeds, QString* why) const;
  void setSeedsText(const QString& text);
  // Adds the form's config once per seed and, when `start`, runs the queue (entries start one
  // after another; Launch does this, Queue does not). Returns "" or the refusal (also shown
  // under the field).
  // `forkFrom` (a run folder, RUN@STEP or a checkpoint file): the runs start from that
  // checkpoint with the form's grades (route 2 of the certificate); "" = from initialisation.
  QString launch(bool start = true, const QString& forkFrom = QString());
  // Continues the selected cancelled or interrupted run from its last checkpoint and runs the
  // queue (the Resume button). Returns "" or why it cannot.
  QString resumeSelected();
  RunQueue* queue() const { return m_queue; }
  QString seedError() const;
  QTableWidget* table() const { return m_table; }
  QString selectedId() const;
  void selectId(const QString& id);

 private:
  void refreshTable();
  void updateButtons();

  RunQueue* m_queue;
  PresetForm* m_form;
  QComboBox* m_preset = nullptr;
  QLineEdit* m_seeds = nullptr;
  QLabel* m_seedError = nullptr;
  QLabel* m_status = nullptr;
  QTableWidget* m_table = nullptr;
  QPushButton* m_launch = nullptr;
  QPushButton* m_enqueue = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_remove = nullptr;
};

}  // namespace gllm::gui
