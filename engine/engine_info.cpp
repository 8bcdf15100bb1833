// The engine library's identity: its version string, taken from the CMake project version.
// This unit is what makes `gllm_engine` a static library that links every engine module.
#include "engine/engine_info.h"

namespace gllm {
std::string engine_version() {
  return GLLM_VERSION;
}
}  // namespace gllm
