#include "blas/sgemm_bridge.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>
#if TZREC_ONEDNN_GEMM
#include <dnnl.h>
#endif

#include "base/error.h"

namespace tzrec::blas {
namespace {

std::atomic<int64_t> g_onednn_calls{0};

}  // namespace

#if TZREC_ONEDNN_GEMM
bool onednn_gemm_available() { return true; }
#else
bool onednn_gemm_available() { return false; }
#endif

std::optional<GemmRoute> gemm_route_from(const char* value) {
  const std::string_view v = value == nullptr ? std::string_view() : std::string_view(value);
  if (v.empty() || v == "onednn") return GemmRoute::kOneDnn;
  if (v == "blas") return GemmRoute::kSystemBlas;
  return std::nullopt;
}

GemmRoute gemm_route() {
  const char* value = std::getenv("TZREC_GEMM");
  const auto route = gemm_route_from(value);
  if (!route) {
    throw UsageError(fmt::format("TZREC_GEMM={}: not a GEMM route; unset it (oneDNN) or set it to blas (the system "
                                 "BLAS)",
                                 value));
  }
  if (*route == GemmRoute::kOneDnn && !onednn_gemm_available()) {
    if (value != nullptr && *value != '\0') {
      throw UsageError("TZREC_GEMM=onednn: this build has no oneDNN (install libdnnl-dev and build again)");
    }
    return GemmRoute::kSystemBlas;
  }
  return *route;
}

const char* gemm_route_name(GemmRoute route) {
  return route == GemmRoute::kOneDnn ? "oneDNN" : "the system BLAS";
}

int64_t onednn_gemm_calls() { return g_onednn_calls.load(std::memory_order_relaxed); }

#if TZREC_ONEDNN_GEMM
namespace {

using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);

// The system BLAS's sgemm_: the next one after this executable's (libtorch's libblas.so.3), else
// libblas.so.3 opened here (a program that loaded no BLAS).
SgemmFn system_sgemm() {
  static const SgemmFn fn = [] {
    void* f = dlsym(RTLD_NEXT, "sgemm_");
    if (f == nullptr) {
      if (void* lib = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL)) f = dlsym(lib, "sgemm_");
    }
    if (f == nullptr) {
      std::fputs("error: no system BLAS provides sgemm_ (libblas.so.3: install libopenblas0-openmp)\n", stderr);
      std::abort();
    }
    return reinterpret_cast<SgemmFn>(f);
  }();
  return fn;
}

// The route sgemm_ takes: gemm_route(), or the system BLAS when TZREC_GEMM is not a route.
GemmRoute bridge_route() {
  static const GemmRoute route = [] {
    const char* value = std::getenv("TZREC_GEMM");
    if (const auto r = gemm_route_from(value)) return *r;
    std::fprintf(stderr, "warning: TZREC_GEMM=%s is neither onednn nor blas; using the system BLAS\n", value);
    return GemmRoute::kSystemBlas;
  }();
  return route;
}

// BLAS's transpose flag as oneDNN's, or 0 when it is not one.
char trans_flag(char c) {
  switch (c) {
    case 'N': case 'n': return 'N';
    case 'T': case 't': case 'C': case 'c': return 'T';
    default: return 0;
  }
}

}  // namespace
}  // namespace tzrec::blas

extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc) {
  using namespace tzrec::blas;
  const char ta = trans_flag(*transa);
  const char tb = trans_flag(*transb);
  const int64_t work = int64_t{*m} * int64_t{*n} * int64_t{*k};
  if (bridge_route() == GemmRoute::kOneDnn && ta != 0 && tb != 0 && *m > 0 && *n > 0 && *k > 0 &&
      work >= kMinOneDnnWork) {
    // Column-major C (m x n) = op(A) op(B) is row-major C^T (n x m) = op(B)^T op(A)^T: the same
    // memory, with the operands swapped.
    if (dnnl_sgemm(tb, ta, *n, *m, *k, *alpha, b, *ldb, a, *lda, *beta, c, *ldc) == dnnl_success) {
      g_onednn_calls.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  system_sgemm()(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#else
}  // namespace tzrec::blas
#endif  // TZREC_ONEDNN_GEMM
