// Device selection, the bf16 autocast scope and CUDA allocator statistics. CUDA-only calls compile
// only when the build defines GLLM_WITH_CUDA (a CUDA LibTorch) and are guarded at run time too.
#include "engine/dist/device.h"

#include <ATen/autocast_mode.h>
#include <sys/resource.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdio>

#include "engine/dist/process_group.h"
#include "engine/dist/scale_info.h"
#include "engine/io/error.h"
#include "engine/ops/sdpa.h"
#include "engine/runtime/torch_compat.h"

#if defined(GLLM_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define GLLM_DIST_CUDA_ALLOCATOR 1
#endif

namespace gllm::dist {
namespace {

using compat::autocast_dtype;
using compat::autocast_enabled;
using compat::set_autocast;

bool wants_autocast(const torch::Device& device, const std::string& dtype) {
  if (dtype != "bf16" && dtype != "fp32")
    throw Error("train.dtype is \"" + dtype + "\"; use \"fp32\" or \"bf16\"");
  return dtype == "bf16" && (device.is_cuda() || device.is_cpu());
}

}  // namespace

bool cuda_available() {
  return torch::cuda::is_available() && torch::cuda::device_count() > 0;
}

torch::Device select_device(const std::string& requested, int local_rank) {
  if (requested == "cpu") return torch::Device(torch::kCPU);
  if (requested != "cuda" && requested != "auto")
    throw Error("train.device is \"" + requested + "\"; use \"auto\", \"cpu\" or \"cuda\"");
  if (!cuda_available()) {
    if (requested == "auto") return torch::Device(torch::kCPU);
    throw Error(
        std::string("train.device is \"cuda\" but this LibTorch (") + TORCH_VERSION +
        (torch_build().cuda_build ? ", built with CUDA" : ", a CPU-only build") +
        ") sees no CUDA device; set train.device to \"cpu\" or \"auto\", or run on a GPU machine "
        "with a CUDA LibTorch (scripts/device-check.sh)");
  }
  const int n = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA,
                       static_cast<c10::DeviceIndex>(local_rank < 0 ? 0 : local_rank % n));
}

AutocastScope::AutocastScope(const torch::Device& device, const std::string& dtype) {
  if (wants_autocast(device, dtype)) open(device.type(), at::kBFloat16);
}

AutocastScope::AutocastScope(const torch::Device& device, c10::ScalarType dtype) {
  const bool cpu = device.is_cpu() && dtype == at::kBFloat16;
  const bool cuda = device.is_cuda() && (dtype == at::kBFloat16 || dtype == at::kHalf);
  if (!cpu && !cuda)
    throw Error(std::string("autocast to ") + c10::toString(dtype) + " on " + device.str() +
                " is not offered; use bf16 on the CPU, bf16 or fp16 on CUDA");
  open(device.type(), dtype);
}

void AutocastScope::open(c10::DeviceType type, c10::ScalarType dtype) {
  type_ = type;
  prev_enabled_ = autocast_enabled(type);
  prev_dtype_ = autocast_dtype(type);
  set_autocast(type, true, dtype);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // Leaving the outermost autocast region frees the cached low-precision weight casts.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(type_, prev_enabled_, prev_dtype_);
}

bool autocast_active(const torch::Device& device) {
  if (!device.is_cpu() && !device.is_cuda()) return false;
  return autocast_enabled(device.type());
}

CudaMemory cuda_memory([[maybe_unused]] int device_index) {
  CudaMemory m;
#ifdef GLLM_DIST_CUDA_ALLOCATOR
  if (cuda_available()) {
    auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(device_index);
    // StatType::AGGREGATE (all pools) is index 0 in every release; the enum itself moved from
    // c10::cuda::CUDACachingAllocator (1.13) to c10::CachingAllocator (2.x), so it is not named
    // here.
    const size_t all = 0;
    m.available = true;
    m.allocated = s.allocated_bytes[all].current;
    m.peak_allocated = s.allocated_bytes[all].peak;
    m.reserved = s.reserved_bytes[all].current;
    m.peak_reserved = s.reserved_bytes[all].peak;
  }
#endif
  return m;
}

double measured_peak_mib(const torch::Device& device) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (device.is_cuda()) {
    const CudaMemory m = cuda_memory(device.has_index() ? device.index() : 0);
    if (m.available) return static_cast<double>(m.peak_allocated) / kMiB;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double resident_mib() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

void reset_cuda_peak([[maybe_unused]] int device_index) {
#ifdef GLLM_DIST_CUDA_ALLOCATOR
  if (cuda_available()) c10::cuda::CUDACachingAllocator::resetPeakStats(device_index);
#endif
}

void cuda_synchronize() {
  if (cuda_available()) torch::cuda::synchronize();
}

TorchBuild torch_build() {
  TorchBuild b;
  b.version = TORCH_VERSION;
#ifdef GLLM_DIST_CUDA_ALLOCATOR
  b.cuda_build = true;
#endif
  b.gloo = gloo_compiled();
  b.nccl = nccl_compiled();
  b.sdpa = ops::sdpa_available();
  return b;
}

ScaleInfo scale_info() {
  const TorchBuild b = torch_build();
  ScaleInfo info;
  info.cuda_build = b.cuda_build;
  info.gloo = b.gloo;
  info.nccl = b.nccl;
  if (b.sdpa) info.sdpa_operator = ops::sdpa_operator_name();
  return info;
}

}  // namespace gllm::dist
