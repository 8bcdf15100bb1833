// Row-major fp32 GEMM on the BLAS this process's LibTorch loaded, for kernels that run many small
// products side by side (each call runs on the calling thread when issued inside at::parallel_for).
#pragma once
#include <cstdint>

namespace gllm {

// C (m×n, row stride ldc) = alpha · op(A) · op(B) + beta · C, all row-major; op(A) is m×k (A stored
// k×m when ta), op(B) is k×n (B stored n×k when tb). beta = 0 ignores C's contents. Uses the BLAS
// sgemm symbol when the process has one, else LibTorch's mm on the same memory.
void sgemm_rowmajor(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace gllm
