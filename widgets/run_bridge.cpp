// RunBridge: the observer callbacks re-emitted as signals; registerTypes() makes the records
// usable in queued connections.
#include "widgets/run_bridge.h"

namespace gllm::gui {

RunBridge::RunBridge(QObject* parent) : QObject(parent) {
  registerTypes();
}

void RunBridge::registerTypes() {
  static bool done = false;
  if (done) return;
  qRegisterMetaType<gllm::StepRecord>("gllm::StepRecord");
  qRegisterMetaType<gllm::EvalRecord>("gllm::EvalRecord");
  qRegisterMetaType<gllm::CheckpointRecord>("gllm::CheckpointRecord");
  qRegisterMetaType<gllm::FinishedRecord>("gllm::FinishedRecord");
  done = true;
}

void RunBridge::on_start(const std::string& run_dir, int64_t start_step, int64_t total_steps) {
  Q_EMIT started(QString::fromStdString(run_dir), start_step, total_steps);
}
void RunBridge::on_step(const StepRecord& r) {
  Q_EMIT step(r);
}
void RunBridge::on_eval(const EvalRecord& r) {
  Q_EMIT eval(r);
}
void RunBridge::on_checkpoint(const CheckpointRecord& r) {
  Q_EMIT checkpoint(r);
}
void RunBridge::on_finished(const FinishedRecord& r) {
  Q_EMIT finished(r);
}
void RunBridge::on_error(const std::string& message) {
  Q_EMIT error(QString::fromStdString(message));
}
void RunBridge::on_log(const std::string& line) {
  Q_EMIT log(QString::fromStdString(line));
}

}  // namespace gllm::gui
