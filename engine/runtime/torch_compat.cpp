// LibTorch API differences (torch_compat.h): the autocast calls of 1.13 and of 2.4 and later.
// Every other engine file calls these, so a new LibTorch's changes land here alone.
#include "engine/runtime/torch_compat.h"

#include <ATen/autocast_mode.h>

namespace gllm::compat {

bool autocast_enabled(c10::DeviceType type) {
#ifdef GLLM_AUTOCAST_PER_DEVICE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

c10::ScalarType autocast_dtype(c10::DeviceType type) {
#ifdef GLLM_AUTOCAST_PER_DEVICE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                      : at::autocast::get_autocast_gpu_dtype();
#endif
}

void set_autocast(c10::DeviceType type, bool enabled, c10::ScalarType dtype) {
#ifdef GLLM_AUTOCAST_PER_DEVICE
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  }
#endif
}

}  // namespace gllm::compat
