// One JSON conversion per event record (see events_json.h); readers go through the type-checked
// accessors of engine/io/json_read.h, so a hand-edited file cannot throw a raw json exception.
#include "engine/train/events_json.h"

#include <cmath>

#include "engine/io/json_read.h"

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
          {"wall_s", r.wall_s},
          {"flops", r.flops}};
}

StepRecord step_record_from_json(const nlohmann::json& j) {
  StepRecord r;
  r.step = json_int_or(j, "step", r.step);
  r.tokens = json_int_or(j, "tokens", r.tokens);
  r.loss = json_number_or(j, "loss", r.loss);
  r.lr_scale = json_number_or(j, "lr_scale", r.lr_scale);
  r.tokens_per_s = json_number_or(j, "tokens_per_s", r.tokens_per_s);
  r.peak_mem_mib = json_number_or(j, "peak_mem_mib", r.peak_mem_mib);
  r.wall_s = json_number_or(j, "wall_s", r.wall_s);
  r.flops = json_number_or(j, "flops", r.flops);
  return r;
}

nlohmann::json to_json(const EvalRecord& r) {
  return {{"step", r.step},
          {"tokens", r.tokens},
          {r.split + "_bpb", r.bpb},
          {r.split + "_loss", r.loss},
          {"eval_tokens", r.eval_tokens},
          {"wall_s", r.wall_s}};
}

bool eval_record_from_json(const nlohmann::json& j, const std::string& split, EvalRecord* out) {
  const std::string bpb_key = split + "_bpb", loss_key = split + "_loss";
  if (!j.is_object() || !j.contains(bpb_key) || !j[bpb_key].is_number()) return false;
  EvalRecord r;
  r.split = split;
  r.step = json_int_or(j, "step", r.step);
  r.tokens = json_int_or(j, "tokens", r.tokens);
  r.bpb = json_number_or(j, bpb_key.c_str(), r.bpb);
  r.loss = json_number_or(j, loss_key.c_str(), r.loss);
  r.eval_tokens = json_int_or(j, "eval_tokens", r.eval_tokens);
  r.wall_s = json_number_or(j, "wall_s", r.wall_s);
  *out = r;
  return true;
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
                      {"wall_s", r.wall_s},
                      {"message", r.message}};
  if (!r.run_dir.empty()) j["run_dir"] = r.run_dir;
  return j;
}

FinishedRecord finished_record_from_json(const nlohmann::json& j) {
  FinishedRecord r;
  r.run_dir = json_string_or(j, "run_dir", r.run_dir);
  r.status = json_string_or(j, "status", r.status);
  r.step = json_int_or(j, "step", r.step);
  r.tokens = json_int_or(j, "tokens", r.tokens);
  r.final_loss = json_number_or(j, "final_loss", NAN);
  r.val_bpb = json_number_or(j, "val_bpb", -1);
  r.heldout_bpb = json_number_or(j, "heldout_bpb", -1);
  r.tokens_per_s = json_number_or(j, "tokens_per_s", r.tokens_per_s);
  r.peak_mem_mib = json_number_or(j, "peak_mem_mib", r.peak_mem_mib);
  r.analytic_mem_mib = json_number_or(j, "analytic_mem_mib", r.analytic_mem_mib);
  r.wall_s = json_number_or(j, "wall_s", r.wall_s);
  r.message = json_string_or(j, "message", r.message);
  return r;
}

}  // namespace gllm
