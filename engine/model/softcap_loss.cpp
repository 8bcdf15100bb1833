// Fused soft-capped cross-entropy on the CPU: one row of V logits stays in cache while it is capped,
// reduced and differentiated; the row kernels have AVX2+FMA forms picked from the CPU at load time.
#include "engine/model/softcap_loss.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/io/error.h"
#include "engine/model/simd_math.h"

namespace gllm {

namespace {

using simd::exp_approx;
#ifdef GLLM_HAVE_AVX2_KERNELS
using simd::exp8;
using simd::hmax8;
#endif

// tanh(y): odd polynomial below |y| = 0.625, 1 − 2/(e^{2|y|} + 1) above (|y| clamped at 9, where
// tanh is 1 in float32).
GLLM_ALWAYS_INLINE float tanh_approx(float y) {
  const float a = std::fabs(y);
  const float s = a * a;
  if (a < 0.625f)
    return std::copysign(
        ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s + 1.33314422036e-1f) * s -
         3.33332819422e-1f) * s * a + a,
        y);
  const float e = exp_approx(2.0f * std::min(a, 9.0f));
  return std::copysign(1.0f - 2.0f / (e + 1.0f), y);
}

// The row kernels. Each has a scalar form and, on x86-64, an AVX2+FMA form of the same formulas
// eight lanes at a time, chosen once at load time from the CPU's feature bits.
//   cap_row:      t_j = tanh(x_j / c), returns max_j (c·t_j + b_j)          (capped pass 1)
//   cap_bias_row: x_j ← c·tanh(x_j / c) + b_j in place                      (evaluation logits)
//   max_row:      returns max_j (x_j + b_j)                                  (uncapped pass 1)
//   sum_exp_row:  returns Σ_j exp(a·t_j + b_j − shift)                       (pass 2)
//   grad_row:     dx_j = g · exp(a·t_j + b_j − lse) · (capped ? 1 − t_j² : 1)  (backward)
float cap_row_scalar(const float* x, float* t, const float* b, int64_t V, float cap, int64_t from = 0,
                     float m = -std::numeric_limits<float>::infinity()) {
  const float inv = 1.0f / cap;
  for (int64_t j = from; j < V; ++j) {
    t[j] = tanh_approx(x[j] * inv);
    m = std::max(m, cap * t[j] + b[j]);
  }
  return m;
}
void cap_bias_row_scalar(float* x, const float* b, int64_t V, float cap, int64_t from = 0) {
  const float inv = 1.0f / cap;
  for (int64_t j = from; j < V; ++j) x[j] = cap * tanh_approx(x[j] * inv) + b[j];
}
float max_row_scalar(const float* x, const float* b, int64_t V, int64_t from = 0,
                     float m = -std::numeric_limits<float>::infinity()) {
  for (int64_t j = from; j < V; ++j) m = std::max(m, x[j] + b[j]);
  return m;
}
double sum_exp_row_scalar(const float* t, const float* b, int64_t V, float a, float shift, int64_t from = 0) {
  double s = 0;
  for (int64_t j = from; j < V; ++j) s += exp_approx(a * t[j] + b[j] - shift);
  return s;
}
void grad_row_scalar(const float* t, const float* b, float* dx, int64_t V, float a, bool capped, float lse, float g,
                     int64_t from = 0) {
  for (int64_t j = from; j < V; ++j) {
    const float p = g * exp_approx(a * t[j] + b[j] - lse);
    dx[j] = capped ? p * (1.0f - t[j] * t[j]) : p;
  }
}

#ifdef GLLM_HAVE_AVX2_KERNELS
GLLM_AVX2 inline __m256 tanh8(__m256 y) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, y);
  const __m256 e = exp8(_mm256_mul_ps(_mm256_set1_ps(2.0f), _mm256_min_ps(a, _mm256_set1_ps(9.0f))));
  const __m256 large =
      _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  const __m256 s = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-3.33332819422e-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, s), a, a);
  const __m256 r = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  return _mm256_or_ps(r, _mm256_and_ps(y, sign));
}

GLLM_AVX2 float cap_row_avx2(const float* x, float* t, const float* b, int64_t V, float cap) {
  const __m256 inv = _mm256_set1_ps(1.0f / cap), c = _mm256_set1_ps(cap);
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 8 <= V; j += 8) {
    const __m256 tj = tanh8(_mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
    _mm256_storeu_ps(t + j, tj);
    m = _mm256_max_ps(m, _mm256_fmadd_ps(c, tj, _mm256_loadu_ps(b + j)));
  }
  return cap_row_scalar(x, t, b, V, cap, j, hmax8(m));
}

GLLM_AVX2 void cap_bias_row_avx2(float* x, const float* b, int64_t V, float cap) {
  const __m256 inv = _mm256_set1_ps(1.0f / cap), c = _mm256_set1_ps(cap);
  int64_t j = 0;
  for (; j + 8 <= V; j += 8)
    _mm256_storeu_ps(x + j, _mm256_fmadd_ps(c, tanh8(_mm256_mul_ps(_mm256_loadu_ps(x + j), inv)), _mm256_loadu_ps(b + j)));
  cap_bias_row_scalar(x, b, V, cap, j);
}

GLLM_AVX2 float max_row_avx2(const float* x, const float* b, int64_t V) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 8 <= V; j += 8) m = _mm256_max_ps(m, _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(b + j)));
  return max_row_scalar(x, b, V, j, hmax8(m));
}

GLLM_AVX2 double sum_exp_row_avx2(const float* t, const float* b, int64_t V, float a, float shift) {
  const __m256 av = _mm256_set1_ps(a), sh = _mm256_set1_ps(shift);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= V; j += 16) {
    acc0 = _mm256_add_ps(acc0, exp8(_mm256_sub_ps(_mm256_fmadd_ps(av, _mm256_loadu_ps(t + j), _mm256_loadu_ps(b + j)), sh)));
    acc1 = _mm256_add_ps(
        acc1, exp8(_mm256_sub_ps(_mm256_fmadd_ps(av, _mm256_loadu_ps(t + j + 8), _mm256_loadu_ps(b + j + 8)), sh)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(acc0, acc1));
  double s = 0;
  for (float v : lanes) s += v;
  return s + sum_exp_row_scalar(t, b, V, a, shift, j);
}

GLLM_AVX2 void grad_row_avx2(const float* t, const float* b, float* dx, int64_t V, float a, bool capped, float lse,
                             float g) {
  const __m256 av = _mm256_set1_ps(a), l = _mm256_set1_ps(lse), gv = _mm256_set1_ps(g), one = _mm256_set1_ps(1.0f);
  int64_t j = 0;
  for (; j + 8 <= V; j += 8) {
    const __m256 tj = _mm256_loadu_ps(t + j);
    __m256 p = _mm256_mul_ps(gv, exp8(_mm256_sub_ps(_mm256_fmadd_ps(av, tj, _mm256_loadu_ps(b + j)), l)));
    if (capped) p = _mm256_mul_ps(p, _mm256_fnmadd_ps(tj, tj, one));
    _mm256_storeu_ps(dx + j, p);
  }
  grad_row_scalar(t, b, dx, V, a, capped, lse, g, j);
}

const bool kHaveAvx2 = simd::cpu_has_avx2_fma();
#endif

float cap_row(const float* x, float* t, const float* b, int64_t V, float cap) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (kHaveAvx2) return cap_row_avx2(x, t, b, V, cap);
#endif
  return cap_row_scalar(x, t, b, V, cap);
}
void cap_bias_row(float* x, const float* b, int64_t V, float cap) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (kHaveAvx2) return cap_bias_row_avx2(x, b, V, cap);
#endif
  cap_bias_row_scalar(x, b, V, cap);
}
float max_row(const float* x, const float* b, int64_t V) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (kHaveAvx2) return max_row_avx2(x, b, V);
#endif
  return max_row_scalar(x, b, V);
}
double sum_exp_row(const float* t, const float* b, int64_t V, float a, float shift) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (kHaveAvx2) return sum_exp_row_avx2(t, b, V, a, shift);
#endif
  return sum_exp_row_scalar(t, b, V, a, shift);
}
void grad_row(const float* t, const float* b, float* dx, int64_t V, float a, bool capped, float lse, float g) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (kHaveAvx2) return grad_row_avx2(t, b, dx, V, a, capped, lse, g);
#endif
  grad_row_scalar(t, b, dx, V, a, capped, lse, g);
}

struct Rows {
  const float* x = nullptr;  // (N, V) raw logits
  float* t = nullptr;        // (N, V) where tanh(x/c) goes (may be x itself); null: per-thread scratch
  const float* b = nullptr;  // (V)
  const int64_t* y = nullptr;
  float* lse = nullptr;  // (N)
  float* nll = nullptr;  // (N)
  int64_t N = 0, V = 0;
  float cap = 0;  // ≤ 0: no cap
};

void check_targets(const torch::Tensor& y, int64_t V) {
  const int64_t* p = y.data_ptr<int64_t>();
  for (int64_t i = 0; i < y.numel(); ++i)
    if (p[i] >= V)
      throw Error("target token id " + std::to_string(p[i]) + " is outside the vocabulary of " + std::to_string(V) +
                  "; the data was tokenized with a larger tokenizer than the model's (retokenize, or set "
                  "model.vocab_size to the tokenizer's size)");
}

// Pass 1 and 2 of every row: lse_i and nll_i; capped rows leave tanh(x/c) in r.t.
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

// nats (N) and lse (N) of the rows of x (N, V); capped rows leave tanh(x/c) in t (null: scratch).
std::pair<torch::Tensor, torch::Tensor> row_nats(const float* x, float* t, const torch::Tensor& y,
                                                 const torch::Tensor& bias, double cap, int64_t N, int64_t V) {
  auto nll = torch::empty({N}, bias.options());  // (N)
  auto lse = torch::empty({N}, bias.options());  // (N)
  forward_rows({x, t, bias.data_ptr<float>(), y.data_ptr<int64_t>(), lse.data_ptr<float>(), nll.data_ptr<float>(),
                N, V, static_cast<float>(cap)});
  return {nll, lse};
}

// The output layer's logits h·Wᵀ into buffer (N, V), then their nats, the capped table left in place.
std::pair<torch::Tensor, torch::Tensor> linear_nats(torch::Tensor& buffer, const torch::Tensor& h,
                                                    const torch::Tensor& W, const torch::Tensor& y,
                                                    const torch::Tensor& bias, double cap) {
  at::mm_out(buffer, h, W.t());  // (N, V) logits
  float* x = buffer.data_ptr<float>();
  return row_nats(x, cap > 0 ? x : nullptr, y, bias, cap, buffer.size(0), buffer.size(1));
}

// d nats_i / d x_ij · g_i for every row from the kept t (tanh(x/c), or x uncapped); dx may be t.
void backward_rows(const torch::Tensor& kept, const torch::Tensor& bias, const torch::Tensor& y,
                   const torch::Tensor& lse, const torch::Tensor& g, float cap, float* dx) {
  const int64_t N = kept.size(0), V = kept.size(1);
  const float* t = kept.data_ptr<float>();
  const float* b = bias.data_ptr<float>();
  const int64_t* yy = y.data_ptr<int64_t>();
  const float* ls = lse.data_ptr<float>();
  const float* gg = g.data_ptr<float>();
  const bool capped = cap > 0;
  at::parallel_for(0, N, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* di = dx + i * V;
      const float* ti = t + i * V;
      const int64_t target = yy[i];
      if (target < 0) {
        std::fill(di, di + V, 0.0f);
        continue;
      }
      const float t_target = ti[target];  // read before the row is overwritten in place
      grad_row(ti, b, di, V, capped ? cap : 1.0f, capped, ls[i], gg[i]);
      di[target] -= capped ? gg[i] * (1.0f - t_target * t_target) : gg[i];
    }
  });
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// nats from logits x (N, V): the capped table goes to a new buffer (x may be used elsewhere).
class SoftcapNll : public torch::autograd::Function<SoftcapNll> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& y, double cap,
                               const torch::Tensor& bias) {
    torch::Tensor kept = cap > 0 ? torch::empty_like(x) : x;  // (N, V) tanh(x/c), or x itself
    auto [nll, lse] = row_nats(x.data_ptr<float>(), cap > 0 ? kept.data_ptr<float>() : nullptr, y, bias, cap,
                               x.size(0), x.size(1));
    ctx->save_for_backward({kept, y, lse, bias});
    ctx->saved_data["cap"] = cap;
    return nll;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    auto g = grads[0].to(torch::kFloat).contiguous();  // (N)
    auto dx = torch::empty_like(saved[0]);            // (N, V)
    backward_rows(saved[0], saved[3], saved[1], saved[2], g, static_cast<float>(ctx->saved_data["cap"].toDouble()),
                  dx.data_ptr<float>());
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// nats from the final hidden states h (N, d) and the output layer W (V, d): the logits, their
// capped table and their gradient share one (N, V) workspace buffer, overwritten in place.
class LinearSoftcapNll : public torch::autograd::Function<LinearSoftcapNll> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& W,
                               const torch::Tensor& y, double cap, const torch::Tensor& bias, torch::Tensor buffer) {
    auto [nll, lse] = linear_nats(buffer, h, W, y, bias, cap);
    ctx->save_for_backward({h, W, buffer, y, lse, bias});
    ctx->saved_data["cap"] = cap;
    return nll;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &h = saved[0], &W = saved[1], &buffer = saved[2];
    auto g = grads[0].to(torch::kFloat).contiguous();  // (N)
    // The kept table becomes d loss / d logits row by row (a second backward would find it spent).
    backward_rows(buffer, saved[5], saved[3], saved[4], g, static_cast<float>(ctx->saved_data["cap"].toDouble()),
                  buffer.data_ptr<float>());
    torch::Tensor dh, dW;
    if (ctx->needs_input_grad(0)) dh = torch::mm(buffer, W);      // (N, d)
    if (ctx->needs_input_grad(1)) dW = torch::mm(buffer.t(), h);  // (V, d)
    return {dh, dW, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Targets as contiguous int64 (N) and the bias as contiguous fp32 (V), zeros when absent.
std::pair<torch::Tensor, torch::Tensor> prepare(const torch::Tensor& targets, const torch::Tensor& bias, int64_t N,
                                                int64_t V, const torch::TensorOptions& opts) {
  if (targets.numel() != N)
    throw Error("internal: the fused cross-entropy got " + std::to_string(targets.numel()) + " targets for " +
                std::to_string(N) + " rows");
  auto y = targets.reshape({N}).to(torch::kLong).contiguous();  // (N)
  auto b = bias.defined() ? bias.to(opts.device()).to(torch::kFloat).contiguous() : torch::zeros({V}, opts);  // (V)
  if (b.numel() != V)
    throw Error("internal: the fused cross-entropy bias has " + std::to_string(b.numel()) + " entries for V = " +
                std::to_string(V));
  check_targets(y, V);
  return {y, b};
}

}  // namespace

torch::Tensor LogitWorkspace::take(int64_t rows, int64_t cols, const torch::TensorOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool fits = buffer_.defined() && buffer_.size(0) == rows && buffer_.size(1) == cols &&
                    buffer_.device() == options.device() && buffer_.scalar_type() == torch::kFloat;
  // A pending graph (forward done, backward not yet) still holds the storage: give a fresh one.
  // (Saved inputs keep the tensor itself, views keep the storage: both counts must be ours alone.)
  if (!fits || buffer_.use_count() > 1 || buffer_.storage().use_count() > 1)
    buffer_ = torch::empty({rows, cols}, options.dtype(torch::kFloat));
  return buffer_;
}

bool softcapped_nll_supports(const torch::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 2;
}

torch::Tensor softcapped_nll(const torch::Tensor& logits, const torch::Tensor& targets, double cap,
                             const torch::Tensor& bias) {
  if (!softcapped_nll_supports(logits))
    throw Error("internal: softcapped_nll takes CPU fp32 logits of shape (N, V); use the ATen path for others");
  const int64_t N = logits.size(0), V = logits.size(1);
  auto x = logits.contiguous();  // (N, V)
  auto [y, b] = prepare(targets, bias, N, V, x.options());
  if (torch::GradMode::is_enabled() && x.requires_grad()) return SoftcapNll::apply(x, y, cap, b);
  // Evaluation: no graph, no kept table; rows are capped into per-thread scratch.
  return row_nats(x.data_ptr<float>(), nullptr, y, b, cap, N, V).first;
}

void softcap_logits_(torch::Tensor& logits, double cap, const torch::Tensor& bias) {
  if (!softcapped_nll_supports(logits) || !logits.is_contiguous())
    throw Error("internal: softcap_logits_ takes contiguous CPU fp32 logits of shape (N, V)");
  const int64_t N = logits.size(0), V = logits.size(1);
  auto b = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::Tensor();  // (V)
  if (b.defined() && b.numel() != V) throw Error("internal: softcap_logits_ bias has the wrong length");
  if (cap <= 0) {
    if (b.defined()) logits.add_(b);
    return;
  }
  std::vector<float> zeros(b.defined() ? 0 : V, 0.0f);
  const float* bp = b.defined() ? b.data_ptr<float>() : zeros.data();
  float* x = logits.data_ptr<float>();
  at::parallel_for(0, N, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) cap_bias_row(x + i * V, bp, V, static_cast<float>(cap));
  });
}

torch::Tensor linear_softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& weight,
                                    const torch::Tensor& targets, double cap, const torch::Tensor& bias,
                                    LogitWorkspace& workspace) {
  if (!softcapped_nll_supports(hidden) || !softcapped_nll_supports(weight) || hidden.size(1) != weight.size(1))
    throw Error("internal: linear_softcapped_nll takes CPU fp32 hidden (N, d) and weight (V, d)");
  const int64_t N = hidden.size(0), V = weight.size(0);
  auto h = hidden.contiguous();  // (N, d)
  auto [y, b] = prepare(targets, bias, N, V, h.options());
  auto buffer = workspace.take(N, V, h.options());  // (N, V)
  if (torch::GradMode::is_enabled() && (h.requires_grad() || weight.requires_grad()))
    return LinearSoftcapNll::apply(h, weight, y, cap, b, buffer);
  torch::NoGradGuard no_grad;
  return linear_nats(buffer, h, weight, y, b, cap).first;
}

}  // namespace gllm
