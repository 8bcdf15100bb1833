// Device selection (auto | cpu | cuda), the autocast scope (bf16 compute around forward passes,
// CUDA or CPU), and CUDA caching-allocator memory figures; CUDA parts guarded at run time.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace gllm::dist {

// True when this LibTorch was built with CUDA and sees at least one device.
bool cuda_available();

// Resolves TrainConfig.device: "cpu", "cuda" (throws gllm::Error naming the fix when no CUDA device
// is visible), "auto" (CUDA when available, else CPU). `local_rank` picks the GPU of a
// data-parallel rank (cuda:local_rank modulo the device count).
torch::Device select_device(const std::string& requested, int local_rank = 0);

// An autocast region of the calling thread: matmuls and attention compute in the low precision
// while parameters, gradients and optimizer state keep their dtypes (the baseline's mixed
// precision). Training opens one around each micro-step's forward and loss and around each
// evaluation forward, never around backward or the optimizer step. Leaving the outermost region
// clears autocast's cache of low-precision weight copies, so the next region casts the updated
// weights; the previous autocast state of that device type is restored.
class AutocastScope {
 public:
  // Training's scope (train.dtype): bf16 autocast on CUDA or the CPU when `dtype` is "bf16"; a
  // no-op with "fp32".
  AutocastScope(const torch::Device& device, const std::string& dtype);
  // Autocast to `dtype` on `device`'s type: CPU takes bf16, CUDA bf16 or fp16; any other pair
  // throws gllm::Error.
  AutocastScope(const torch::Device& device, c10::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;
  bool active() const { return active_; }

 private:
  void open(c10::DeviceType type, c10::ScalarType dtype);
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CUDA;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::Half;
};

// Whether autocast is on for `device`'s type on the calling thread (CPU and CUDA; false otherwise).
bool autocast_active(const torch::Device& device);

// CUDA caching-allocator statistics of one device (bytes). `available` is false when this build has
// no CUDA allocator or no device: then every figure is 0.
struct CudaMemory {
  bool available = false;
  int64_t allocated = 0, peak_allocated = 0, reserved = 0, peak_reserved = 0;
};
CudaMemory cuda_memory(int device_index = 0);
// Measured peak memory of this process in MiB: the CUDA caching-allocator peak of `device` when it
// is a CUDA device, else the process peak resident set size (getrusage).
double measured_peak_mib(const torch::Device& device);
// This process's resident memory now in MiB (/proc/self/statm; 0 where it cannot be read): what
// the libraries and the data hold before the training tensors exist, the base of the estimate.
double resident_mib();
// Resets the peak counters of one device (no-op without CUDA).
void reset_cuda_peak(int device_index = 0);
// Waits for queued kernels of the current CUDA device (no-op without CUDA).
void cuda_synchronize();

// What this LibTorch offers for scaling: version, CUDA build, c10d backends compiled in here.
struct TorchBuild {
  std::string version;
  bool cuda_build = false;  // compiled with GLLM_WITH_CUDA (CUDA allocator stats available)
  bool gloo = false;        // c10d Gloo process groups
  bool nccl = false;        // c10d NCCL process groups
  bool sdpa = false;  // an attention operator for gllm::sdpa (engine/ops/sdpa.h), found at run time
};
TorchBuild torch_build();

}  // namespace gllm::dist
