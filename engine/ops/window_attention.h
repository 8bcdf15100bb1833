// Causal sliding-window attention on the CPU in query blocks: only the keys a block can see are
// scored (no (T, T) mask or score table), each block's products run single-threaded side by side.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

namespace gllm::ops {

// Queries per block (the scores of one block are block_rows × the keys it sees).
inline constexpr int64_t window_attention_block_rows = 32;

// Whether window_attention takes these: q, k, v CPU fp32 contiguous (BH, T, Dh) of one shape, and
// the fused CPU ops enabled (fused_ops_enabled()).
bool window_attention_supports(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v);

// softmax(scale · q kᵀ over the keys j with 0 ≤ i − j ≤ window) v for every query i;
// q, k, v (BH, T, Dh) → (BH, T, Dh), differentiable in q, k and v. window ≥ T − 1 is full causal
// attention. The probabilities of the seen keys are kept for the backward pass (not T × T).
torch::Tensor window_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, int64_t window, double scale);

// The matrix products window_attention runs for one forward and backward at this shape, timed alone
// (the same blocks and threads, no softmax): seconds, and their floating-point operations. For
// `gllm bench train`'s GEMM-bound figure.
std::pair<double, double> window_attention_gemm_time(int64_t BH, int64_t T, int64_t Dh,
                                                     int64_t window, int repeats = 3);

}  // namespace gllm::ops
