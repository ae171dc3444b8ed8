#pragma once
// The vendor BLAS/LAPACK the benchmarks compare against, called directly through the Fortran
// interface (no cblas.h/lapacke.h needed; Debian's OpenBLAS, MKL and others all export these).
// The library is the one cmake/MiniappDependencies.cmake found (LAPACK calls: solver/vendor.hpp);
// MINIAPP_HAVE_HOST_BLAS says whether one was found.

#if defined(MINIAPP_HAVE_HOST_BLAS)
extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
}
#endif
