// `gllm version [--json]`: project and LibTorch versions, the BLAS really loaded, threads, CUDA,
// what scaling out can use (c10d Gloo / NCCL, the attention operator), and the kernels' ISA, the
// BLAS core type and the per-shape kernel choices cached for this machine. The test suite fails
// when this reports the reference BLAS instead of OpenBLAS.
#include <iomanip>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/dist/scale_info.h"
#include "engine/ops/kernel_choice.h"
#include "engine/runtime/runtime.h"

namespace {

// The kernels' lines: ISA, BLAS core, the choice mode, and the per-shape choices cached here.
void print_kernels(const nlohmann::json& k) {
  const std::string coretype =
      k["openblas_coretype"].is_string() ? k["openblas_coretype"].get<std::string>() : "unset";
  const std::string core = k["blas_core_type"].get<std::string>();
  std::cout << "kernels  " << k["isa"].get<std::string>() << " (CPU runs "
            << k["cpu_isa"].get<std::string>() << "), choice by " << k["mode"].get<std::string>()
            << "; BLAS core " << (core.empty() ? "not reported" : core) << ", OPENBLAS_CORETYPE "
            << coretype << "\n";
  const auto& cached = k["cached"];
  if (cached.empty()) {
    std::cout << "         no per-shape choices cached yet (made at first use, kept in "
              << k["cache_file"].get<std::string>() << ")\n";
    return;
  }
  std::cout << "         per-shape choices (" << k["cache_file"].get<std::string>() << "):\n";
  for (const auto& c : cached)
    std::cout << "         " << std::left << std::setw(22) << c["op"].get<std::string>()
              << std::right << std::setw(16)
              << (std::to_string(c["m"].get<int64_t>()) + "×" +
                  std::to_string(c["k"].get<int64_t>()) +
                  (c["n"].get<int64_t>() > 0 ? "×" + std::to_string(c["n"].get<int64_t>()) : ""))
              << "  " << c["isa"].get<std::string>() << " t" << c["threads"].get<int>() << "  "
              << std::left << std::setw(8) << c["side"].get<std::string>() << std::right
              << std::fixed << std::setprecision(3) << " own " << c["own_ms"].get<double>()
              << " ms, library " << c["library_ms"].get<double>() << " ms\n";
}

gllm::cli::RegisterCommand reg("version", [](CLI::App& root) {
  auto* cmd = root.add_subcommand("version",
                                  "Print versions, the BLAS in use, threads and CUDA availability");
  auto json = std::make_shared<bool>(false);
  auto threads = std::make_shared<int>(0);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->add_option("--threads", *threads, "Threads to configure before reporting (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->callback([json, threads] {
    gllm::configure_threads(*threads);
    auto info = gllm::runtime_info();
    const auto scale = gllm::dist::scale_info();
    const auto kernels = gllm::ops::kernels::report(/*with_cache=*/true);
    if (*json) {
      gllm::cli::print_json({{"version", info.project_version},
                             {"torch", info.torch_version},
                             {"blas", info.blas},
                             {"blas_detail", info.blas_detail},
                             {"blas_library", info.blas_library},
                             {"threads", info.threads},
                             {"kernel_threads", info.kernel_threads},
                             {"cores", info.cores},
                             {"cuda", info.cuda_available},
                             {"cuda_devices", info.cuda_devices},
                             {"cuda_build", scale.cuda_build},
                             {"c10d_gloo", scale.gloo},
                             {"c10d_nccl", scale.nccl},
                             {"sdpa_operator", scale.sdpa_operator},
                             {"kernels", kernels}});
      return;
    }
    std::cout << "gllm " << info.project_version << "\n"
              << "LibTorch " << info.torch_version << "\n"
              << "BLAS     " << info.blas << " (" << info.blas_detail << ")\n"
              << "threads  " << info.threads << " of " << info.cores << " cores (engine kernels on "
              << info.kernel_threads << ")\n"
              << "CUDA     "
              << (info.cuda_available ? std::to_string(info.cuda_devices) + " device(s)"
                                      : "not available")
              << (scale.cuda_build ? " (CUDA build)" : "") << "\n"
              << "c10d     " << (scale.gloo ? "Gloo" : "no Gloo") << ", "
              << (scale.nccl ? "NCCL" : "no NCCL") << "\n"
              << "SDPA     " << (scale.sdpa_operator.empty() ? "none" : scale.sdpa_operator)
              << "\n";
    print_kernels(kernels);
    std::cout.flush();
  });
});

}  // namespace
