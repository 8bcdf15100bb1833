// Fused soft-capped cross-entropy: −log softmax(c·tanh(x/c) + b)[y] per row, forward and backward
// in two passes over each row, without materialising the capped logits, their softmax or one-hots.
#pragma once
// LibTorch header: engine .cpp files and tests only (see DESIGN.md).
#include <torch/torch.h>

namespace gllm {

// logits (N, V) fp32 before the cap; targets (N) int64, rows with target < 0 give 0 and no gradient;
// cap c ≤ 0 means no cap (z = x + b); bias (V) fp32 or undefined, a constant added after the cap
// (the matched tilt or a compiled model's logit_bias; it gets no gradient). Returns nats (N) fp32,
// differentiable in logits. CPU fp32 only: callers fall back to the ATen ops elsewhere.
torch::Tensor softcapped_nll(const torch::Tensor& logits, const torch::Tensor& targets, double cap,
                             const torch::Tensor& bias = {});

// Whether softcapped_nll handles tensors like these (CPU, fp32).
bool softcapped_nll_supports(const torch::Tensor& logits);

}  // namespace gllm
