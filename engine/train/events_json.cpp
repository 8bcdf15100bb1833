// One JSON conversion per event record (see events_json.h): the keys metrics.jsonl, summary.json
// and `gllm train --json` share, unset figures written as null.
#include "engine/train/events_json.h"

#include <cmath>

namespace gllm {
namespace {

// A BPB or loss that is unset (-1) or not finite is written as null.
nlohmann::json optional_number(double v, bool allow_negative = false) {
  if (!std::isfinite(v) || (!allow_negative && v < 0)) return nullptr;
  return v;
}

}  // namespace

nlohmann::json to_json(const StepRecord& r) {
  return {{"step", r.step},
          {"tokens", r.tokens},
          {"loss", r.loss},
          {"lr_scale", r.lr_scale},
          {"tokens_per_s", r.tokens_per_s},
          {"peak_mem_mib", r.peak_mem_mib},
          {"estimate_mem_mib", r.estimate_mem_mib},
          {"wall_s", r.wall_s},
          {"flops", r.flops}};
}

nlohmann::json to_json(const EvalRecord& r) {
  return {{"step", r.step},
          {"tokens", r.tokens},
          {r.split + "_bpb", r.bpb},
          {r.split + "_loss", r.loss},
          {"eval_tokens", r.eval_tokens},
          {"wall_s", r.wall_s}};
}

nlohmann::json to_json(const FinishedRecord& r) {
  nlohmann::json j = {{"status", r.status},
                      {"step", r.step},
                      {"tokens", r.tokens},
                      {"final_loss", optional_number(r.final_loss, true)},
                      {"val_bpb", optional_number(r.val_bpb)},
                      {"heldout_bpb", optional_number(r.heldout_bpb)},
                      {"tokens_per_s", r.tokens_per_s},
                      {"peak_mem_mib", r.peak_mem_mib},
                      {"analytic_mem_mib", r.analytic_mem_mib},
                      {"resident_start_mib", r.resident_start_mib},
                      {"estimate_mem_mib", r.estimate_mem_mib},
                      {"wall_s", r.wall_s},
                      {"train_s", r.train_s},
                      {"loader_s", r.loader_s},
                      {"message", r.message}};
  if (r.val_bpb_step >= 0) j["val_bpb_step"] = r.val_bpb_step;
  if (!r.run_dir.empty()) j["run_dir"] = r.run_dir;
  return j;
}

}  // namespace gllm
