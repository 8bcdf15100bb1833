// Fused soft-capped cross-entropy on the CPU: one pass over each row of V logits caps,
// exponentiates, sums and leaves the unnormalised gradient; the row kernels have AVX2+FMA and
// AVX-512 forms of one source, picked by the active ISA.
#include "engine/ops/softcapped_nll.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/io/error.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/panel_gemm.h"
#include "engine/ops/simd_math.h"
#include "engine/runtime/torch_compat.h"

namespace gllm::ops {

namespace {

using simd::exp_approx;

// tanh(y): odd polynomial below |y| = 0.625, 1 − 2/(e^{2|y|} + 1) above (|y| clamped at 9, where
// tanh is 1 in float32).
GLLM_ALWAYS_INLINE float tanh_approx(float y) {
  const float a = std::fabs(y);
  const float s = a * a;
  if (a < 0.625f)
    return std::copysign(
        ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s +
          1.33314422036e-1f) *
             s -
         3.33332819422e-1f) *
                s * a +
            a,
        y);
  const float e = exp_approx(2.0f * std::min(a, 9.0f));
  return std::copysign(1.0f - 2.0f / (e + 1.0f), y);
}

// The row kernels. Each has a scalar form and, on x86-64, one lane-generic form of the same
// formulas (softcapped_rows.inc) compiled for AVX2+FMA (8 lanes) and AVX-512 (16 lanes), picked per
// call from kernels::active_isa(). The forward pass leaves in u the unnormalised gradient e_j·(1 −
// t_j²), e_j = exp(z_j − shift), so the backward pass needs no elementwise pass over the (N, V)
// table of its own (x and u may be the same row):
//   cap_row:      t_j = tanh(x_j / c), returns max_j (c·t_j + b_j)             (capped pass 1)
//   cap_bias_row: x_j ← c·tanh(x_j / c) + b_j in place                         (evaluation logits)
//   max_row:      returns max_j (x_j + b_j)                                     (uncapped pass 1)
//   exp_row:      e_j = exp(a·t_j + b_j − shift), u_j = e_j·(capped ? 1 − t_j² : 1), returns Σ e_j
//   cap_exp_row:  t_j = tanh(x_j / c), then exp_row with a = c: one pass under a fixed shift
float cap_row_scalar(const float* x, float* t, const float* b, int64_t V, float cap,
                     int64_t from = 0, float m = -std::numeric_limits<float>::infinity()) {
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
double exp_row_scalar(const float* t, const float* b, float* u, int64_t V, float a, bool capped,
                      float shift, int64_t from = 0) {
  double s = 0;
  for (int64_t j = from; j < V; ++j) {
    const float tj = t[j];
    const float e = exp_approx(a * tj + b[j] - shift);
    s += e;
    u[j] = capped ? e * (1.0f - tj * tj) : e;
  }
  return s;
}
// The one-pass lane: with q = 1/(exp(2x/c) + 1), t = tanh(x/c) = 1 − 2q and 1 − t² = 4q(1 − q), so
// z − shift = (b + c − shift) − 2c·q, e = exp(z − shift) and u = e·4q(1 − q): two exps, one
// division, no branch (2x/c is clamped to ±18, where tanh is ±1 in float32). t and 1 − t² keep an
// absolute error of a few ulp of 1, which is what c·t and the gradient need.
GLLM_ALWAYS_INLINE float cap_exp_lane(float x, float b, float two_over_c, float two_c,
                                      float c_minus_shift, float& u) {
  const float q = 1.0f / (exp_approx(std::min(std::max(x * two_over_c, -18.0f), 18.0f)) + 1.0f);
  const float e = exp_approx(b + c_minus_shift - two_c * q);
  u = e * (4.0f * q * (1.0f - q));
  return e;
}
double cap_exp_row_scalar(const float* x, const float* b, float* u, int64_t V, float cap,
                          float shift, int64_t from = 0) {
  double s = 0;
  for (int64_t j = from; j < V; ++j)
    s += cap_exp_lane(x[j], b[j], 2.0f / cap, 2.0f * cap, cap - shift, u[j]);
  return s;
}

#define GLLM_ROWS_FILE "engine/ops/softcapped_rows.inc"
#include "engine/ops/rows_per_isa.inc"

// The row kernels of kernels::active_isa(): AVX-512, AVX2+FMA or the scalar forms.
float cap_row(const float* x, float* t, const float* b, int64_t V, float cap) {
  GLLM_ROW_KERNEL(cap_row, x, t, b, V, cap);
}
void cap_bias_row(float* x, const float* b, int64_t V, float cap) {
  GLLM_ROW_KERNEL(cap_bias_row, x, b, V, cap);
}
float max_row(const float* x, const float* b, int64_t V) {
  GLLM_ROW_KERNEL(max_row, x, b, V);
}
double exp_row(const float* t, const float* b, float* u, int64_t V, float a, bool capped,
               float shift) {
  GLLM_ROW_KERNEL(exp_row, t, b, u, V, a, capped, shift);
}
double cap_exp_row(const float* x, const float* b, float* u, int64_t V, float cap, float shift) {
  GLLM_ROW_KERNEL(cap_exp_row, x, b, u, V, cap, shift);
}

// Capped logits z = c·tanh(x/c) + b lie in [−c + min b, c + max b], so c + max b bounds every row's
// maximum: one pass suffices while the smallest e = exp(z − shift) stays a normal float, with room
// for the factor 1 − t² (≥ 1e-8 at the clamp), i.e. while 2c + (max b − min b) ≤ 60.
constexpr float kFixedShiftRange = 60.0f;

struct Rows {
  float* x = nullptr;  // (N, V) raw logits; overwritten by u when u is x
  float* u = nullptr;  // (N, V) where e·(1 − t²) goes (may be x); null: per-thread scratch
  const float* b = nullptr;  // (V)
  const int64_t* y = nullptr;
  float* nll = nullptr;      // (N) log Σ_j exp z_j − z_y, 0 where y < 0
  float* inv_sum = nullptr;  // (N) 1 / Σ_j e_j: scales u to d nll / d x (may be null)
  float* slope_y = nullptr;  // (N) dz_y / dx_y = 1 − t_y² (1 uncapped) (may be null)
  int64_t N = 0, V = 0;
  float cap = 0;  // ≤ 0: no cap
};

void check_targets(const torch::Tensor& y, int64_t V) {
  const int64_t* p = y.data_ptr<int64_t>();
  for (int64_t i = 0; i < y.numel(); ++i)
    if (p[i] >= V)
      throw Error(
          "target token id " + std::to_string(p[i]) + " is outside the vocabulary of " +
          std::to_string(V) +
          "; the data was tokenized with a larger tokenizer than the model's (retokenize, or set "
          "model.vocab_size to the tokenizer's size)");
}

// The shift that bounds every capped row's maximum, c + max b, when one pass may use it (the bias
// range leaves e a normal float); NaN when two passes are needed (no cap, or too wide a bias).
float fixed_shift(const float* b, int64_t V, float cap) {
  if (cap <= 0 || V == 0) return std::numeric_limits<float>::quiet_NaN();
  const auto [lo, hi] = std::minmax_element(b, b + V);
  return 2.0f * cap + (*hi - *lo) <= kFixedShiftRange ? cap + *hi
                                                      : std::numeric_limits<float>::quiet_NaN();
}

// Row i's nats and gradient factors from its shift, Σ e and t_y (the target's capped value, or its
// logit uncapped).
void store_row(const Rows& r, int64_t i, float shift, double sum, float t_y) {
  const bool capped = r.cap > 0;
  const int64_t y = r.y[i];
  const float lse = shift + static_cast<float>(std::log(sum));
  r.nll[i] = y < 0 ? 0.0f : lse - ((capped ? r.cap * t_y : t_y) + r.b[y]);
  if (r.inv_sum) r.inv_sum[i] = static_cast<float>(1.0 / sum);
  if (r.slope_y) r.slope_y[i] = capped ? 1.0f - t_y * t_y : 1.0f;
}

// Every row's nll and the factors of its gradient; u_i gets e·(1 − t²) (uncapped: e). Capped rows
// take one pass under the fixed shift c + max b when the bias range allows, two passes otherwise.
void forward_rows(const Rows& r) {
  const bool capped = r.cap > 0;
  const float one_pass_shift = fixed_shift(r.b, r.V, r.cap);
  const bool one_pass = !std::isnan(one_pass_shift);
  at::parallel_for(0, r.N, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(r.u ? 0 : r.V);
    for (int64_t i = begin; i < end; ++i) {
      float* x = r.x + i * r.V;
      float* u = r.u ? r.u + i * r.V : scratch.data();
      const int64_t y = r.y[i];
      float shift, t_y = 0;
      double sum;
      if (one_pass) {
        if (y >= 0) t_y = tanh_approx(x[y] / r.cap);  // read before u overwrites the row
        shift = one_pass_shift;
        sum = cap_exp_row(x, r.b, u, r.V, r.cap, shift);
      } else {
        shift = capped ? cap_row(x, u, r.b, r.V, r.cap) : max_row(x, r.b, r.V);  // capped: t in u
        const float* t = capped ? u : x;
        if (y >= 0) t_y = t[y];
        sum = exp_row(t, r.b, u, r.V, capped ? r.cap : 1.0f, capped, shift);
      }
      store_row(r, i, shift, sum, t_y);
    }
  });
}

// The output layer's logits h·Wᵀ as a panel product (engine/ops/panel_gemm.h) whose row epilogue is
// the one-pass row kernel: each row segment goes through cap_exp_row in place while it is in L1, so
// the logits make no trip through memory before the row pass, and no zeroing pass precedes them (as
// OpenBLAS's does). Rows that take one pass only (shift finite); t_y from the target's own dot
// product.
void linear_rows_tiled(const Rows& r, const float* h, const torch::Tensor& W, float shift) {
  const int64_t d = W.size(1);
  auto panels = torch::empty({panel::packed_floats(d, r.V)}, W.options());  // (⌈V/16⌉·d·16)
  panel::pack_transposed(W.data_ptr<float>(), d, r.V, d, panels.data_ptr<float>());
  std::vector<double> sums(r.N, 0.0);
  const panel::RowEpilogue row_pass = [&](int64_t i, int64_t col0, int64_t cols) {
    float* seg = r.u + i * r.V + col0;
    sums[i] += cap_exp_row(seg, r.b + col0, seg, cols, r.cap, shift);
  };
  panel::multiply(h, d, r.N, d, panels.data_ptr<float>(), r.V, r.u, r.V, &row_pass);
  const float* w = W.data_ptr<float>();
  for (int64_t i = 0; i < r.N; ++i) {
    float t_y = 0;
    if (r.y[i] >= 0) {
      float x_y = 0;
      for (int64_t k = 0; k < d; ++k) x_y += h[i * d + k] * w[r.y[i] * d + k];
      t_y = tanh_approx(x_y / r.cap);
    }
    store_row(r, i, shift, sums[i], t_y);
  }
}

// What a forward pass leaves for its backward: per row (N) the nats, 1/Σe and 1 − t_y².
struct RowStats {
  torch::Tensor nll, inv_sum, slope_y;
};

// The rows of x (N, V): their nats and, when u is given, e·(1 − t²) in u (which may be x) and the
// gradient factors; without u the rows go through per-thread scratch and x is left alone.
// The stats tensors of N rows, and the Rows that point at them (x and u still to be set).
std::pair<RowStats, Rows> stats_for(const torch::Tensor& y, const torch::Tensor& bias, double cap,
                                    int64_t N, int64_t V, bool with_grad_factors) {
  RowStats s;
  s.nll = torch::empty({N}, bias.options());  // (N)
  if (with_grad_factors) {
    s.inv_sum = torch::empty({N}, bias.options());  // (N)
    s.slope_y = torch::empty({N}, bias.options());  // (N)
  }
  Rows r{nullptr,
         nullptr,
         bias.data_ptr<float>(),
         y.data_ptr<int64_t>(),
         s.nll.data_ptr<float>(),
         with_grad_factors ? s.inv_sum.data_ptr<float>() : nullptr,
         with_grad_factors ? s.slope_y.data_ptr<float>() : nullptr,
         N,
         V,
         static_cast<float>(cap)};
  return {s, r};
}

RowStats row_nats(float* x, float* u, const torch::Tensor& y, const torch::Tensor& bias, double cap,
                  int64_t N, int64_t V) {
  auto [s, r] = stats_for(y, bias, cap, N, V, u != nullptr);
  r.x = x;
  r.u = u;
  forward_rows(r);
  return s;
}

// The output layer's logits h·Wᵀ into buffer (N, V), then their nats; with keep, the buffer is left
// holding e·(1 − t²) (and without keep it may be too: it is scratch then).
RowStats linear_nats(torch::Tensor& buffer, const torch::Tensor& h, const torch::Tensor& W,
                     const torch::Tensor& y, const torch::Tensor& bias, double cap, bool keep) {
  const int64_t N = buffer.size(0), V = buffer.size(1);
  const float shift = fixed_shift(bias.data_ptr<float>(), V, static_cast<float>(cap));
  const auto library = [&] {
    at::mm_out(buffer, h, W.t());  // (N, V) logits
    float* x = buffer.data_ptr<float>();
    return row_nats(x, keep ? x : nullptr, y, bias, cap, N, V);
  };
  if (!(panel::available() && !std::isnan(shift) && h.size(1) > 0 &&
        h.size(1) <= panel::kMaxInner && N >= panel::kMinRows))
    return library();
  const auto Wc = W.contiguous();  // (V, d)
  const auto tiled = [&] {
    // Seen by the profiler as one product of these shapes (the bench's GEMM bound counts it).
    RECORD_FUNCTION("gllm::tiled_logits", std::vector<c10::IValue>({h, W.t()}));
    auto [s, r] = stats_for(y, bias, cap, N, V, keep);
    r.u = buffer.data_ptr<float>();
    linear_rows_tiled(r, h.data_ptr<float>(), Wc, shift);
    return s;
  };
  const auto side = kernels::choose(
      "logits", N, h.size(1), V, [&] { tiled(); }, [&] { library(); });
  return side == kernels::Side::Own ? tiled() : library();
}

// d nll_i / d x_ij · g_i = r_i·u_ij − s_i·[j = y_i] with r = g/Σe and s = g·(1 − t_y²), both zero
// where y < 0. Returns r (N) and s (N), and the targets clamped to valid rows (N) for gathering.
struct GradFactors {
  torch::Tensor row_scale, target_scale, target;
};
GradFactors grad_factors(const torch::Tensor& g, const torch::Tensor& y,
                         const torch::Tensor& inv_sum, const torch::Tensor& slope_y) {
  auto valid = (y >= 0).to(g.scalar_type());  // (N)
  auto gv = g * valid;                        // (N)
  return {gv * inv_sum, gv * slope_y, y.clamp_min(0)};
}

// The transpose of a contiguous fp32 (R, C) matrix as a new contiguous (C, R) one, in 32 × 32 tiles
// that stay in cache (a strided copy walks one of the two with a stride of a whole row per
// element).
torch::Tensor transpose_rows(const torch::Tensor& a) {
  const int64_t R = a.size(0), C = a.size(1);
  auto out = torch::empty({C, R}, a.options());  // (C, R)
  const float* src = a.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  constexpr int64_t kTile = 32;
  at::parallel_for(0, (C + kTile - 1) / kTile, 1, [&](int64_t begin, int64_t end) {
    for (int64_t cb = begin * kTile; cb < std::min(C, end * kTile); cb += kTile)
      for (int64_t rb = 0; rb < R; rb += kTile)
        for (int64_t c = cb; c < std::min(C, cb + kTile); ++c)
          for (int64_t r = rb; r < std::min(R, rb + kTile); ++r) dst[c * R + r] = src[r * C + c];
  });
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// nats from logits x (N, V): e·(1 − t²) goes to a new table (x may be used elsewhere).
class SoftcapNll : public torch::autograd::Function<SoftcapNll> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& y,
                               double cap, const torch::Tensor& bias) {
    auto kept = torch::empty_like(x);  // (N, V) e·(1 − t²)
    RowStats s =
        row_nats(x.data_ptr<float>(), kept.data_ptr<float>(), y, bias, cap, x.size(0), x.size(1));
    ctx->save_for_backward({kept, y, s.inv_sum, s.slope_y});
    return s.nll;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto& kept = saved[0];
    auto g = grads[0].to(torch::kFloat).contiguous();  // (N)
    GradFactors f = grad_factors(g, saved[1], saved[2], saved[3]);
    auto dx = kept * f.row_scale.unsqueeze(1);  // (N, V)
    const int64_t N = dx.size(0), V = dx.size(1);
    float* d = dx.data_ptr<float>();
    const int64_t* yy = f.target.data_ptr<int64_t>();
    const float* s = f.target_scale.data_ptr<float>();
    for (int64_t i = 0; i < N; ++i) d[i * V + yy[i]] -= s[i];
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// nats from the final hidden states h (N, d) and the output layer W (V, d): the logits and then
// e·(1 − t²) share one (N, V) workspace buffer; the backward pass is the buffer's two products with
// their rows scaled, and a correction at the targets.
class LinearSoftcapNll : public torch::autograd::Function<LinearSoftcapNll> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& W,
                               const torch::Tensor& y, double cap, const torch::Tensor& bias,
                               torch::Tensor buffer) {
    RowStats s = linear_nats(buffer, h, W, y, bias, cap, /*keep=*/true);
    ctx->save_for_backward({h, W, buffer, y, s.inv_sum, s.slope_y});
    return s.nll;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &h = saved[0], &W = saved[1], &kept = saved[2];
    auto g = grads[0].to(torch::kFloat).contiguous();  // (N)
    GradFactors f = grad_factors(g, saved[3], saved[4], saved[5]);
    auto ts = f.target_scale.unsqueeze(1);  // (N, 1)
    // The products come back fp32 even where an autocast scope made them in a lower precision.
    torch::Tensor dh, dW;
    if (ctx->needs_input_grad(0)) {
      dh = torch::mm(kept, W).to(torch::kFloat).mul_(f.row_scale.unsqueeze(1));  // (N, d)
      dh.sub_(W.index_select(0, f.target) * ts);
    }
    if (ctx->needs_input_grad(1)) {
      // (h·r)ᵀ·kept, then transposed: OpenBLAS packs kept's rows as they lie, much faster than
      // keptᵀ's.
      auto dW_t = torch::mm((h * f.row_scale.unsqueeze(1)).t(), kept)
                      .to(torch::kFloat)
                      .contiguous();  // (d, V)
      dW = transpose_rows(dW_t);      // (V, d)
      dW.index_add_(0, f.target, h * (-ts));
    }
    return {dh, dW, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// nats from h (N, d) and W (V, d) in row chunks, for devices without the fused CPU kernel (CUDA):
// each chunk's logits are made, capped and reduced to their log-sum-exp, then dropped; backward
// makes them again, chunk by chunk. Peak memory holds a chunk's few (rows, V) fp32 tensors, never
// the (N, V) ones of the ATen formula (logits, their cap, log-softmax: ~4 GiB each at N = 131072,
// V = 8192). The products run in `compute` (the autocast dtype when a scope was open at forward),
// everything after them in fp32, as the ATen path does under autocast.
class ChunkedSoftcapNll : public torch::autograd::Function<ChunkedSoftcapNll> {
 public:
  // (rows, V) fp32 capped and biased logits of rows [a, b), and tanh(x/c) (cap > 0) for backward.
  static std::pair<torch::Tensor, torch::Tensor> capped(const torch::Tensor& h,
                                                        const torch::Tensor& Wc,
                                                        const torch::Tensor& bias, double cap,
                                                        at::ScalarType compute, int64_t a,
                                                        int64_t b) {
    auto x = torch::mm(h.slice(0, a, b).to(compute), Wc.t()).to(torch::kFloat);  // (rows, V)
    torch::Tensor t;
    if (cap > 0) {
      t = torch::tanh(x / cap);  // (rows, V)
      x = t * cap;
    }
    if (bias.numel() > 0) x = x + bias;
    return {x, t};
  }

  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& W,
                               const torch::Tensor& y, double cap, const torch::Tensor& bias,
                               int64_t chunk, int64_t compute) {
    const auto cdt = static_cast<at::ScalarType>(compute);
    const int64_t N = h.size(0);
    const auto Wc = W.to(cdt);                                       // (V, d)
    auto lse = torch::empty({N}, h.options().dtype(torch::kFloat));  // (N)
    auto z_y = torch::empty({N}, h.options().dtype(torch::kFloat));  // (N)
    const auto yc = y.clamp_min(0);                                  // (N)
    for (int64_t a = 0; a < N; a += chunk) {
      const int64_t b = std::min(N, a + chunk);
      auto [z, t] = capped(h, Wc, bias, cap, cdt, a, b);  // (rows, V)
      lse.slice(0, a, b).copy_(torch::logsumexp(z, 1));
      z_y.slice(0, a, b).copy_(z.gather(1, yc.slice(0, a, b).unsqueeze(1)).squeeze(1));
    }
    ctx->save_for_backward({h, W, y, lse, bias});
    ctx->saved_data["cap"] = cap;
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["compute"] = compute;
    return (lse - z_y) * (y >= 0).to(torch::kFloat);  // (N)
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &h = saved[0], &W = saved[1], &y = saved[2], &lse = saved[3], &bias = saved[4];
    const double cap = ctx->saved_data["cap"].toDouble();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    const auto cdt = static_cast<at::ScalarType>(ctx->saved_data["compute"].toInt());
    const int64_t N = h.size(0);
    const auto g = grads[0].to(torch::kFloat) * (y >= 0).to(torch::kFloat);                // (N)
    const auto yc = y.clamp_min(0);                                                        // (N)
    const auto Wc = W.to(cdt);                                                             // (V, d)
    torch::Tensor dh = ctx->needs_input_grad(0) ? torch::empty_like(h) : torch::Tensor();  // (N, d)
    torch::Tensor dW = ctx->needs_input_grad(1)
                           ? torch::zeros(W.sizes(), W.options().dtype(torch::kFloat))
                           : torch::Tensor();  // (V, d)
    for (int64_t a = 0; a < N; a += chunk) {
      const int64_t b = std::min(N, a + chunk);
      auto [z, t] = capped(h, Wc, bias, cap, cdt, a, b);       // (rows, V)
      auto dz = (z - lse.slice(0, a, b).unsqueeze(1)).exp_();  // (rows, V) softmax
      dz.scatter_add_(1, yc.slice(0, a, b).unsqueeze(1),
                      torch::full({b - a, 1}, -1.0f, dz.options()));  // − one-hot
      dz.mul_(g.slice(0, a, b).unsqueeze(1));
      if (cap > 0) dz.mul_(1 - t * t);  // d(c·tanh(x/c))/dx
      const auto dzc = dz.to(cdt);      // (rows, V)
      if (dh.defined()) dh.slice(0, a, b).copy_(torch::mm(dzc, Wc));
      if (dW.defined()) dW.add_(torch::mm(dzc.t(), h.slice(0, a, b).to(cdt)).to(torch::kFloat));
    }
    return {dh,
            dW.defined() ? dW.to(W.scalar_type()) : dW,
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

// Targets as contiguous int64 (N) and the bias as contiguous fp32 (V), zeros when absent.
std::pair<torch::Tensor, torch::Tensor> prepare(const torch::Tensor& targets,
                                                const torch::Tensor& bias, int64_t N, int64_t V,
                                                const torch::TensorOptions& opts) {
  if (targets.numel() != N)
    throw Error("internal: the fused cross-entropy got " + std::to_string(targets.numel()) +
                " targets for " + std::to_string(N) + " rows");
  auto y = targets.reshape({N}).to(torch::kLong).contiguous();  // (N)
  auto b = bias.defined() ? bias.to(opts.device()).to(torch::kFloat).contiguous()
                          : torch::zeros({V}, opts);  // (V)
  if (b.numel() != V)
    throw Error("internal: the fused cross-entropy bias has " + std::to_string(b.numel()) +
                " entries for V = " + std::to_string(V));
  check_targets(y, V);
  return {y, b};
}

}  // namespace

torch::Tensor LogitWorkspace::take(int64_t rows, int64_t cols,
                                   const torch::TensorOptions& options) {
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
    throw Error(
        "internal: softcapped_nll takes CPU fp32 logits of shape (N, V); use the ATen path for "
        "others");
  const int64_t N = logits.size(0), V = logits.size(1);
  auto x = logits.contiguous();  // (N, V)
  auto [y, b] = prepare(targets, bias, N, V, x.options());
  if (torch::GradMode::is_enabled() && x.requires_grad()) return SoftcapNll::apply(x, y, cap, b);
  // Evaluation: no graph, no kept table; rows are capped into per-thread scratch.
  return row_nats(x.data_ptr<float>(), nullptr, y, b, cap, N, V).nll;
}

void softcap_logits_(torch::Tensor& logits, double cap, const torch::Tensor& bias) {
  if (!softcapped_nll_supports(logits) || !logits.is_contiguous())
    throw Error("internal: softcap_logits_ takes contiguous CPU fp32 logits of shape (N, V)");
  const int64_t N = logits.size(0), V = logits.size(1);
  auto b = bias.defined() ? bias.to(torch::kFloat).contiguous() : torch::Tensor();  // (V)
  if (b.defined() && b.numel() != V)
    throw Error("internal: softcap_logits_ bias has the wrong length");
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
                                    const torch::Tensor& targets, double cap,
                                    const torch::Tensor& bias, LogitWorkspace& workspace) {
  if (!softcapped_nll_supports(hidden) || !softcapped_nll_supports(weight) ||
      hidden.size(1) != weight.size(1))
    throw Error("internal: linear_softcapped_nll takes CPU fp32 hidden (N, d) and weight (V, d)");
  const int64_t N = hidden.size(0), V = weight.size(0);
  auto h = hidden.contiguous();  // (N, d)
  auto [y, b] = prepare(targets, bias, N, V, h.options());
  auto buffer = workspace.take(N, V, h.options());  // (N, V)
  if (torch::GradMode::is_enabled() && (h.requires_grad() || weight.requires_grad()))
    return LinearSoftcapNll::apply(h, weight, y, cap, b, buffer);
  torch::NoGradGuard no_grad;
  return linear_nats(buffer, h, weight, y, b, cap, /*keep=*/false).nll;
}

torch::Tensor softcap(torch::Tensor logits, double cap, const torch::Tensor& bias) {
  if (!(torch::GradMode::is_enabled() && logits.requires_grad()) && logits.is_contiguous()) {
    auto flat = logits.view({-1, logits.size(-1)});  // (N, V)
    if (softcapped_nll_supports(flat)) {
      softcap_logits_(flat, cap, bias);
      return logits;
    }
  }
  if (cap > 0) logits = cap * torch::tanh(logits / cap);
  if (bias.defined()) logits = logits + bias.to(logits.scalar_type());
  return logits;
}

torch::Tensor softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& W,
                             const torch::Tensor& targets, double cap, const torch::Tensor& bias,
                             LogitWorkspace& workspace) {
  if (softcapped_nll_supports(hidden) && softcapped_nll_supports(W))
    return linear_softcapped_nll(hidden, W, targets, cap, bias, workspace);
  if (hidden.is_cuda()) {
    // The products in the dtype autocast would give torch::linear (bf16 in a bf16 scope).
    const bool autocast = compat::autocast_enabled(c10::DeviceType::CUDA);
    const auto compute = autocast ? compat::autocast_dtype(c10::DeviceType::CUDA)
                                  : at::promote_types(hidden.scalar_type(), W.scalar_type());
    return chunked_softcapped_nll(hidden, W, targets, cap, bias, chunked_nll_rows(W.size(0)),
                                  compute);
  }
  auto logits = torch::linear(hidden, W);  // (N, V)
  if (logits.scalar_type() != torch::kDouble) logits = logits.to(torch::kFloat);
  auto logp = torch::log_softmax(softcap(logits, cap, bias), -1);  // (N, V)
  auto tgt = targets.clamp_min(0).to(torch::kLong);
  auto nll = -logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1);  // (N)
  return nll * (targets >= 0).to(nll.scalar_type());
}

int64_t chunked_nll_rows(int64_t V) {
  // 2^26 fp32 logits (256 MiB) a chunk: the chunk's few temporaries stay near 1 GiB, and each
  // chunk's products are still large enough to keep a GPU busy.
  return std::max<int64_t>(1, (int64_t(1) << 26) / std::max<int64_t>(1, V));
}

torch::Tensor chunked_softcapped_nll(const torch::Tensor& hidden, const torch::Tensor& W,
                                     const torch::Tensor& targets, double cap,
                                     const torch::Tensor& bias, int64_t chunk_rows,
                                     at::ScalarType compute) {
  if (hidden.dim() != 2 || W.dim() != 2 || hidden.size(1) != W.size(1))
    throw Error("internal: chunked_softcapped_nll takes hidden (N, d) and weight (V, d)");
  const int64_t N = hidden.size(0), V = W.size(0);
  if (targets.numel() != N)
    throw Error("internal: chunked_softcapped_nll got " + std::to_string(targets.numel()) +
                " targets for " + std::to_string(N) + " rows");
  auto y = targets.reshape({N}).to(torch::kLong);  // (N)
  // No bias: an empty tensor (autograd functions take defined tensors only).
  const torch::Tensor b = bias.defined() ? bias.to(hidden.device(), torch::kFloat).reshape({V})
                                         : torch::empty({0}, hidden.options().dtype(torch::kFloat));
  return ChunkedSoftcapNll::apply(hidden, W, y, cap, b, std::max<int64_t>(1, chunk_rows),
                                  static_cast<int64_t>(compute));
}

}  // namespace gllm::ops
