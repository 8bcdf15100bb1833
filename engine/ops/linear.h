// The model's bias-free linear layers y = x·Wᵀ on the CPU through the panel products (forward and
// the input gradient; BLAS for the weight gradient), and torch::linear wherever those do not apply.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

namespace gllm::ops {

// Whether linear(x, W) may take the panel kernels: fused CPU ops on (fused_ops_support), fp32 x
// and W, kernels at AVX2 or wider, no CPU autocast scope, in and out features ≤ panel::kMaxInner
// and at least panel::kMinRows rows. Where it may, kernels::choose decides per shape (forward and
// input gradient each) between the panels and the BLAS.
bool linear_uses_panels(const torch::Tensor& x, const torch::Tensor& W);

// ops::linear — y (…, N) = x (…, K)·Wᵀ for W (N, K), differentiable in both: the panel kernels
// where they may run and were chosen, torch::linear otherwise (CUDA, autocast, fp64, other shapes).
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W);

}  // namespace gllm::ops
