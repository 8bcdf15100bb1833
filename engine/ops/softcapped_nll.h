// Fused soft-capped cross-entropy: −log softmax(c·tanh(x/c) + b)[y] per row in one pass over each
// row (two when the bias is too wide for a fixed shift), without materialising capped logits or
// one-hots.
#pragma once
// LibTorch header: engine .cpp files and tests only (see docs/design.md).
#include <torch/torch.h>

#include <mutex>

namespace gllm::ops {

// logits (N, V) fp32 before the cap; targets (N) int64, rows with target < 0 give 0 and no
// gradient; cap c ≤ 0 means no cap (z = x + b); bias (V) fp32 or undefined, a constant added after
// the cap (the matched tilt or a compiled model's logit_bias; it gets no gradient). Returns nats
// (N) fp32, differentiable in logits. CPU fp32 only: callers fall back to the ATen ops elsewhere.
torch::Tensor softcapped_nll(const torch::Tensor& logits, const torch::Tensor& targets, double cap,
                             const torch::Tensor& bias = {});

// Evaluation logits in place, in one pass: logits ← c·tanh(logits/c) + bias (c ≤ 0: + bias only);
// logits (N, V) contiguous CPU fp32 outside any graph, bias (V) or undefined.
void softcap_logits_(torch::Tensor& logits, double cap, const torch::Tensor& bias = {});

// Whether the fused functions handle a tensor like this (CPU, fp32, 2-D).
bool softcapped_nll_supports(const torch::Tensor& t);

// A reusable (N, V) fp32 buffer for the output layer's logits and their unnormalised gradient.
// Blocks this large are otherwise mapped and faulted in afresh by every allocation; the buffer is
// reused while no pending graph holds it and replaced when the shape changes.
class LogitWorkspace {
 public:
  torch::Tensor take(int64_t rows, int64_t cols, const torch::TensorOptions& options);

 private:
  std::mutex mutex_;
  torch::Tensor buffer_;
};

// The output layer and the loss in one: nats of softcap(hidden · weightᵀ) + bias, as
// softcapped_nll, hidden (N, d) and weight (V, d) fp32 on the CPU; gradients flow to both. The
// logits live only in the workspace, which then holds e·(1 − t²) for the backward pass (its two
// products).
torch::Tensor linear_softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& weight,
                                    const torch::Tensor& targets, double cap,
                                    const torch::Tensor& bias, LogitWorkspace& workspace);

// ops::softcap — c·tanh(logits/c) + bias (each when present): in place in one pass for fresh
// contiguous CPU fp32 logits outside a graph, the ATen formula otherwise. logits (…, V).
torch::Tensor softcap(torch::Tensor logits, double cap, const torch::Tensor& bias);

// The output layer and the loss in row chunks (any device, any dtype): nats as softcapped_nll,
// with the products in `compute` and the rest in fp32; neither pass holds (N, V) tensors, only
// (chunk_rows, V) ones — backward makes each chunk's logits again. What softcapped_nll runs on
// CUDA.
torch::Tensor chunked_softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& W,
                                     const torch::Tensor& targets, double cap,
                                     const torch::Tensor& bias, int64_t chunk_rows,
                                     at::ScalarType compute);
// Rows a chunk of chunked_softcapped_nll holds for a vocabulary of V (2^26 logits, 256 MiB).
int64_t chunked_nll_rows(int64_t V);

// ops::softcapped_nll — the output layer and the loss: nats (N) of softcap(hidden · Wᵀ) + bias at
// the targets, 0 where target < 0; hidden (N, d), W (V, d). The fused linear_softcapped_nll where
// both are CPU fp32; chunked_softcapped_nll on CUDA; otherwise the logits as torch::linear
// computes them (fp32), softcap, log_softmax and a gather (CPU bf16 autocast, fp64 checks).
torch::Tensor softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& W,
                             const torch::Tensor& targets, double cap, const torch::Tensor& bias,
                             LogitWorkspace& workspace);

}  // namespace gllm::ops
