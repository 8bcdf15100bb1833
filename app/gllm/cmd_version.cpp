// `gllm version [--json]`: project and LibTorch versions, the BLAS really loaded, threads, CUDA,
// what scaling out can use (c10d Gloo / NCCL, the attention operator), and the kernels' ISA, the
// BLAS core type and the per-shape kernel choices cached for this machine. The test suite fails
// when this reports the reference BLAS instead of OpenBLAS.
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/dist/scale_info.h"
#include "engine/ops/kernel_choice.h"
#include "engine/runtime/runtime.h"

namespace {

// The kernels' lines: ISA, BLAS core, the choice mode, and the per-shape choices cached here.
void print_kernels(const nlohmann::json& k) {
  namespace kernels = gllm::ops::kernels;
  std::cout << "kernels  " << kernels::report_headline(k) << "\n";
  const std::string file = k["cache_file"].get<std::string>();
  if (k["cached"].empty()) {
    std::cout << "         no per-shape choices cached yet (made at first use, kept in " << file
              << ")\n";
    return;
  }
  std::cout << "         per-shape choices (" << file << "):\n";
  for (const auto& c : k["cached"]) std::cout << "         " << kernels::choice_row(c) << "\n";
}

gllm::cli::RegisterCommand reg_version("version", [](CLI::App& root) {
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
