// Register-tiled fp32 products for the CPU: a 6 × 16 (AVX2) or 6 × 32 (AVX-512) tile of C stays in
// twelve registers for its whole inner sum; B is packed in 16-column panels, A is read in place.
#include "engine/ops/panel_gemm.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>

#include "engine/io/error.h"
#include "engine/ops/kernel_choice.h"
#include "engine/ops/simd_math.h"

namespace gllm::ops::panel {

bool available() {
  return kernels::active_isa() >= kernels::Isa::Avx2;
}

int64_t packed_floats(int64_t K, int64_t N) {
  return (N + kPanelCols - 1) / kPanelCols * K * kPanelCols;
}

void pack(const float* B, int64_t ldb, int64_t K, int64_t N, float* panels) {
  const int64_t P = (N + kPanelCols - 1) / kPanelCols;
  at::parallel_for(0, P, 8, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t j0 = p * kPanelCols, cols = std::min(kPanelCols, N - j0);
      float* dst = panels + p * K * kPanelCols;
      for (int64_t k = 0; k < K; ++k) {
        std::memcpy(dst + k * kPanelCols, B + k * ldb + j0, sizeof(float) * cols);
        std::fill(dst + k * kPanelCols + cols, dst + (k + 1) * kPanelCols, 0.0f);
      }
    }
  });
}

void pack_transposed(const float* W, int64_t ldw, int64_t N, int64_t K, float* panels) {
  const int64_t P = (N + kPanelCols - 1) / kPanelCols;
  at::parallel_for(0, P, 8, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p)
      for (int64_t c = 0; c < kPanelCols; ++c) {
        const int64_t j = p * kPanelCols + c;
        float* dst = panels + p * K * kPanelCols + c;
        for (int64_t k = 0; k < K; ++k) dst[k * kPanelCols] = j < N ? W[j * ldw + k] : 0.0f;
      }
  });
}

namespace {

// One register tile: out (rows × cols, row stride ld) ← the six rows of A (h[0..5]) times the
// panel(s) starting at `panel`. The only code that differs per ISA.
using TileFn = void (*)(const float* const* h, const float* panel, int64_t K, float* out,
                        int64_t ld, int64_t rows, int64_t cols);

#ifdef GLLM_HAVE_AVX2_KERNELS
// AVX2: a 6 × 16 tile (one panel) in twelve ymm accumulators. Named accumulators, so that they stay
// in registers at any optimisation level.
GLLM_AVX2 void tile_avx2(const float* const* h, const float* panel, int64_t K, float* out,
                         int64_t ld, int64_t rows, int64_t cols) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *h0 = h[0], *h1 = h[1], *h2 = h[2], *h3 = h[3], *h4 = h[4], *h5 = h[5];
  for (int64_t k = 0; k < K; ++k) {
    const __m256 b0 = _mm256_load_ps(panel + k * kPanelCols),
                 b1 = _mm256_load_ps(panel + k * kPanelCols + 8);
    __m256 a = _mm256_broadcast_ss(h0 + k);
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(h1 + k);
    c10 = _mm256_fmadd_ps(a, b0, c10);
    c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(h2 + k);
    c20 = _mm256_fmadd_ps(a, b0, c20);
    c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(h3 + k);
    c30 = _mm256_fmadd_ps(a, b0, c30);
    c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(h4 + k);
    c40 = _mm256_fmadd_ps(a, b0, c40);
    c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(h5 + k);
    c50 = _mm256_fmadd_ps(a, b0, c50);
    c51 = _mm256_fmadd_ps(a, b1, c51);
  }
  const __m256 acc[2 * kTileRows] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  for (int64_t i = 0; i < rows; ++i) {
    if (cols == kPanelCols) {
      _mm256_storeu_ps(out + i * ld, acc[2 * i]);
      _mm256_storeu_ps(out + i * ld + 8, acc[2 * i + 1]);
    } else {
      alignas(32) float lanes[kPanelCols];
      _mm256_store_ps(lanes, acc[2 * i]);
      _mm256_store_ps(lanes + 8, acc[2 * i + 1]);
      std::memcpy(out + i * ld, lanes, sizeof(float) * cols);
    }
  }
}

// AVX-512: a 6 × 32 tile (two neighbouring panels, K × 16 floats apart) in twelve zmm accumulators;
// twice the columns per broadcast of A. With cols ≤ 16 (a last, odd panel) the first panel is read
// twice and the second half is not stored.
GLLM_AVX512 void tile_avx512(const float* const* h, const float* panel, int64_t K, float* out,
                             int64_t ld, int64_t rows, int64_t cols) {
  const float* second = cols > kPanelCols ? panel + K * kPanelCols : panel;
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *h0 = h[0], *h1 = h[1], *h2 = h[2], *h3 = h[3], *h4 = h[4], *h5 = h[5];
  for (int64_t k = 0; k < K; ++k) {
    const __m512 b0 = _mm512_loadu_ps(panel + k * kPanelCols),
                 b1 = _mm512_loadu_ps(second + k * kPanelCols);
    __m512 a = _mm512_set1_ps(h0[k]);
    c00 = _mm512_fmadd_ps(a, b0, c00);
    c01 = _mm512_fmadd_ps(a, b1, c01);
    a = _mm512_set1_ps(h1[k]);
    c10 = _mm512_fmadd_ps(a, b0, c10);
    c11 = _mm512_fmadd_ps(a, b1, c11);
    a = _mm512_set1_ps(h2[k]);
    c20 = _mm512_fmadd_ps(a, b0, c20);
    c21 = _mm512_fmadd_ps(a, b1, c21);
    a = _mm512_set1_ps(h3[k]);
    c30 = _mm512_fmadd_ps(a, b0, c30);
    c31 = _mm512_fmadd_ps(a, b1, c31);
    a = _mm512_set1_ps(h4[k]);
    c40 = _mm512_fmadd_ps(a, b0, c40);
    c41 = _mm512_fmadd_ps(a, b1, c41);
    a = _mm512_set1_ps(h5[k]);
    c50 = _mm512_fmadd_ps(a, b0, c50);
    c51 = _mm512_fmadd_ps(a, b1, c51);
  }
  const __m512 acc[2 * kTileRows] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  const auto lanes = [](int64_t n) {
    return static_cast<__mmask16>(n >= kPanelCols ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1);
  };
  const __mmask16 m0 = lanes(cols), m1 = lanes(cols - kPanelCols);
  for (int64_t i = 0; i < rows; ++i) {
    _mm512_mask_storeu_ps(out + i * ld, m0, acc[2 * i]);
    _mm512_mask_storeu_ps(out + i * ld + kPanelCols, m1, acc[2 * i + 1]);
  }
}
#endif

// The tile for the kernels' ISA and how many panels it covers.
struct TileKind {
  TileFn fn = nullptr;
  int64_t panels = 1;
};
TileKind tile_for(kernels::Isa isa) {
#ifdef GLLM_HAVE_AVX2_KERNELS
  if (isa == kernels::Isa::Avx512) return {tile_avx512, 2};
  if (isa == kernels::Isa::Avx2) return {tile_avx2, 1};
#endif
  (void)isa;
  throw Error("internal: the panel products need AVX2 + FMA (check panel::available() first)");
}

}  // namespace

void multiply_tiles(const float* A, int64_t lda, int64_t M, int64_t K, const float* panels,
                    int64_t N, float* C, int64_t ldc, int64_t tile_begin, int64_t tile_end,
                    const RowEpilogue* epilogue) {
  const TileKind tile = tile_for(kernels::active_isa());
  const int64_t P = (N + kPanelCols - 1) / kPanelCols;
  // Column blocks of about 128 KiB of panels (a whole number of tiles wide) stay in L2 while every
  // row tile passes over them.
  int64_t block = std::max<int64_t>(1, (128 * 1024 / 4) / (std::max<int64_t>(K, 1) * kPanelCols));
  block = std::max(tile.panels, block / tile.panels * tile.panels);
  for (int64_t pb = 0; pb < P; pb += block) {
    const int64_t pe = std::min(P, pb + block), col0 = pb * kPanelCols;
    const int64_t cols = std::min(N, pe * kPanelCols) - col0;
    for (int64_t t = tile_begin; t < tile_end; ++t) {
      const int64_t r0 = t * kTileRows, rows = std::min(kTileRows, M - r0);
      // A last tile's missing rows repeat its last row; only the rows that exist are stored.
      const float* h[kTileRows];
      for (int64_t i = 0; i < kTileRows; ++i) h[i] = A + (r0 + std::min(i, rows - 1)) * lda;
      for (int64_t p = pb; p < pe; p += tile.panels)
        tile.fn(h, panels + p * K * kPanelCols, K, C + r0 * ldc + p * kPanelCols, ldc, rows,
                std::min(tile.panels * kPanelCols, N - p * kPanelCols));
      if (epilogue)
        for (int64_t i = 0; i < rows; ++i) (*epilogue)(r0 + i, col0, cols);
    }
  }
}

void multiply(const float* A, int64_t lda, int64_t M, int64_t K, const float* panels, int64_t N,
              float* C, int64_t ldc, const RowEpilogue* epilogue) {
  at::parallel_for(0, (M + kTileRows - 1) / kTileRows, 1, [&](int64_t begin, int64_t end) {
    multiply_tiles(A, lda, M, K, panels, N, C, ldc, begin, end, epilogue);
  });
}

}  // namespace gllm::ops::panel
