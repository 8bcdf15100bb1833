// RunBridge: the observer callbacks re-emitted as signals; registerTypes() makes the records
// usable in queued connections.
#include "widgets/run_bridge.h"

namespace gllm::gui {

RunBridge::RunBridge(QObject* parent) : QObject(parent) { registerTypes(); }

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
  emit started(QString::fromStdString(run_dir), start_step, total_steps);
}
void RunBridge::on_step(const StepRecord& r) { emit step(r); }
void RunBridge::on_eval(const EvalRecord& r) { emit eval(r); }
void RunBridge::on_checkpoint(const CheckpointRecord& r) { emit checkpoint(r); }
void RunBridge::on_finished(const FinishedRecord& r) { emit finished(r); }
void RunBridge::on_error(const std::string& message) { emit error(QString::fromStdString(message)); }
void RunBridge::on_log(const std::string& line) { emit log(QString::fromStdString(line)); }

}  // namespace gllm::gui
