// Fused CPU RMSNorm, rotary embedding and ReLU² as autograd functions: each direction is one
// parallel pass over the rows, compiled three times (portable, AVX2+FMA, AVX-512) from one source.
#include "engine/ops/pointwise.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "engine/io/error.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/simd_math.h"

namespace gllm::ops {

namespace kernels_portable {
#include "engine/ops/pointwise_kernels.inc"
}  // namespace kernels_portable

#ifdef GLLM_HAVE_AVX2_KERNELS
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace kernels_avx2 {
#include "engine/ops/pointwise_kernels.inc"
}  // namespace kernels_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512")
namespace kernels_avx512 {
#include "engine/ops/pointwise_kernels.inc"
}  // namespace kernels_avx512
#pragma GCC pop_options
#endif

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{[] {
    const char* env = std::getenv("GLLM_FUSED_OPS");
    return !(env && std::strcmp(env, "0") == 0);
  }()};
  return flag;
}

// Calls the form of a kernel for the kernels' ISA (kernels::active_isa()) with the same arguments.
#ifdef GLLM_HAVE_AVX2_KERNELS
#define GLLM_KERNEL(name, ...)                                                       \
  (kernels::active_isa() == kernels::Isa::Avx512 ? kernels_avx512::name(__VA_ARGS__) \
   : kernels::active_isa() == kernels::Isa::Avx2 ? kernels_avx2::name(__VA_ARGS__)   \
                                                 : kernels_portable::name(__VA_ARGS__))
#else
#define GLLM_KERNEL(name, ...) kernels_portable::name(__VA_ARGS__)
#endif

// Rows per task so that each task touches about 16 K floats.
int64_t grain_for(int64_t row_len) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row_len));
}

class RmsNormFn : public torch::autograd::Function<RmsNormFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double eps) {
    const int64_t n = x.size(-1), rows = x.numel() / n;
    auto y = torch::empty_like(x);                  // (…, n)
    auto rstd = torch::empty({rows}, x.options());  // (rows)
    const float* xp = x.data_ptr<float>();
    float *yp = y.data_ptr<float>(), *rp = rstd.data_ptr<float>();
    at::parallel_for(0, rows, grain_for(n), [&](int64_t b, int64_t e) {
      GLLM_KERNEL(rms_norm_forward_rows, xp, yp, rp, b, e, n, static_cast<float>(eps));
    });
    ctx->save_for_backward({x, rstd});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &rstd = saved[1];
    auto dy = grads[0].contiguous();  // (…, n)
    auto dx = torch::empty_like(x);   // (…, n)
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const float *xp = x.data_ptr<float>(), *rp = rstd.data_ptr<float>(), *gp = dy.data_ptr<float>();
    float* dp = dx.data_ptr<float>();
    at::parallel_for(0, rows, grain_for(n), [&](int64_t b, int64_t e) {
      GLLM_KERNEL(rms_norm_backward_rows, xp, rp, gp, dp, b, e, n);
    });
    return {dx, torch::Tensor()};
  }
};

// y = R(x) forward, dx = Rᵀ(dy) backward: the transpose of a rotation is the rotation by −angle.
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                     float sign) {
  const int64_t T = x.size(1), H = x.size(2), half = x.size(3) / 2;
  const int64_t positions = x.size(0) * T;
  auto y = torch::empty_like(x);  // (B, T, H, Dh)
  const float *xp = x.data_ptr<float>(), *cp = cos.data_ptr<float>(), *sp = sin.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, positions, grain_for(H * 2 * half), [&](int64_t b, int64_t e) {
    GLLM_KERNEL(rope_positions, xp, yp, cp, sp, b, e, H, T, half, sign);
  });
  return y;
}

class RopeFn : public torch::autograd::Function<RopeFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    return rotate(x, cos, sin, 1.0f);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    return {rotate(grads[0].contiguous(), saved[0], saved[1], -1.0f), torch::Tensor(),
            torch::Tensor()};
  }
};

class ReluSquareFn : public torch::autograd::Function<ReluSquareFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) {
    auto y = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), 16384, [&](int64_t b, int64_t e) {
      GLLM_KERNEL(relu_square_forward_span, xp, yp, b, e);
    });
    ctx->save_for_backward({x});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto x = ctx->get_saved_variables()[0];
    auto dy = grads[0].contiguous();
    auto dx = torch::empty_like(x);
    const float *xp = x.data_ptr<float>(), *gp = dy.data_ptr<float>();
    float* dp = dx.data_ptr<float>();
    at::parallel_for(0, x.numel(), 16384, [&](int64_t b, int64_t e) {
      GLLM_KERNEL(relu_square_backward_span, xp, gp, dp, b, e);
    });
    return {dx};
  }
};

void require_supported(const torch::Tensor& x, const char* what) {
  if (!fused_ops_support(x))
    throw Error(std::string("internal: ") + what +
                " takes a contiguous CPU fp32 tensor; use the ATen formula for other tensors");
}

}  // namespace

bool set_fused_ops_enabled(bool enabled) {
  return enabled_flag().exchange(enabled);
}
bool fused_ops_enabled() {
  return enabled_flag().load();
}

bool fused_ops_support(const torch::Tensor& x) {
  return fused_ops_enabled() && x.defined() && x.device().is_cpu() &&
         x.scalar_type() == torch::kFloat && x.dim() >= 1 && x.is_contiguous() && x.numel() > 0;
}

torch::Tensor fused_rms_norm(const torch::Tensor& x, double eps) {
  require_supported(x, "fused_rms_norm");
  return RmsNormFn::apply(x, eps);
}

torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& cos,
                         const torch::Tensor& sin) {
  require_supported(x, "fused_rope");
  require_supported(cos, "fused_rope (cos)");
  require_supported(sin, "fused_rope (sin)");
  if (x.dim() != 4 || x.size(3) % 2 != 0 || cos.dim() != 2 || cos.sizes() != sin.sizes() ||
      cos.size(0) < x.size(1) || cos.size(1) != x.size(3) / 2)
    throw Error("internal: fused_rope takes x (B, T, H, Dh) with even Dh and cos, sin (≥ T, Dh/2)");
  return RopeFn::apply(x, cos, sin);
}

torch::Tensor fused_relu_square(const torch::Tensor& x) {
  require_supported(x, "fused_relu_square");
  return ReluSquareFn::apply(x);
}

namespace {

// The same formulas in ATen ops: the library side of each choice, and the path for other tensors.
torch::Tensor aten_rms_norm(const torch::Tensor& x) {
  auto xf = x.scalar_type() == torch::kDouble ? x : x.to(torch::kFloat32);  // fp32 math, as ATen
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + FLT_EPSILON);
  return y.to(x.scalar_type());
}

torch::Tensor aten_rope(const torch::Tensor& x, const torch::Tensor& cos_table,
                        const torch::Tensor& sin_table) {
  const int64_t T = x.size(1), half = x.size(-1) / 2;
  auto cos =
      cos_table.narrow(0, 0, T).to(x.scalar_type()).view({1, T, 1, half});  // (1, T, 1, Dh/2)
  auto sin = sin_table.narrow(0, 0, T).to(x.scalar_type()).view({1, T, 1, half});
  auto x1 = x.narrow(-1, 0, half);
  auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos + x2 * sin, -x1 * sin + x2 * cos}, -1);  // (B, T, H, Dh)
}

torch::Tensor aten_relu_square(const torch::Tensor& x) {
  auto h = torch::relu(x);
  return h * h;
}

// Whether the fused kernel was chosen over the ATen formula for x's shape (rows of the last dim).
bool fused_chosen(const char* op, const torch::Tensor& x, const std::function<void()>& fused,
                  const std::function<void()>& aten) {
  const int64_t n = x.size(-1);
  return kernels::choose(op, x.numel() / n, n, 0, fused, aten) == kernels::Side::Own;
}

}  // namespace

torch::Tensor rms_norm(const torch::Tensor& x) {
  if (fused_ops_support(x) &&
      fused_chosen(
          "rms_norm", x, [&] { fused_rms_norm(x, FLT_EPSILON); }, [&] { aten_rms_norm(x); }))
    return fused_rms_norm(x, FLT_EPSILON);
  return aten_rms_norm(x);
}

torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos_table,
                   const torch::Tensor& sin_table) {
  if (fused_ops_support(x) && fused_chosen(
                                  "rope", x, [&] { fused_rope(x, cos_table, sin_table); },
                                  [&] { aten_rope(x, cos_table, sin_table); }))
    return fused_rope(x, cos_table, sin_table);
  return aten_rope(x, cos_table, sin_table);
}

torch::Tensor relu_square(const torch::Tensor& x) {
  if (fused_ops_support(x) &&
      fused_chosen(
          "relu_square", x, [&] { fused_relu_square(x); }, [&] { aten_relu_square(x); }))
    return fused_relu_square(x);
  return aten_relu_square(x);
}

}  // namespace gllm::ops
