// The JSON form of each event record (events.h): one to_json per record, used for metrics.jsonl
// lines, summary.json and the CLI's --json output alike.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/train/events.h"

namespace gllm {

// A metrics.jsonl step line: step, tokens, loss, lr_scale, tokens_per_s, peak_mem_mib, wall_s,
// flops.
nlohmann::json to_json(const StepRecord& r);

// A metrics.jsonl evaluation line: the split names its keys ("val_bpb", "val_loss" or
// "heldout_bpb", "heldout_loss") so one line says which split it scored.
nlohmann::json to_json(const EvalRecord& r);

// The end of a run: status, step, tokens, final loss, BPBs (null when none), throughput, memory,
// wall time, message; run_dir when set. summary.json is this plus the run's context.
nlohmann::json to_json(const FinishedRecord& r);

}  // namespace gllm
