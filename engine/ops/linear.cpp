// Bias-free linear layers through the register-tiled panel products where they beat the BLAS at the
// shape (kernel_choice.h): y = x·Wᵀ and dx = dy·W written once, W packed per call; dW = dyᵀ·x BLAS.
#include "engine/ops/linear.h"

#include <ATen/record_function.h>

#include "engine/ops/kernel_choice.h"
#include "engine/ops/panel_gemm.h"
#include "engine/ops/pointwise.h"
#include "engine/runtime/torch_compat.h"

namespace gllm::ops {

namespace {

bool cpu_autocast_on() {
  return compat::autocast_enabled(c10::DeviceType::CPU);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// a (M, K) contiguous times Wᵀ or W: panels of the right-hand side, then one panel product.
torch::Tensor times_weight(const torch::Tensor& a, const torch::Tensor& W, bool transposed) {
  // Seen by the profiler as one product a·B with B (K, N) (the bench's GEMM bound counts it).
  RECORD_FUNCTION("gllm::panel_mm", std::vector<c10::IValue>({a, transposed ? W.t() : W}));
  const int64_t M = a.size(0), K = a.size(1), N = transposed ? W.size(0) : W.size(1);
  auto panels = torch::empty({panel::packed_floats(K, N)}, W.options());  // (⌈N/16⌉·K·16)
  if (transposed)
    panel::pack_transposed(W.data_ptr<float>(), W.size(1), N, K,
                           panels.data_ptr<float>());  // B = Wᵀ (K, N)
  else
    panel::pack(W.data_ptr<float>(), W.size(1), K, N, panels.data_ptr<float>());  // B = W (K, N)
  auto out = torch::empty({M, N}, a.options());                                   // (M, N)
  panel::multiply(a.data_ptr<float>(), K, M, K, panels.data_ptr<float>(), N, out.data_ptr<float>(),
                  N);
  return out;
}

class TiledLinearFn : public torch::autograd::Function<TiledLinearFn> {
 public:
  // x (M, K) contiguous, W (N, K) contiguous → y (M, N)
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& W) {
    ctx->save_for_backward({x, W});
    return times_weight(x, W, /*transposed=*/true);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &W = saved[1];
    auto dy = grads[0].contiguous();  // (M, N)
    torch::Tensor dx, dW;
    if (ctx->needs_input_grad(0)) {  // (M, K) = dy·W
      const auto side = kernels::choose(
          "linear.input_grad", dy.size(0), W.size(0), W.size(1),
          [&] { times_weight(dy, W, /*transposed=*/false); }, [&] { torch::mm(dy, W); });
      dx =
          side == kernels::Side::Own ? times_weight(dy, W, /*transposed=*/false) : torch::mm(dy, W);
    }
    if (ctx->needs_input_grad(1)) dW = torch::mm(dy.t(), x);  // (N, K) = dyᵀ·x
    return {dx, dW};
  }
};

}  // namespace

bool linear_uses_panels(const torch::Tensor& x, const torch::Tensor& W) {
  return panel::available() && fused_ops_support(x) && W.defined() && W.device().is_cpu() &&
         W.scalar_type() == torch::kFloat && W.dim() == 2 && x.size(-1) == W.size(1) &&
         W.size(0) > 0 && W.size(1) <= panel::kMaxInner && W.size(0) <= panel::kMaxInner &&
         x.numel() / W.size(1) >= panel::kMinRows && !cpu_autocast_on();
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& W) {
  if (!linear_uses_panels(x, W)) return torch::linear(x, W);
  const int64_t K = W.size(1), N = W.size(0);
  auto x2 = x.reshape({-1, K});    // (M, K), contiguous as x is
  const auto Wc = W.contiguous();  // (N, K)
  const auto side = kernels::choose(
      "linear.forward", x2.size(0), K, N, [&] { times_weight(x2, Wc, /*transposed=*/true); },
      [&] { torch::mm(x2, Wc.t()); });
  if (side == kernels::Side::Library) return torch::linear(x, W);
  auto sizes = x.sizes().vec();
  sizes.back() = N;
  return TiledLinearFn::apply(x2, Wc).view(sizes);  // (…, N)
}

}  // namespace gllm::ops
