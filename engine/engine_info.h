// The engine library's identity: its version string, for `gllm version` and the workbench's About
// box. Torch-free, so widgets may include it.
#pragma once
#include <string>

namespace gllm {
std::string engine_version();
}  // namespace gllm
