// Runtime facts for `gllm version` and the workbench: which BLAS is really loaded (read from the
// process's own mappings and OpenBLAS's config string), threads in use, CUDA presence.
#include "engine/runtime/runtime.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sched.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>

#include "engine/io/error.h"

namespace gllm {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return 1;
}

void configure_allocator() {
#if defined(__GLIBC__) && defined(M_ARENA_MAX) && defined(M_MMAP_MAX) && defined(M_TRIM_THRESHOLD)
  if (const char* env = std::getenv("GLLM_KEEP_HEAP"); env && std::string(env) == "0") return;
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);  // never trim: the next step wants the same memory
#endif
}

std::string allocator_tunables() {
#if defined(__GLIBC__)
  if (const char* env = std::getenv("GLLM_KEEP_HEAP"); env && std::string(env) == "0") return "";
  // trim_threshold takes a size: the largest one means "never trim", as mallopt's −1 does.
  return "glibc.malloc.arena_max=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=" +
         std::to_string(static_cast<size_t>(-1));
#else
  return "";
#endif
}

namespace {
constexpr int kMaxThreads = 1024;
}  // namespace

int configure_threads(int requested) {
  configure_allocator();
  int n = requested;
  if (n > kMaxThreads)
    throw Error(std::to_string(n) + " threads requested; give at most " +
                std::to_string(kMaxThreads) + " (0 = all cores)");
  if (n <= 0) {
    if (const char* env = std::getenv("GLLM_THREADS"); env && *env) {
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(env, &end, 10);
      if (errno != 0 || end == env || *end != '\0' || v < 0 || v > kMaxThreads)
        throw Error("GLLM_THREADS='" + std::string(env).substr(0, 40) +
                    "' is not a thread count from 0 to " + std::to_string(kMaxThreads) +
                    "; set it to a number of threads (0 = all cores) or unset it");
      n = static_cast<int>(v);
    }
  }
  if (n <= 0) n = available_cores();
  at::set_num_threads(n);
  return at::get_num_threads();
}

namespace {

// The BLAS library mapped into this process (libtorch links libblas.so.3 through Debian's
// alternatives, so the real file is only known at run time).
std::string mapped_blas_library() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::string found;
  while (std::getline(maps, line)) {
    auto pos = line.find('/');
    if (pos == std::string::npos) continue;
    std::string path = line.substr(pos);
    auto name = std::filesystem::path(path).filename().string();
    if (name.find("openblas") != std::string::npos || name.rfind("libblas.so", 0) == 0 ||
        name.find("mkl_core") != std::string::npos) {
      std::error_code ec;
      auto real = std::filesystem::canonical(path, ec);
      found = ec ? path : real.string();
      if (found.find("openblas") != std::string::npos) break;
    }
  }
  return found;
}

}  // namespace

int kernel_threads() {
  std::mutex mutex;
  std::set<int> seen;
  // One iteration per chunk: every thread of the pool gets a share when the loop forks at all.
  at::parallel_for(0, 4 * std::max(1, at::get_num_threads()), 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert(at::get_thread_num());
  });
  return static_cast<int>(seen.size());
}

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.project_version = GLLM_VERSION;
  info.torch_version = TORCH_VERSION;
  info.threads = at::get_num_threads();
  info.kernel_threads = kernel_threads();
  info.cores = available_cores();
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;

  // A tiny matmul makes sure the BLAS is loaded before we look for it.
  auto a = torch::ones({8, 8});
  (void)torch::mm(a, a).sum().item<float>();

  info.blas_library = mapped_blas_library();
  using ConfigFn = char* (*)();
  auto openblas_config = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  if (openblas_config) {
    info.blas = "OpenBLAS";
    info.blas_detail = openblas_config();
  } else if (info.blas_library.find("openblas") != std::string::npos) {
    info.blas = "OpenBLAS";
    info.blas_detail = info.blas_library;
  } else if (info.blas_library.find("mkl") != std::string::npos ||
             dlsym(RTLD_DEFAULT, "mkl_get_version") != nullptr) {
    info.blas = "MKL";
    info.blas_detail = info.blas_library;
  } else if (info.blas_library.find("/blas/libblas") != std::string::npos) {
    info.blas = "reference BLAS";
    info.blas_detail = info.blas_library +
                       " — install libopenblas0-openmp (scripts/setup.sh) for ~10x faster training";
  } else {
    info.blas = "unknown";
    info.blas_detail = info.blas_library;
  }
  return info;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto c = line.find(':');
      if (c == std::string::npos) continue;
      std::string name = line.substr(c + 1);
      const auto b = name.find_first_not_of(" \t"), e = name.find_last_not_of(" \t\r");
      return b == std::string::npos ? "unknown" : name.substr(b, e - b + 1);
    }
  }
  return "unknown";
}

}  // namespace gllm
