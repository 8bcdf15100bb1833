// Scalar exp for the CPU row kernels (simd_lanes.inc has its lane form), the lane types that open a
// kernel namespace per ISA, and the CPU feature tests. Internal to engine/ops (.cpp files only).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GLLM_HAVE_AVX2_KERNELS 1
#define GLLM_AVX2 __attribute__((target("avx2,fma")))
#define GLLM_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))

// The types of simd_lanes.inc for W lanes, to open a namespace compiled for one ISA (under
// #pragma GCC target): vf and vi hold W floats and W int32, fmadd(a, b, c) = a·b + c fused.
#define GLLM_SIMD_LANES(W, FMADD, REG)                    \
  constexpr int kLanes = W;                               \
  typedef float vf __attribute__((vector_size(4 * W)));   \
  typedef int32_t vi __attribute__((vector_size(4 * W))); \
  GLLM_ALWAYS_INLINE vf fmadd(vf a, vf b, vf c) {         \
    return (vf)FMADD((REG)a, (REG)b, (REG)c);             \
  }
#endif

namespace gllm::ops::simd {

#define GLLM_ALWAYS_INLINE inline __attribute__((always_inline))

// exp(x) to about 1 ulp for x in [−87, 88] (Cody–Waite reduction to r ∈ [−ln2/2, ln2/2], degree-5
// minimax polynomial, 2^n through the exponent bits).
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

// Whether this CPU runs the AVX2+FMA kernels (read once; false off x86-64).
inline bool cpu_has_avx2_fma() {
#ifdef GLLM_HAVE_AVX2_KERNELS
  static const bool has =
      (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return has;
#else
  return false;
#endif
}

// Whether this CPU runs the AVX-512 kernels (F, VL, BW and DQ, with the OS saving the registers:
// libgcc's feature bits check XCR0); false off x86-64.
inline bool cpu_has_avx512() {
#ifdef GLLM_HAVE_AVX2_KERNELS
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") &&
                                                     __builtin_cpu_supports("avx512vl") &&
                                                     __builtin_cpu_supports("avx512bw") &&
                                                     __builtin_cpu_supports("avx512dq")) &&
                          cpu_has_avx2_fma();
  return has;
#else
  return false;
#endif
}

}  // namespace gllm::ops::simd
