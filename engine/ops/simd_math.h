// Vector exp for the CPU row kernels: a scalar form and an AVX2+FMA form of the same formula, and
// the CPU feature tests that pick between forms. Internal to engine/ops (.cpp files only).
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

#ifdef GLLM_HAVE_AVX2_KERNELS

// exp8 for arguments already known to lie in [−87, 88] (no clamp).
GLLM_AVX2 GLLM_ALWAYS_INLINE __m256 exp8_in_range(__m256 x) {
  const __m256 n = _mm256_floor_ps(
      _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 e = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(e, _mm256_castsi256_ps(bits));
}

GLLM_AVX2 inline __m256 exp8(__m256 x) {
  return exp8_in_range(
      _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f)));
}

GLLM_AVX2 inline float hmax8(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  return *std::max_element(lanes, lanes + 8);
}

GLLM_AVX2 inline float hsum8(__m256 v) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
         ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}
#endif

}  // namespace gllm::ops::simd
