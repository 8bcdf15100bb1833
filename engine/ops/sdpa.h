// Scaled dot-product attention through the ATen operator this LibTorch registers, found by name at
// run time (2.x: aten::scaled_dot_product_attention, 1.13: aten::_scaled_dot_product_attention).
#pragma once
#include <torch/torch.h>

#include <string>

namespace gllm::ops {

// True when this LibTorch registers a scaled-dot-product-attention operator sdpa() can call.
bool sdpa_available();
// The operator sdpa() calls ("aten::scaled_dot_product_attention" in LibTorch 2.x,
// "aten::_scaled_dot_product_attention" in 1.13); empty when there is none.
std::string sdpa_operator_name();

// y = softmax(q kᵀ/√Dh + mask) v, computed by the ATen operator (the fused flash/memory-efficient
// kernels on CUDA with LibTorch 2.x; ATen's composite math elsewhere). Differentiable.
//   q (B, H, T, Dh), k and v (B, H, S, Dh) → y (B, H, T, Dh)
//   additive_mask: (T, S) or broadcastable to (B, H, T, S), added to the scores (0 / −inf);
//                  undefined = none
//   is_causal: query t sees keys 0..t (then additive_mask must be undefined)
// No dropout. Throws gllm::Error naming the fix when this LibTorch has no such operator.
torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const torch::Tensor& additive_mask, bool is_causal);

namespace detail {
// sdpa() through the operator `op_name` (overload ""), looked up on every call: each schema
// argument is filled by name (query, key, value, attn_mask, dropout_p, is_causal,
// need_attn_weights, scale) or from the schema's default. Throws gllm::Error when the operator does
// not exist or its schema is not an attention schema.
torch::Tensor sdpa_with_operator(const std::string& op_name, const torch::Tensor& q,
                                 const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& additive_mask, bool is_causal);
}  // namespace detail

}  // namespace gllm::ops
