// Fused soft-capped cross-entropy on the CPU: one row of V logits stays in cache while it is capped,
// reduced and differentiated; the row kernels are cloned for AVX2+FMA and picked at load time.
#include "engine/model/softcap_loss.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/io/error.h"

namespace gllm {

namespace {

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GLLM_ROW_KERNEL __attribute__((target_clones("arch=haswell", "default")))
#else
#define GLLM_ROW_KERNEL
#endif
#define GLLM_ALWAYS_INLINE inline __attribute__((always_inline))

// exp(x) to about 1 ulp for x in [−87, 88] (Cody–Waite reduction to r ∈ [−ln2/2, ln2/2], degree-5
// minimax polynomial, 2^n through the exponent bits). Straight-line code so loops vectorise.
GLLM_ALWAYS_INLINE float exp_approx(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return e * scale;
}

// tanh(y): odd polynomial below |y| = 0.625, 1 − 2/(e^{2|y|} + 1) above (|y| clamped at 9, where
// tanh is 1 in float32); both computed and one selected, so loops vectorise.
GLLM_ALWAYS_INLINE float tanh_approx(float y) {
  const float a = std::fabs(y);
  const float e = exp_approx(2.0f * std::min(a, 9.0f));
  const float large = 1.0f - 2.0f / (e + 1.0f);
  const float s = a * a;
  const float small =
      ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s + 1.33314422036e-1f) * s -
       3.33332819422e-1f) * s * a + a;
  return std::copysign(a < 0.625f ? small : large, y);
}

constexpr int kLanes = 16;  // independent accumulators: two AVX2 registers

// Capped pass 1: t_j = tanh(x_j / c); returns max_j (c·t_j + b_j).
GLLM_ROW_KERNEL float cap_row(const float* __restrict x, float* __restrict t, const float* __restrict b,
                              int64_t V, float cap) {
  const float inv = 1.0f / cap;
  float acc[kLanes];
  std::fill(acc, acc + kLanes, -std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + kLanes <= V; j += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      const float tj = tanh_approx(x[j + k] * inv);
      t[j + k] = tj;
      acc[k] = std::max(acc[k], cap * tj + b[j + k]);
    }
  float m = *std::max_element(acc, acc + kLanes);
  for (; j < V; ++j) {
    t[j] = tanh_approx(x[j] * inv);
    m = std::max(m, cap * t[j] + b[j]);
  }
  return m;
}

// Uncapped pass 1: max_j (x_j + b_j).
GLLM_ROW_KERNEL float max_row(const float* __restrict x, const float* __restrict b, int64_t V) {
  float acc[kLanes];
  std::fill(acc, acc + kLanes, -std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + kLanes <= V; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] = std::max(acc[k], x[j + k] + b[j + k]);
  float m = *std::max_element(acc, acc + kLanes);
  for (; j < V; ++j) m = std::max(m, x[j] + b[j]);
  return m;
}

// Pass 2: Σ_j exp(a·t_j + b_j − shift), accumulated in float lanes and summed in double.
GLLM_ROW_KERNEL double sum_exp_row(const float* __restrict t, const float* __restrict b, int64_t V, float a,
                                   float shift) {
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= V; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += exp_approx(a * t[j + k] + b[j + k] - shift);
  double s = 0;
  for (int k = 0; k < kLanes; ++k) s += acc[k];
  for (; j < V; ++j) s += exp_approx(a * t[j] + b[j] - shift);
  return s;
}

// Backward of a capped row: dx_j = g · softmax_j · (1 − t_j²) (the target term is added after).
GLLM_ROW_KERNEL void grad_cap_row(const float* __restrict t, const float* __restrict b, float* __restrict dx,
                                  int64_t V, float cap, float lse, float g) {
  for (int64_t j = 0; j < V; ++j) {
    const float tj = t[j];
    dx[j] = g * exp_approx(cap * tj + b[j] - lse) * (1.0f - tj * tj);
  }
}

// Backward of an uncapped row: dx_j = g · softmax_j.
GLLM_ROW_KERNEL void grad_plain_row(const float* __restrict x, const float* __restrict b, float* __restrict dx,
                                    int64_t V, float lse, float g) {
  for (int64_t j = 0; j < V; ++j) dx[j] = g * exp_approx(x[j] + b[j] - lse);
}

struct Rows {
  const float* x = nullptr;  // (N, V) raw logits
  float* t = nullptr;        // (N, V) tanh(x/c) when kept for backward; null: per-thread scratch
  const float* b = nullptr;  // (V)
  const int64_t* y = nullptr;
  float* lse = nullptr;  // (N)
  float* nll = nullptr;  // (N)
  int64_t N = 0, V = 0;
  float cap = 0;  // ≤ 0: no cap
};

void check_targets(const int64_t* y, int64_t N, int64_t V) {
  for (int64_t i = 0; i < N; ++i)
    if (y[i] >= V)
      throw Error("target token id " + std::to_string(y[i]) + " is outside the vocabulary of " + std::to_string(V) +
                  "; the data was tokenized with a larger tokenizer than the model's (retokenize, or set "
                  "model.vocab_size to the tokenizer's size)");
}

void forward_rows(const Rows& r) {
  const bool capped = r.cap > 0;
  at::parallel_for(0, r.N, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(capped && !r.t ? r.V : 0);
    for (int64_t i = begin; i < end; ++i) {
      const float* x = r.x + i * r.V;
      const float* t = x;
      float a = 1.0f, m;
      if (capped) {
        float* ti = r.t ? r.t + i * r.V : scratch.data();
        m = cap_row(x, ti, r.b, r.V, r.cap);
        t = ti;
        a = r.cap;
      } else {
        m = max_row(x, r.b, r.V);
      }
      const float lse = m + static_cast<float>(std::log(sum_exp_row(t, r.b, r.V, a, m)));
      r.lse[i] = lse;
      const int64_t y = r.y[i];
      r.nll[i] = y < 0 ? 0.0f : lse - (a * t[y] + r.b[y]);
    }
  });
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class SoftcapNll : public torch::autograd::Function<SoftcapNll> {
 public:
  // x (N, V) fp32, y (N) int64, bias (V) fp32 → nats (N)
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& y, double cap,
                               const torch::Tensor& bias) {
    const int64_t N = x.size(0), V = x.size(1);
    auto lse = torch::empty({N}, x.options());  // (N)
    auto nll = torch::empty({N}, x.options());  // (N)
    torch::Tensor kept = cap > 0 ? torch::empty_like(x) : x;  // (N, V) tanh(x/c), or x itself
    Rows r{x.data_ptr<float>(), cap > 0 ? kept.data_ptr<float>() : nullptr, bias.data_ptr<float>(),
           y.data_ptr<int64_t>(), lse.data_ptr<float>(), nll.data_ptr<float>(), N, V, static_cast<float>(cap)};
    forward_rows(r);
    ctx->save_for_backward({kept, y, lse, bias});
    ctx->saved_data["cap"] = cap;
    return nll;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& kept = saved[0];  // (N, V)
    const auto& y = saved[1];     // (N)
    const auto& lse = saved[2];   // (N)
    const auto& bias = saved[3];  // (V)
    const float cap = static_cast<float>(ctx->saved_data["cap"].toDouble());
    auto g = grads[0].to(torch::kFloat).contiguous();  // (N)
    const int64_t N = kept.size(0), V = kept.size(1);
    auto dx = torch::empty({N, V}, kept.options());  // (N, V)
    const float* t = kept.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    const int64_t* yy = y.data_ptr<int64_t>();
    const float* ls = lse.data_ptr<float>();
    const float* gg = g.data_ptr<float>();
    float* d = dx.data_ptr<float>();
    at::parallel_for(0, N, 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float* di = d + i * V;
        const float* ti = t + i * V;
        const int64_t target = yy[i];
        if (target < 0) {
          std::fill(di, di + V, 0.0f);
          continue;
        }
        if (cap > 0) {
          grad_cap_row(ti, b, di, V, cap, ls[i], gg[i]);
          di[target] -= gg[i] * (1.0f - ti[target] * ti[target]);
        } else {
          grad_plain_row(ti, b, di, V, ls[i], gg[i]);
          di[target] -= gg[i];
        }
      }
    });
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool softcapped_nll_supports(const torch::Tensor& logits) {
  return logits.device().is_cpu() && logits.scalar_type() == torch::kFloat && logits.dim() == 2;
}

torch::Tensor softcapped_nll(const torch::Tensor& logits, const torch::Tensor& targets, double cap,
                             const torch::Tensor& bias) {
  if (!softcapped_nll_supports(logits))
    throw Error("internal: softcapped_nll takes CPU fp32 logits of shape (N, V); use the ATen path for others");
  const int64_t N = logits.size(0), V = logits.size(1);
  if (targets.numel() != N)
    throw Error("internal: softcapped_nll got " + std::to_string(targets.numel()) + " targets for " +
                std::to_string(N) + " rows");
  auto x = logits.contiguous();                                        // (N, V)
  auto y = targets.reshape({N}).to(torch::kLong).contiguous();         // (N)
  auto b = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::zeros({V}, x.options());  // (V)
  if (b.numel() != V) throw Error("internal: softcapped_nll bias has " + std::to_string(b.numel()) + " entries for V = " + std::to_string(V));
  check_targets(y.data_ptr<int64_t>(), N, V);
  if (torch::GradMode::is_enabled() && x.requires_grad()) return SoftcapNll::apply(x, y, cap, b);
  // Evaluation: no graph, no kept tanh table; rows are capped into per-thread scratch.
  auto lse = torch::empty({N}, x.options());  // (N)
  auto nll = torch::empty({N}, x.options());  // (N)
  Rows r{x.data_ptr<float>(), nullptr, b.data_ptr<float>(), y.data_ptr<int64_t>(), lse.data_ptr<float>(),
         nll.data_ptr<float>(), N, V, static_cast<float>(cap)};
  forward_rows(r);
  return nll;
}

}  // namespace gllm
