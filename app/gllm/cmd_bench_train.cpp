// `gllm bench train`: engine vs PyTorch eager training throughput on a preset, alternating rounds
// in one invocation; prints tokens/s, ratio, GFLOP/s, peak fraction and writes
// bench/results/*.json.
#include <iomanip>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/bench/bench_report.h"
#include "engine/bench/train_bench.h"
#include "engine/config/run_config.h"
#include "engine/io/error.h"
#include "engine/ops/kernel_choice.h"

namespace {

struct TrainBenchArgs {
  std::string preset = "tiny-cpu";
  int steps = 10, warmup = 2, rounds = 3, threads = 0, gemm_n = 1024;
  int64_t vocab = 0;
  bool vs_python = false, vs_unfused = false, json = false, profile = false, no_save = false,
       no_full_step = false, no_gemm_bound = false;
  std::string python, script, out_dir, kernels, kernel_isa;
};

// The per-shape table: each product (or fused kernel) of the step, who ran it and its time alone,
// then the choices the engine made between its kernels and the library.
void print_shapes(const nlohmann::json& j) {
  if (j["gemm_bound"].is_object()) {
    std::cout << "per shape (each product timed alone; × count per step):\n";
    for (const auto& r : j["gemm_bound"]["shapes"]) {
      std::string shape;
      for (const char* side : {"a", "b"}) {
        if (!r.contains(side)) continue;
        std::string dims;
        for (const auto& d : r[side])
          dims += (dims.empty() ? "" : "×") + std::to_string(d.get<int64_t>());
        shape += (shape.empty() ? "" : " · ") + dims;
      }
      if (r.contains("window")) shape += " w" + std::to_string(r["window"].get<int64_t>());
      std::cout << "  " << std::left << std::setw(22) << r["op"].get<std::string>() << std::setw(26)
                << shape << std::right << std::setw(4) << r["count"].get<int>() << "×"
                << std::setw(9) << std::setprecision(3) << r["ms"].get<double>() << " ms"
                << std::setw(8) << std::setprecision(0) << r["gflops"].get<double>()
                << " GFLOP/s\n";
    }
  }
  const auto& k = j["kernels"];
  if (!k.is_object()) return;
  std::cout << "kernels " << gllm::ops::kernels::report_headline(k) << "\n";
  for (const auto& c : k["choices"]) std::cout << "  " << gllm::ops::kernels::choice_row(c) << "\n";
}

void print_train_bench(const nlohmann::json& j, const std::string& saved) {
  auto num = [&](const char* k) {
    return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
  };
  const auto& c = j["config"];
  std::cout << std::fixed << std::setprecision(0);
  std::cout << "preset " << j["preset"].get<std::string>() << ": " << c["n_layer"]
            << " layers, width " << c["n_embd"] << ", " << c["device_batch"] << "×"
            << c["sequence_len"] << " tokens/step, vocab " << c["vocab_size"] << "; "
            << j["threads"] << " threads, " << j["rounds"] << " rounds × " << j["steps"]
            << " steps\n"
            << "step: " << j["step"].get<std::string>() << "\n";
  std::cout << "engine            " << num("engine_tokens_per_s") << " tok/s  "
            << std::setprecision(1) << num("engine_gflops") << " GFLOP/s";
  if (num("gemm_peak_gflops") > 0)
    std::cout << "  (" << std::setprecision(1) << 100 * num("peak_fraction") << " % of the "
              << std::setprecision(0) << num("gemm_peak_gflops") << " GFLOP/s " << j["gemm_n"]
              << "² GEMM peak, best of the rounds; median " << num("gemm_median_gflops") << ")";
  std::cout << "\n";
  if (j["gemm_bound"].is_object()) {
    const auto& g = j["gemm_bound"];
    std::cout << std::setprecision(1) << "GEMM-bound          its " << g["products_per_step"]
              << " matrix products alone: " << g["gemm_ms"].get<double>() << " ms/step at "
              << std::setprecision(0) << g["gemm_gflops"].get<double>() << " GFLOP/s; step "
              << std::setprecision(1) << g["step_ms"].get<double>() << " ms → "
              << 100 * g["fraction"].get<double>() << " % of the step is GEMM-bound time\n";
    if (g.contains("peak_fraction_ceiling") && g["peak_fraction_ceiling"].get<double>() > 0)
      std::cout << "                    products alone, the step would reach "
                << 100 * g["peak_fraction_ceiling"].get<double>()
                << " % of the peak (the ceiling of its fraction)\n";
  }
  if (j.contains("fusion_speedup"))
    std::cout << std::setprecision(0) << "engine, fused ops off  " << num("unfused_tokens_per_s")
              << " tok/s  (fused " << std::setprecision(3) << num("fusion_speedup")
              << "× faster)\n";
  if (j.contains("ratio")) {
    std::cout << std::setprecision(0) << "PyTorch eager     " << num("python_tokens_per_s")
              << " tok/s  " << std::setprecision(1) << num("python_gflops") << " GFLOP/s  ("
              << 100 * num("python_peak_fraction") << " %; "
              << j["python_implementation"].get<std::string>() << ")\n"
              << std::setprecision(3) << "ratio (engine / PyTorch)  " << num("ratio") << "\n"
              << std::setprecision(6) << "loss engine " << num("loss_engine") << ", PyTorch "
              << num("loss_python") << ", reference " << num("loss_reference") << "\n";
  }
  if (j["full_step"].is_object())
    std::cout << std::setprecision(0) << "engine full step with MuonAdamW  "
              << j["full_step"]["tokens_per_s"].get<double>() << " tok/s (optimizer "
              << std::setprecision(1) << j["full_step"]["optimizer_ms"].get<double>() << " ms)\n";
  if (j["gemm_bound"].is_object() && j["gemm_bound"]["gemm_ms"].get<double>() > 0)
    std::cout << std::setprecision(3) << "step / its own products alone  "
              << j["gemm_bound"]["step_ms"].get<double>() / j["gemm_bound"]["gemm_ms"].get<double>()
              << "\n";
  std::cout << std::setprecision(1) << "engine phases (ms/step):";
  for (auto& [k, v] : j["phases_ms"].items()) std::cout << " " << k << " " << v.get<double>();
  std::cout << "\n";
  if (j["profile"].is_object()) {
    for (auto& [side, rows] : j["profile"].items()) {
      std::cout << "top ops, " << side << " (self ms/step, calls/step):\n";
      int n = 0;
      for (const auto& r : rows) {
        if (n++ >= 15) break;
        std::cout << "  " << std::setw(8) << std::setprecision(2) << r["self_ms"].get<double>()
                  << "  " << std::setw(5) << std::setprecision(0) << r["calls"].get<double>()
                  << "  " << r["op"].get<std::string>() << "\n";
      }
    }
  }
  print_shapes(j);
  if (!saved.empty()) std::cout << "saved " << saved << "\n";
  std::cout.flush();
}

gllm::cli::RegisterSubcommand reg_bench_train("bench", "train", [](CLI::App& group) {
  auto o = std::make_shared<TrainBenchArgs>();
  auto* cmd = group.add_subcommand("train",
                                   "Training throughput: engine vs PyTorch eager (alternating "
                                   "rounds), GFLOP/s and GEMM-peak fraction");
  cmd->add_option("--preset", o->preset, "Preset name or RunConfig JSON path")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Timed steps per side per round")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed steps before each side's timed steps")
      ->capture_default_str();
  cmd->add_option("--rounds", o->rounds, "Alternating rounds (medians are reported)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Intra-op threads for both sides (0 = GLLM_THREADS or all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--vocab", o->vocab,
                  "Vocabulary size (0 = the config's data.vocab_size); tokens are random")
      ->capture_default_str();
  cmd->add_option("--gemm-n", o->gemm_n,
                  "Size N of the N×N fp32 GEMM measuring the peak (0 = skip)")
      ->capture_default_str();
  cmd->add_flag("--vs-python", o->vs_python,
                "Also run the PyTorch eager script (tests/python/bench_train_reference.py)");
  cmd->add_option("--python", o->python,
                  "Python interpreter with torch (default /usr/bin/python3)");
  cmd->add_option("--script", o->script,
                  "Path of bench_train_reference.py (default: the source tree's)");
  cmd->add_flag("--profile", o->profile, "Op-level profile of both sides (self time per op)");
  cmd->add_flag("--no-gemm-bound", o->no_gemm_bound,
                "Skip timing the step's own matrix products alone");
  cmd->add_flag("--vs-unfused", o->vs_unfused,
                "Also time the engine with its own CPU kernels (RMSNorm, RoPE, ReLU², attention, "
                "panel products) off");
  cmd->add_flag("--no-full-step", o->no_full_step,
                "Skip timing the engine's full step with MuonAdamW");
  cmd->add_option("--out-dir", o->out_dir,
                  "Folder for the result file (default: the source tree's bench/results)");
  cmd->add_option("--kernels", o->kernels,
                  "Who runs each product and fused kernel: measure (time both per shape, the "
                  "default; GLLM_KERNELS), own (the engine's) or library (ATen and the BLAS)")
      ->check(CLI::IsMember({"measure", "own", "library"}));
  cmd->add_option("--kernel-isa", o->kernel_isa,
                  "Run the engine's kernels at this ISA: portable, avx2 or avx512 (default the "
                  "widest the CPU runs; GLLM_KERNEL_ISA)")
      ->check(CLI::IsMember({"portable", "avx2", "avx512"}));
  cmd->add_flag("--no-save", o->no_save, "Do not write a result file");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->callback([o] {
    namespace kernels = gllm::ops::kernels;
    if (!o->kernels.empty()) kernels::set_mode(kernels::parse_mode(o->kernels, "--kernels"));
    if (!o->kernel_isa.empty()) kernels::set_isa(kernels::parse_isa(o->kernel_isa, "--kernel-isa"));
    gllm::bench::TrainBenchOptions b;
    b.config = gllm::RunConfig::load(gllm::resolve_preset_path(o->preset));
    b.preset = o->preset;
    b.steps = o->steps;
    b.warmup = o->warmup;
    b.rounds = o->rounds;
    b.threads = o->threads;
    b.vocab_size = o->vocab;
    b.vs_python = o->vs_python;
    b.vs_unfused = o->vs_unfused;
    b.python = o->python;
    b.script = o->script;
    b.profile = o->profile;
    b.full_step = !o->no_full_step;
    b.gemm_bound = !o->no_gemm_bound;
    b.gemm_n = o->gemm_n;
    if (o->gemm_n < 0) throw gllm::Error("--gemm-n must be ≥ 0");
    auto j = gllm::bench::run_train_bench(b, [&](const std::string& s) {
      if (!o->json)
        std::cout << s << std::endl;
      else
        std::cerr << s << std::endl;
    });
    std::string saved;
    if (!o->no_save) {
      std::string name = b.config.name.empty() ? "run" : b.config.name;
      saved = gllm::bench::write_result(
          o->out_dir.empty() ? gllm::bench::results_dir() : o->out_dir, "train-" + name, j);
      j["saved"] = saved;
    }
    if (o->json)
      gllm::cli::print_json(j);
    else
      print_train_bench(j, saved);
  });
});

}  // namespace
