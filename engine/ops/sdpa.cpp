// Scaled dot-product attention called boxed through the ATen dispatcher, its arguments filled by
// schema name, so one build serves LibTorch 1.13 and 2.x (and arguments later releases add).
#include "engine/ops/sdpa.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/version.h>

#include <optional>

#include "engine/io/error.h"

namespace gllm::ops {
namespace {

// Newest first: the public 2.x operator, then 1.13's (which returns (output, weights) and has
// need_attn_weights).
constexpr const char* kCandidates[] = {"aten::scaled_dot_product_attention",
                                       "aten::_scaled_dot_product_attention"};

struct SdpaOperator {
  std::string name;
  c10::OperatorHandle handle;
};

bool has_argument(const c10::FunctionSchema& s, const char* name) {
  for (const auto& a : s.arguments())
    if (a.name() == name) return true;
  return false;
}

// The operator `name` with overload "", or nullopt when this LibTorch has none. Throws when it
// exists but is not an attention operator sdpa() knows how to call.
std::optional<SdpaOperator> find_operator(const std::string& name) {
  auto h = c10::Dispatcher::singleton().findSchema(c10::OperatorName(name, ""));
  if (!h) return std::nullopt;
  const auto& s = h->schema();
  for (const char* needed : {"query", "key", "value", "attn_mask", "is_causal"})
    if (!has_argument(s, needed))
      throw Error("operator " + name + " of LibTorch " + TORCH_VERSION + " has no argument '" +
                  needed + "' (schema " + toString(s) +
                  "); it is not a scaled-dot-product attention sdpa() can call");
  if (s.returns().empty() || !s.returns()[0].type()->isSubtypeOf(*c10::TensorType::get()))
    throw Error("operator " + name + " of LibTorch " + TORCH_VERSION +
                " does not return a tensor first (schema " + toString(s) + ")");
  return SdpaOperator{name, *h};
}

// Looked up once per process (operators are registered when libtorch loads). `why_not` says why
// none was usable when none is returned.
struct DefaultOperator {
  std::optional<SdpaOperator> op;
  std::string why_not;
};

const DefaultOperator& default_operator() {
  static const DefaultOperator d = [] {
    DefaultOperator r;
    for (const char* name : kCandidates) {
      try {
        if ((r.op = find_operator(name))) return r;
      } catch (const Error& e) {
        r.why_not += std::string(" ") + e.what() + ".";
      }
    }
    r.why_not = std::string("LibTorch ") + TORCH_VERSION + " registers neither " + kCandidates[0] +
                " nor " + kCandidates[1] + " as a usable attention operator." + r.why_not +
                " Use LibTorch 1.13 or later (2.x for the fused CUDA kernels), or the matmul "
                "attention kernel "
                "(GPT::set_attention_kernel(AttentionKernel::Matmul))";
    return r;
  }();
  return d;
}

torch::Tensor call(const SdpaOperator& op, const torch::Tensor& q, const torch::Tensor& k,
                   const torch::Tensor& v, const torch::Tensor& additive_mask, bool is_causal) {
  if (is_causal && additive_mask.defined())
    throw Error(
        "sdpa: pass either an additive mask or is_causal, not both (fold the causal rule into the "
        "mask)");
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
              "sdpa expects q, k, v of shape (B, H, T, Dh)");
  const auto& s = op.handle.schema();
  torch::jit::Stack stack;
  stack.reserve(s.arguments().size());
  for (const auto& a : s.arguments()) {
    const auto& n = a.name();
    if (n == "query")
      stack.emplace_back(q);  // (B, H, T, Dh)
    else if (n == "key")
      stack.emplace_back(k);  // (B, H, S, Dh)
    else if (n == "value")
      stack.emplace_back(v);  // (B, H, S, Dh)
    else if (n == "attn_mask")
      stack.emplace_back(additive_mask.defined() ? c10::IValue(additive_mask) : c10::IValue());
    else if (n == "dropout_p")
      stack.emplace_back(0.0);
    else if (n == "is_causal")
      stack.emplace_back(is_causal);
    else if (n == "need_attn_weights")
      stack.emplace_back(false);
    else if (n == "scale")
      stack.emplace_back(c10::IValue());  // None: 1/√Dh
    else if (a.default_value())
      stack.emplace_back(*a.default_value());
    else
      throw Error(
          "operator " + op.name + " of LibTorch " + TORCH_VERSION + " needs argument '" + n +
          "', which has no default and sdpa() does not know (schema " + toString(s) +
          "); teach engine/model/sdpa.cpp this argument or use the matmul attention kernel");
  }
  op.handle.callBoxed(&stack);
  return stack.at(0)
      .toTensor();  // (B, H, T, Dh); 1.13 also leaves the (undefined) weights after it
}

}  // namespace

bool sdpa_available() {
  return default_operator().op.has_value();
}

std::string sdpa_operator_name() {
  return sdpa_available() ? default_operator().op->name : std::string();
}

torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const torch::Tensor& additive_mask, bool is_causal) {
  const auto& d = default_operator();
  if (!d.op) throw Error(d.why_not);
  return call(*d.op, q, k, v, additive_mask, is_causal);
}

namespace detail {

torch::Tensor sdpa_with_operator(const std::string& op_name, const torch::Tensor& q,
                                 const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& additive_mask, bool is_causal) {
  auto op = find_operator(op_name);
  if (!op)
    throw Error("LibTorch " + std::string(TORCH_VERSION) + " has no operator " + op_name +
                "; sdpa() looks for " + kCandidates[0] + " (LibTorch 2.x) or " + kCandidates[1] +
                " (1.13)");
  return call(*op, q, k, v, additive_mask, is_causal);
}

}  // namespace detail
}  // namespace gllm::ops
