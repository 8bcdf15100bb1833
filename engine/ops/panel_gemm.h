// Register-tiled fp32 products C = A·B for the CPU with a small inner dimension: B packed in
// 16-column panels, A read in place six rows at a time, C written once, and an optional per-row
// epilogue.
#pragma once
#include <cstdint>
#include <functional>

namespace gllm::ops::panel {

constexpr int64_t kTileRows = 6;    // rows of A (and C) per register tile
constexpr int64_t kPanelCols = 16;  // columns of B (and C) per panel and register tile
// Where the panel products beat OpenBLAS (measured on 2 Zen 2 cores against OpenBLAS 0.3.21, 1 and
// 2 threads): inner dimensions up to 512 (then each column block holds 64 or more columns, and A is
// read from L3 at most N/64 times) and at least 192 rows (32 tiles to share out); at K = 768 and
// 1024 OpenBLAS's blocking of A wins by up to 1.2×, and with 64 rows by 1.3×. Callers use BLAS
// elsewhere.
constexpr int64_t kMaxInner = 512;
constexpr int64_t kMinRows = 192;

// Whether the kernels run at the current ISA (kernels::active_isa() AVX2 + FMA or AVX-512); nothing
// here may be called otherwise.
bool available();

// Floats of the packed form of a (K, N) right-hand side: ⌈N/16⌉ panels of K × 16, columns past N
// zero.
int64_t packed_floats(int64_t K, int64_t N);
// Packs B (K, N), row stride ldb, into panels (packed_floats(K, N) floats, 32-byte aligned).
void pack(const float* B, int64_t ldb, int64_t K, int64_t N, float* panels);
// Packs B = Wᵀ from W (N, K), row stride ldw (a Linear weight, for x·Wᵀ), into panels.
void pack_transposed(const float* W, int64_t ldw, int64_t N, int64_t K, float* panels);

// Called after each column block of each row: C's segment [col0, col0 + cols) of `row` is in L1 and
// may be rewritten in place.
using RowEpilogue = std::function<void(int64_t row, int64_t col0, int64_t cols)>;

// C (M, N), row stride ldc ← A (M, K), row stride lda, times the packed B, for the row tiles
// [tile_begin, tile_end) (tile t holds rows 6t … 6t + 5) on the calling thread. The panels are
// walked in blocks of about 128 KiB, which stay in L2 while every tile passes over them.
void multiply_tiles(const float* A, int64_t lda, int64_t M, int64_t K, const float* panels,
                    int64_t N, float* C, int64_t ldc, int64_t tile_begin, int64_t tile_end,
                    const RowEpilogue* epilogue = nullptr);

// The same over all rows, the row tiles split across the intra-op threads.
void multiply(const float* A, int64_t lda, int64_t M, int64_t K, const float* panels, int64_t N,
              float* C, int64_t ldc, const RowEpilogue* epilogue = nullptr);

}  // namespace gllm::ops::panel
