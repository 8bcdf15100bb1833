// `gllm params`: analytic parameter counts, memory deltas and FLOPs per step (seed 001 Table 1b)
// for a preset or a baseline DEPTH, e.g. `gllm params --depth 6 --vocab 8192 --oe-m 150855 --json`.
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "app/gllm/command_registry.h"
#include "engine/config/run_config.h"
#include "engine/io/error.h"
#include "engine/model/cost.h"

namespace {

struct ParamsArgs {
  std::string preset;
  int depth = 0;
  int64_t vocab = 0;
  int64_t oe_m = -1;
  int64_t tokens = 0;
  bool json = false;
};

std::string grouped(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string gflops(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", f / 1e9);
  return buf;
}

void run_params(const ParamsArgs& a) {
  gllm::RunConfig cfg;
  if (!a.preset.empty()) {
    if (a.depth > 0) throw gllm::Error("give either a preset or --depth, not both");
    cfg = gllm::RunConfig::load(gllm::resolve_preset_path(a.preset));
  } else if (a.depth > 0) {
    cfg.name = "depth-" + std::to_string(a.depth);
    cfg.model.depth = a.depth;
    cfg.model.storage = "bf16";  // seed 001 stores wte, value_embeds and the hashed tables in bf16
    cfg.model.sequence_len = 2048;  // the paper's batch: 64 × 2048 tokens × 4 micro-steps
    cfg.train.device_batch = 64;
    cfg.train.grad_accum = 4;
  } else {
    throw gllm::Error(
        "name a preset (gllm params tiny-cpu) or a baseline depth (gllm params --depth 6 --vocab "
        "8192)");
  }
  if (a.oe_m >= 0) cfg.model.oe_m = a.oe_m;
  int64_t vocab = a.vocab > 0                ? a.vocab
                  : cfg.model.vocab_size > 0 ? cfg.model.vocab_size
                                             : cfg.data.vocab_size;
  if (vocab <= 0) vocab = 8192;
  const auto acc = gllm::account(cfg, vocab, a.tokens);
  if (a.json) {
    auto j = gllm::to_json(acc);
    j["name"] = cfg.name;
    j["vocab_size"] = vocab;
    j["depth"] = cfg.model.depth;
    j["n_layer"] = cfg.model.layers();
    j["d_model"] = cfg.model.width();
    j["oe_m"] = cfg.model.oe_m;
    gllm::cli::print_json(j);
    return;
  }
  const auto& p = acc.params;
  std::ostringstream o;
  o << cfg.name << ": " << cfg.model.layers() << " layers, d=" << cfg.model.width()
    << ", V=" << vocab
    << (cfg.model.oe_m > 0 ? ", oe_m=" + std::to_string(cfg.model.oe_m) : std::string()) << "\n"
    << "  scaling params    " << grouped(p.scaling_params) << "\n"
    << "  OE rows / params  " << grouped(p.oe_rows) << " / " << grouped(p.oe_params) << "\n"
    << "  total params      " << grouped(p.total_params) << "\n"
    << std::fixed << std::setprecision(2) << "  memory (MiB)      OE tables "
    << acc.memory.oe_tables << ", FP32 embedding state " << acc.memory.fp32_embedding_state
    << ", this config +" << acc.memory.delta << "\n"
    << "  GFLOPs/step       model " << gflops(acc.flops.model) << ", OE lookup "
    << gflops(acc.flops.oe_lookup) << ", OE update " << gflops(acc.flops.oe_update) << ", BiEq "
    << gflops(acc.flops.bieq) << ", Neumann-Gram (" << acc.neumann_tables << " tables) "
    << gflops(acc.flops.neumann_gram) << ", query scale " << gflops(acc.flops.query_scale) << "\n"
    << "  extra this config " << gflops(acc.flops.extra) << " GFLOPs/step\n";
  std::cout << o.str();
}

gllm::cli::RegisterCommand reg_params("params", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "params", "Parameter counts, memory deltas and FLOPs per step (seed 001 Table 1b)");
  auto a = std::make_shared<ParamsArgs>();
  cmd->add_option("preset", a->preset, "Preset name or RunConfig JSON path");
  using gllm::cli::add_count_option;
  add_count_option(cmd, "--depth", a->depth,
                   "Baseline DEPTH (width 64·DEPTH rounded up to 128, head dim 128)", 1, 64);
  add_count_option(cmd, "--vocab", a->vocab, "Vocabulary size (default: the config's, else 8192)",
                   1, 100000000);
  add_count_option(cmd, "--oe-m", a->oe_m, "Hashed n-gram table modulus m (0 = no tables)", 0,
                   1000000000);
  add_count_option(cmd, "--tokens", a->tokens,
                   "Tokens per optimizer step for FLOPs (default: batch × sequence × grad_accum)",
                   1, 1000000000000);
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { run_params(*a); });
});

}  // namespace
