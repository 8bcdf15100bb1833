// RunBridge: adapts the engine's RunObserver callbacks (called on a trainer worker thread) to Qt
// signals delivered on the GUI thread through queued connections. Only small records cross.
#pragma once
#include <QMetaType>
#include <QObject>
#include <QString>

#include "engine/train/events.h"

Q_DECLARE_METATYPE(gllm::StepRecord)
Q_DECLARE_METATYPE(gllm::EvalRecord)
Q_DECLARE_METATYPE(gllm::CheckpointRecord)
Q_DECLARE_METATYPE(gllm::FinishedRecord)

namespace gllm::gui {

class RunBridge : public QObject, public RunObserver {
  Q_OBJECT
 public:
  explicit RunBridge(QObject* parent = nullptr);
  static void registerTypes();

  // RunObserver (worker thread): each call emits a signal; receivers on the GUI thread get it
  // queued, so the worker never waits on the GUI.
  void on_start(const std::string& run_dir, int64_t start_step, int64_t total_steps) override;
  void on_step(const StepRecord& r) override;
  void on_eval(const EvalRecord& r) override;
  void on_checkpoint(const CheckpointRecord& r) override;
  void on_finished(const FinishedRecord& r) override;
  void on_error(const std::string& message) override;
  void on_log(const std::string& line) override;

 Q_SIGNALS:
  void started(const QString& runDir, qint64 startStep, qint64 totalSteps);
  void step(const gllm::StepRecord& r);
  void eval(const gllm::EvalRecord& r);
  void checkpoint(const gllm::CheckpointRecord& r);
  void finished(const gllm::FinishedRecord& r);
  void error(const QString& message);
  void log(const QString& line);
};

}  // namespace gllm::gui
