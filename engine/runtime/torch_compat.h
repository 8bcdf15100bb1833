// The one place the engine meets LibTorch's API differences between 1.13 (Debian 12), 2.6 (trixie)
// and the newest 2.x (a GPU machine's pip torch): autocast state per device, c10d's backend type.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

// LibTorch 2.4 moved autocast to per-device-type calls; older releases (1.13 included) have one
// pair of calls per device type (set_enabled / set_autocast_gpu_dtype for CUDA, set_cpu_enabled /
// set_autocast_cpu_dtype for the CPU).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define GLLM_AUTOCAST_PER_DEVICE 1
#endif

// LibTorch 2.x makes Gloo and NCCL backends (c10d::Backend) under a ProcessGroup; in 1.13 they are
// ProcessGroups themselves (engine/dist/process_group.cpp).
#if TORCH_VERSION_MAJOR >= 2
#define GLLM_C10D_BACKENDS 1
#endif

namespace gllm::compat {

// Autocast of one device type (CPU or CUDA): whether it is on, its dtype, and both at once.
bool autocast_enabled(c10::DeviceType type);
c10::ScalarType autocast_dtype(c10::DeviceType type);
void set_autocast(c10::DeviceType type, bool enabled, c10::ScalarType dtype);

}  // namespace gllm::compat
