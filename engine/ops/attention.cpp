// ops::attention (attention.h): kernel choice, the query coefficient folded with the scale, the
// fused operator, the blocked CPU kernel and the masked matmul path, and the cached window masks.
#include "engine/ops/attention.h"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "engine/ops/kernel_choice.h"
#include "engine/ops/sdpa.h"
#include "engine/ops/window_attention.h"

namespace gllm::ops {

AttentionKernel attention_kernel_for(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, AttentionKernel requested) {
  if (requested != AttentionKernel::Auto) return requested;
  if (q.is_cuda() && sdpa_available()) return AttentionKernel::Fused;
  return window_attention_supports(q, k, v) ? AttentionKernel::Blocked : AttentionKernel::Matmul;
}

std::string attention_choice_op(int64_t window, int64_t T) {
  return "attention.window" + std::to_string(std::min(window, T));
}

torch::Tensor window_mask(int64_t T, int64_t window, const torch::Device& device,
                          torch::Dtype dtype) {
  static std::mutex mu;
  static std::map<std::tuple<int64_t, int64_t, std::string, int>, torch::Tensor> cache;
  const auto key = std::make_tuple(T, window, device.str(), static_cast<int>(dtype));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto r = torch::arange(T, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto diff = r.unsqueeze(1) - r.unsqueeze(0);  // (T, T): row − col
  auto allowed = (diff >= 0) & (diff <= window);
  auto mask = torch::zeros({T, T}, torch::TensorOptions().dtype(dtype).device(device))
                  .masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  return cache[key] = mask;
}

torch::Tensor attention(const torch::Tensor& q_in, const torch::Tensor& k, const torch::Tensor& v,
                        int64_t window, double scale, const torch::Tensor& q_coef,
                        AttentionKernel requested) {
  const int64_t B = q_in.size(0), T = q_in.size(1), H = q_in.size(2), Dh = q_in.size(3);
  const AttentionKernel kernel = attention_kernel_for(q_in, k, v, requested);
  if (kernel == AttentionKernel::Fused) {
    // The operator scales the scores by 1/√Dh itself; another scale joins the coefficient.
    const double extra = scale * std::sqrt(static_cast<double>(Dh));
    torch::Tensor q = q_in;
    if (q_coef.defined())
      q = std::abs(extra - 1.0) < 1e-12 ? q * q_coef : q * (q_coef * extra);
    else if (std::abs(extra - 1.0) >= 1e-12)
      q = q * extra;
    auto qt = q.transpose(1, 2), kt = k.transpose(1, 2), vt = v.transpose(1, 2);  // (B, H, T, Dh)
    auto y = window >= T - 1 ? sdpa(qt, kt, vt, {}, /*is_causal=*/true)
                             : sdpa(qt, kt, vt, window_mask(T, window, q.device(), q.scalar_type()),
                                    /*is_causal=*/false);
    return y.transpose(1, 2);  // (B, T, H, Dh)
  }
  // Every per-coordinate factor on q and the scale in one vector: q is scaled in one pass.
  auto q = q_coef.defined() ? q_in * (q_coef * scale) : q_in * scale;  // (B, T, H, Dh)
  const auto matmul = [&] {
    // The window mask enters as baddbmm's input: the scores are written once, with no separate
    // scale and mask passes over the (B·H, T, T) table.
    auto qs = q.transpose(1, 2).reshape({B * H, T, Dh});  // (B·H, T, Dh)
    auto ks = k.transpose(1, 2).reshape({B * H, T, Dh});  // (B·H, T, Dh)
    auto vs = v.transpose(1, 2).reshape({B * H, T, Dh});  // (B·H, T, Dh)
    auto mask =
        window_mask(T, window, q.device(), qs.scalar_type()).expand({B * H, T, T});  // (B·H, T, T)
    auto att = torch::baddbmm(mask, qs, ks.transpose(1, 2));                         // (B·H, T, T)
    return torch::bmm(torch::softmax(att, -1), vs)
        .view({B, H, T, Dh})
        .transpose(1, 2);  // (B, T, H, Dh)
  };
  if (kernel == AttentionKernel::Blocked) {  // q, k, v stay (B, T, H, Dh): no transposes
    const auto blocked = [&] {
      return window_attention(q.contiguous(), k.contiguous(), v.contiguous(), window, 1.0);
    };
    // Asked for by name it runs; chosen by Auto, it must beat the masked matmuls at this shape.
    if (requested == AttentionKernel::Blocked ||
        kernels::choose(
            attention_choice_op(window, T), B * H, T, Dh, [&] { blocked(); }, [&] { matmul(); }) ==
            kernels::Side::Own)
      return blocked();
  }
  return matmul();
}

}  // namespace gllm::ops
