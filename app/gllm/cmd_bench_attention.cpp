// `gllm bench attention`: graded vs standard attention (forward + backward) over lengths × widths,
// the overhead grid the GUI shows as a heat map, and the compiled model's ratio; writes
// bench/results/*.json.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/gllm/command_registry.h"
#include "engine/bench/attention_bench.h"
#include "engine/bench/bench_report.h"
#include "engine/config/run_config.h"
#include "engine/io/error.h"

namespace {

struct AttentionBenchArgs {
  std::vector<int> lengths{128, 256, 512, 1024, 2048, 4096};
  std::vector<int> widths{128, 256, 512};
  int head_dim = 64, batch = 1, repeats = 11, threads = 0;
  std::string preset = "tiny-cpu", out_dir;
  bool json = false, no_save = false, no_compiled = false;
};

void print_attention_bench(const nlohmann::json& j, const std::string& saved) {
  std::cout << "overhead of graded over standard attention, forward + backward (%), head dim "
            << j["head_dim"] << ", batch " << j["batch"] << ", median of " << j["repeats"]
            << " paired runs, " << j["threads"] << " threads\n";
  std::cout << std::setw(8) << "d \\ n";
  for (const auto& n : j["lengths"]) std::cout << std::setw(9) << n.get<int>();
  std::cout << "\n" << std::fixed << std::setprecision(2);
  for (size_t r = 0; r < j["widths"].size(); ++r) {
    std::cout << std::setw(8) << j["widths"][r].get<int>();
    for (const auto& v : j["overhead"][r]) std::cout << std::setw(9) << 100 * v.get<double>();
    std::cout << "\n";
  }
  std::cout << "standard ms:\n";
  for (size_t r = 0; r < j["widths"].size(); ++r) {
    std::cout << std::setw(8) << j["widths"][r].get<int>();
    for (const auto& v : j["standard_ms"][r]) std::cout << std::setw(9) << v.get<double>();
    std::cout << "\n";
  }
  if (!j["meets_target"].is_null())
    std::cout << "target ≤ 3 % at n = 2048: " << (j["meets_target"].get<bool>() ? "met" : "NOT met")
              << "\n";
  if (j["compiled"].is_object()) {
    const auto& c = j["compiled"];
    std::cout << std::setprecision(3) << "compiled model (" << c["preset"].get<std::string>()
              << ", forward): ratio " << c["ratio"].get<double>()
              << " to the standard model (target 1.00); graded model "
              << c["graded_ratio"].get<double>() << "; max |Δ logit| " << std::scientific
              << std::setprecision(2) << c["max_abs_logit_diff"].get<double>() << std::fixed
              << "\n";
  }
  if (!saved.empty()) std::cout << "saved " << saved << "\n";
  std::cout.flush();
}

gllm::cli::RegisterSubcommand reg_bench_attention("bench", "attention", [](CLI::App& group) {
  auto o = std::make_shared<AttentionBenchArgs>();
  auto* cmd = group.add_subcommand("attention",
                                   "Graded vs standard attention cost over sequence lengths and "
                                   "widths (Prop. 4), and the compiled model's ratio");
  cmd->add_option("--lengths", o->lengths, "Sequence lengths n")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--widths", o->widths, "Model widths d (multiples of the head dim)")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--head-dim", o->head_dim, "Head dimension")->capture_default_str();
  cmd->add_option("--batch", o->batch, "Sequences per forward")->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "Paired repetitions per cell (medians reported)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Intra-op threads (0 = GLLM_THREADS or all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--preset", o->preset,
                  "Preset whose model is compiled for the compiled-model ratio")
      ->capture_default_str();
  cmd->add_flag("--no-compiled", o->no_compiled, "Skip the compiled-model ratio");
  cmd->add_option("--out-dir", o->out_dir,
                  "Folder for the result file (default: the source tree's bench/results)");
  cmd->add_flag("--no-save", o->no_save, "Do not write a result file");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->callback([o] {
    gllm::bench::AttentionBenchOptions b;
    b.lengths = o->lengths;
    b.widths = o->widths;
    b.head_dim = o->head_dim;
    b.batch = o->batch;
    b.repeats = o->repeats;
    b.threads = o->threads;
    b.compiled = !o->no_compiled;
    b.preset = o->preset;
    if (b.compiled) b.compiled_config = gllm::RunConfig::load(gllm::resolve_preset_path(o->preset));
    auto j = gllm::bench::run_attention_bench(
        b, [&](const std::string& s) { (o->json ? std::cerr : std::cout) << s << std::endl; });
    std::string saved;
    if (!o->no_save) {
      saved = gllm::bench::write_result(
          o->out_dir.empty() ? gllm::bench::results_dir() : o->out_dir, "attention", j);
      j["saved"] = saved;
    }
    if (o->json)
      gllm::cli::print_json(j);
    else
      print_attention_bench(j, saved);
  });
});

}  // namespace
