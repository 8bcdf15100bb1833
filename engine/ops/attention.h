// ops::attention — causal sliding-window attention, one entry point over three kernels: the fused
// operator on CUDA (sdpa.h), the blocked window kernel on the CPU (window_attention.h), a matmul
// path.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

namespace gllm::ops {

// Which kernel computes softmax(scale · q kᵀ + window mask) v. Auto: the fused operator when the
// tensors are on CUDA and this LibTorch has it; on the CPU in fp32, while the fused CPU ops are
// enabled, the blocked window kernel (only the keys in view are scored) where kernels::choose finds
// it faster than the matmul path at the shape and window; the matmul path (baddbmm with the window
// mask, softmax, bmm) otherwise. Fused / Blocked / Matmul force one (Fused throws
// gllm::Error when this LibTorch has no attention operator, Blocked when the tensors are not CPU
// fp32).
enum class AttentionKernel { Auto, Fused, Blocked, Matmul };

// The name under which attention() times the blocked kernel against the matmul path for a window
// (kernels::choose's op; the window counted up to T).
std::string attention_choice_op(int64_t window, int64_t T);

// The kernel attention() runs for these q, k, v (B, T, H, Dh): `requested`, or what Auto picks
// before timing (Blocked there is the candidate that attention() times against the matmul path).
AttentionKernel attention_kernel_for(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v,
                                     AttentionKernel requested = AttentionKernel::Auto);

// y (B, T, H, Dh) for q, k, v (B, T, H, Dh): query i attends to the keys j with 0 ≤ i − j ≤ window
// (window ≥ T − 1: full causal), scores scale · q·k. `q_coef` (H, Dh), when given, multiplies q
// per head coordinate in the same pass as the scale (the model's grades and query scale).
// Differentiable in q, k, v (and q_coef).
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        int64_t window, double scale, const torch::Tensor& q_coef = {},
                        AttentionKernel requested = AttentionKernel::Auto);

// The (T, T) additive window mask (0 where 0 ≤ i − j ≤ window, −inf elsewhere), cached per shape,
// device and dtype.
torch::Tensor window_mask(int64_t T, int64_t window, const torch::Device& device,
                          torch::Dtype dtype);

}  // namespace gllm::ops
