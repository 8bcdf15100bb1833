// The Data panel: prepares a corpus (text, JSON Lines, .gz/.zst files and folders) into a dataset
// of llm.c token shards in the background, or imports shards made elsewhere with their
// sentencepiece model; shows the manifest, and hands the dataset to the run settings.
#pragma once
#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/dataset/prepare.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace gllm::gui {

// What a prepare or an open on the worker brings back.
struct DatasetOutcome {
  QString dir;
  nlohmann::json manifest;  // null when `error` is set
  QString error;
  bool alreadyComplete = false, resumed = false, stopped = false;
  double seconds = 0;
};

class DataPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DataPanel(QWidget* parent = nullptr);
  ~DataPanel() override;  // stops a prepare at its next document and waits for it (resumable)

  void setInputs(const QStringList& paths);
  QStringList inputs() const;
  void setOutputDir(const QString& dir);
  QString outputDir() const;
  // The form's options (sizes, format, text field, UTF-8 rule) and filling the form from them.
  PrepareOptions options() const;
  void setOptions(const PrepareOptions& o);
  // Format "llm.c shards made elsewhere": the inputs are shards, imported with this model.
  bool importing() const;
  void setTokenizerModel(const QString& path);
  QString tokenizerModel() const;

  // Starts preparing on a worker; returns "" or why it cannot start (also shown in the panel).
  QString prepare();
  // Asks the prepare to stop at its next document; Prepare again continues it.
  void stop();
  bool busy() const;
  // Reads a prepared dataset's manifest on a worker and shows it.
  void openDataset(const QString& dir);

  QString statusText() const;
  QString lastError() const { return m_lastError; }
  QString datasetDir() const { return m_datasetDir; }
  nlohmann::json manifest() const { return m_manifest; }
  QTableWidget* splitsTable() const { return m_splits; }
  QProgressBar* progressBar() const { return m_progress; }
  QStringList logLines() const;
  // Press "Use in run settings" (enabled once a dataset is shown).
  void useInRunSettings();

 Q_SIGNALS:
  // The run settings should train from `dir` (data.corpus = prepared) with its vocabulary.
  void datasetChosen(const QString& dir, int vocab);
  void finished();

 private:
  void buildLayout();
  void addInputs(const QStringList& paths);
  void pollProgress();
  void showOutcome(const DatasetOutcome& r);
  void showManifest(const QString& dir, const nlohmann::json& m);
  void appendLog(const QString& line);
  void setBusy(bool on);
  void showError(const QString& text);
  void updateFormatRows();

  QListWidget* m_inputs = nullptr;
  QLineEdit* m_out = nullptr;
  QSpinBox* m_vocab = nullptr;
  QSpinBox* m_valTokens = nullptr;
  QSpinBox* m_heldoutTokens = nullptr;
  QSpinBox* m_sample = nullptr;
  QSpinBox* m_shardTokens = nullptr;
  QComboBox* m_format = nullptr;
  QLineEdit* m_field = nullptr;
  QLineEdit* m_model = nullptr;  // importing: the sentencepiece model of the shards
  QWidget* m_modelRow = nullptr;
  QComboBox* m_utf8 = nullptr;
  QCheckBox* m_skipBad = nullptr;
  QPushButton* m_prepare = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_use = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_stage = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_error = nullptr;
  QTableWidget* m_splits = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QTimer* m_poll = nullptr;

  // Shared with the worker: the stop flag and the latest progress (read by m_poll).
  struct Shared {
    std::atomic<bool> stop{false};
    std::atomic<int> stage{-1};
    std::atomic<uint64_t> done{0}, total{0};
  };
  std::shared_ptr<Shared> m_shared;
  QFutureWatcher<DatasetOutcome>* m_watcher = nullptr;
  bool m_busy = false;
  QString m_lastError, m_datasetDir;
  nlohmann::json m_manifest;
};

}  // namespace gllm::gui
