// Row-major fp32 GEMM through the Fortran sgemm of the BLAS LibTorch loaded (libblas.so.3: OpenBLAS
// here), found by symbol at run time; LibTorch's mm on borrowed memory where there is none.
#include "engine/runtime/cpu_blas.h"

#include <dlfcn.h>
#include <torch/torch.h>

namespace gllm {

namespace {

// Called inside at::parallel_for, an OpenMP OpenBLAS runs each product on the calling thread only.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*,
                         const int*);

SgemmFn blas_sgemm() {
  static const SgemmFn fn = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
  return fn;
}

}  // namespace

// Column-major BLAS computes Cᵀ = op(B)ᵀ op(A)ᵀ: the row-major operands swap places.
void sgemm_rowmajor(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (SgemmFn sgemm = blas_sgemm()) {
    const char opb = tb ? 'T' : 'N', opa = ta ? 'T' : 'N';
    const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
    const int LA = static_cast<int>(ldb), LB = static_cast<int>(lda), LC = static_cast<int>(ldc);
    sgemm(&opb, &opa, &M, &N, &K, &alpha, B, &LA, A, &LB, &beta, C, &LC);
    return;
  }
  auto a = ta ? torch::from_blob(const_cast<float*>(A), {k, m}, {lda, 1}).t()
              : torch::from_blob(const_cast<float*>(A), {m, k}, {lda, 1});
  auto b = tb ? torch::from_blob(const_cast<float*>(B), {n, k}, {ldb, 1}).t()
              : torch::from_blob(const_cast<float*>(B), {k, n}, {ldb, 1});
  auto c = torch::from_blob(C, {m, n}, {ldc, 1});
  if (beta == 0.0f)
    c.copy_(torch::mm(a, b).mul_(alpha));
  else
    c.mul_(beta).add_(torch::mm(a, b), alpha);
}

}  // namespace gllm
