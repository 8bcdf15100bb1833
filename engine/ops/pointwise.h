// Fused CPU forms of the model's small elementwise layers (RMSNorm, half-split RoPE, ReLU²): one
// pass over the activations forward and one backward each, instead of a chain of ATen ops.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

namespace gllm::ops {

// Whether the fused functions take a tensor like this: CPU, fp32, contiguous, at least 1-D, and the
// fused ops are enabled. Callers use the ATen formulas otherwise (fp64 checks, CUDA, bf16
// autocast).
bool fused_ops_support(const torch::Tensor& x);

// Process-wide switch (default on; GLLM_FUSED_OPS=0 starts with it off): off, fused_ops_support is
// false and the model runs the ATen formulas, so the two can be timed side by side (`gllm bench
// train
// --vs-unfused`). Returns the previous setting.
bool set_fused_ops_enabled(bool enabled);
bool fused_ops_enabled();

// x · rsqrt(mean(x², last dim) + eps), differentiable in x; x (…, n).
torch::Tensor fused_rms_norm(const torch::Tensor& x, double eps);

// Half-split rotary embedding over the last two dims of x (B, T, H, Dh):
//   y[:half] = x1·cos + x2·sin,  y[half:] = −x1·sin + x2·cos,
// cos and sin (T, Dh/2) fp32 contiguous (constants: no gradient); differentiable in x.
torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos,
                         const torch::Tensor& sin);

// relu(x)², differentiable in x (the baseline MLP's activation).
torch::Tensor fused_relu_square(const torch::Tensor& x);

// The entry points the model calls: the fused kernels where fused_ops_support(x) and
// kernels::choose picked them for x's shape, else the same formula in ATen ops (CUDA, bf16
// autocast, fp64 checks, or where ATen was faster).
// ops::rms_norm — RMSNorm without weights, eps = FLT_EPSILON, fp32 math over the last dim.
torch::Tensor rms_norm(const torch::Tensor& x);
// ops::rope — half-split rotary embedding of x (B, T, H, Dh) with cos, sin (≥ T, Dh/2) fp32.
torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
// ops::relu_square — relu(x)².
torch::Tensor relu_square(const torch::Tensor& x);

}  // namespace gllm::ops
