// What this build offers for scaling out, without torch headers (for `gllm version` and the GUI):
// CUDA allocator support, the c10d backends compiled in, the attention operator found at run time.
#pragma once
#include <string>

namespace gllm::dist {

struct ScaleInfo {
  bool cuda_build = false;    // compiled with GLLM_WITH_CUDA (CUDA allocator statistics)
  bool gloo = false;          // c10d Gloo process groups (CPU data parallel)
  bool nccl = false;          // c10d NCCL process groups (GPU data parallel)
  std::string sdpa_operator;  // the scaled-dot-product attention operator, empty when none
};
ScaleInfo scale_info();

}  // namespace gllm::dist
