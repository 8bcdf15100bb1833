// CLI side of a training run: a RunObserver drawing a progress bar on stderr, Ctrl-C turned into
// Trainer::cancel(), and the wait loop shared by `gllm train` and `gllm resume`.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/train/events_json.h"
#include "engine/train/trainer.h"

namespace gllm::cli {

// Runs `launch` (which starts or resumes `trainer` with the given observer), draws progress
// until the run ends and returns its outcome. Ctrl-C, SIGTERM, SIGUSR1 and SIGUSR2 cancel the run
// cleanly (checkpointed at the next step); `stop_signal`, when given, receives the signal that
// stopped it other than Ctrl-C (0: none). `quiet` prints only the final line. Throws gllm::Error
// when the run failed.
FinishedRecord drive_run(Trainer& trainer, bool quiet,
                         const std::function<void(RunObserver*)>& launch,
                         int* stop_signal = nullptr);

}  // namespace gllm::cli
