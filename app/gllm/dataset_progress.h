// What `gllm data prepare` and `gllm data import` print while they work and when they are done:
// a progress line on stderr (redrawn on a terminal, every tenth in a log) and the splits table.
#pragma once
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/dataset/prepare.h"

namespace gllm::cli {

// Runs a prepare or an import (`work`, given the hooks): news lines and a progress line on stderr
// unless `quiet` (news) or `quiet_progress` (the line), Ctrl-C as the hooks' stop flag (the work
// stops at its next document or shard). Returns its result; `seconds` gets the time it took.
PrepareResult run_dataset_work(bool quiet, bool quiet_progress,
                               const std::function<PrepareResult(const PrepareHooks&)>& work,
                               double* seconds);

// The manifest's splits: documents, tokens, bytes, bytes per token and shards of each.
void print_dataset_splits(const nlohmann::json& manifest);

// Progress on stderr: on a terminal one line redrawn at most five times a second; elsewhere (a
// batch job's log, a pipe) a line per stage and then every tenth of it or every 30 s, whichever
// comes first, so a log shows where a long prepare stands without a line per document.
class DatasetProgressLine {
 public:
  explicit DatasetProgressLine(bool on);
  void update(const PrepareProgress& p);
  void clear();

 private:
  void log_line(const PrepareProgress& p, std::chrono::steady_clock::time_point now);

  bool on_, tty_;
  bool drawn_ = false;
  int last_tenth_ = -1;
  std::string last_stage_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gllm::cli
