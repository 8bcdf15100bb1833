// `gllm check gpu [--json] [--device cpu]`: the GPU checks (graded GPT on CUDA vs CPU, bf16
// autocast, compile-to-standard on GPU, SDPA vs masked softmax, CUDA peak memory); non-zero exit on
// a failure.
#include <iomanip>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/runtime/runtime.h"
#include "engine/train/gpu_check.h"

namespace {

gllm::cli::RegisterSubcommand reg_check("check", "gpu", [](CLI::App& group) {
  auto* cmd = group.add_subcommand(
      "gpu", "Run the GPU checks; prints \"skipped: no CUDA device\" (exit 0) without one");
  auto json = std::make_shared<bool>(false);
  auto device = std::make_shared<std::string>("cuda");
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->add_option("--device", *device,
                  "cuda (default) or cpu: run the checks against the CPU as a self-test")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->callback([json, device] {
    gllm::configure_threads(0);
    gllm::dist::GpuCheckOptions o;
    o.device = *device;
    auto rep = gllm::dist::run_gpu_checks(o);
    if (*json) {
      gllm::cli::print_json(rep.to_json());
    } else if (!rep.skipped.empty()) {
      std::cout << "skipped: " << rep.skipped << std::endl;
    } else {
      std::cout << "GPU checks on " << rep.device << "\n";
      for (const auto& c : rep.checks)
        std::cout << "  " << std::left << std::setw(8) << c.status << std::setw(26) << c.name
                  << c.detail << "\n";
      std::cout << (rep.passed() ? "all checks passed" : "SOME CHECKS FAILED") << std::endl;
    }
    if (!rep.passed()) {
      std::string failed;
      for (const auto& c : rep.checks)
        if (c.status == "fail") failed += (failed.empty() ? "" : ", ") + c.name;
      throw gllm::Error("GPU checks failed: " + failed + "; see the figures above");
    }
  });
});

}  // namespace
