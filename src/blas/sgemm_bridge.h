// The process's single-precision GEMM (no torch). libtorch (Debian's 1.13) computes every fp32
// matrix product on the CPU — Linear layers, matmul, their gradients — through the Fortran BLAS
// symbol sgemm_, which the system BLAS (OpenBLAS) provides. Every executable that links this module
// defines sgemm_ itself and exports it (CMake: --undefined / --export-dynamic-symbol), so that
// libtorch's calls come here first; they run on oneDNN's dnnl_sgemm (libdnnl, which libtorch
// depends on), 10–40 % faster than OpenBLAS 0.3.21 at the shapes of the models' towers on the
// AVX-512 machines measured (bench/README.md, onednn_gemm_shapes.py). The system BLAS still takes:
//   - products of fewer than kMinOneDnnWork multiply-adds (M·N·K; oneDNN's set-up costs ~0.5 µs more);
//   - arguments oneDNN refuses (the system BLAS then reports them as BLAS does, through xerbla);
//   - every call when env TZREC_GEMM is "blas".
// Semantics are BLAS's: column-major C = alpha · op(A) · op(B) + beta · C, C not read when beta is
// 0; results agree with OpenBLAS's to rounding (the summation order differs), and do not depend on
// the thread count. oneDNN runs on the caller's OpenMP threads (one inside a parallel region).
// Built without oneDNN (no dnnl.h), this module defines no sgemm_ and the route is the system BLAS.
#pragma once

#include <cstdint>
#include <optional>

namespace tzrec::blas {

enum class GemmRoute { kOneDnn, kSystemBlas };

// Whether this build routes GEMMs to oneDNN at all.
bool onednn_gemm_available();
// TZREC_GEMM's value: unset, "" or "onednn" → kOneDnn; "blas" → kSystemBlas; else nullopt.
std::optional<GemmRoute> gemm_route_from(const char* value);
// The route of this process (env TZREC_GEMM): kSystemBlas when oneDNN is not available and
// TZREC_GEMM is unset. Throws UsageError for a value that is not a route, or "onednn" without
// oneDNN (the binary calls it at start-up; sgemm_ itself then takes the system BLAS and says so
// once on stderr).
GemmRoute gemm_route();
const char* gemm_route_name(GemmRoute route);

constexpr int64_t kMinOneDnnWork = int64_t{1} << 16;

// Calls that ran on oneDNN since the process started (tests, logs).
int64_t onednn_gemm_calls();

}  // namespace tzrec::blas

extern "C" {
// Fortran BLAS sgemm as libtorch declares it (no hidden string lengths).
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
}
