// The process's sgemm_ (blas/sgemm_bridge.h) against a plain triple loop in double precision (the
// BLAS definition of column-major C = alpha · op(A) · op(B) + beta · C): every transpose pair,
// leading dimensions larger than the matrices, beta 0 over a C of NaNs (not read), beta 2, and both
// routes (oneDNN for products of at least kMinOneDnnWork multiply-adds, the system BLAS below).
#include "blas/sgemm_bridge.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::blas {
namespace sgemm_bridge_test {

struct Case {
  char ta, tb;
  int m, n, k;
};

// op(X)(i, j) of a column-major X with leading dimension ld.
float at(const std::vector<float>& x, int ld, bool trans, int i, int j) {
  return trans ? x[static_cast<size_t>(i) * ld + j] : x[static_cast<size_t>(j) * ld + i];
}

void check(const Case& c, float alpha, float beta) {
  const bool ta = c.ta != 'N' && c.ta != 'n', tb = c.tb != 'N' && c.tb != 'n';
  // Stored shapes (column-major): A is m x k, or k x m when transposed; padded leading dimensions.
  const int a_rows = ta ? c.k : c.m, a_cols = ta ? c.m : c.k;
  const int b_rows = tb ? c.n : c.k, b_cols = tb ? c.k : c.n;
  const int lda = a_rows + 3, ldb = b_rows + 1, ldc = c.m + 2;
  std::mt19937 rng(static_cast<unsigned>(c.m * 131 + c.n * 7 + c.k));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(lda) * a_cols), b(static_cast<size_t>(ldb) * b_cols);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  std::vector<float> cm(static_cast<size_t>(ldc) * c.n);
  for (auto& x : cm) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : u(rng);
  const std::vector<float> c0 = cm;
  sgemm_(&c.ta, &c.tb, &c.m, &c.n, &c.k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, cm.data(), &ldc);
  double worst = 0;
  for (int j = 0; j < c.n; ++j) {
    for (int i = 0; i < c.m; ++i) {
      double want = 0;
      for (int p = 0; p < c.k; ++p) want += static_cast<double>(at(a, lda, ta, i, p)) * at(b, ldb, tb, p, j);
      want *= alpha;
      if (beta != 0.0f) want += static_cast<double>(beta) * c0[static_cast<size_t>(j) * ldc + i];
      worst = std::max(worst, std::abs(cm[static_cast<size_t>(j) * ldc + i] - want));
    }
    // Rows of C's padding are left alone.
    for (int i = c.m; i < ldc; ++i) {
      const size_t s = static_cast<size_t>(j) * ldc + i;
      EXPECT_TRUE(std::isnan(c0[s]) ? std::isnan(cm[s]) : cm[s] == c0[s]);
    }
  }
  // float accumulation of k products of magnitude <= 1: within 1e-5 per term.
  EXPECT_LT(worst, 1e-5 * c.k + 1e-6) << c.ta << c.tb << " " << c.m << "x" << c.n << "x" << c.k;
}

TEST(SgemmBridge, MatchesTheBlasDefinitionOnBothRoutes) {
  if (!onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN: no sgemm_ of this module";
  ASSERT_EQ(gemm_route(), GemmRoute::kOneDnn) << "run without TZREC_GEMM";
  for (char ta : {'N', 'T', 'n', 't'}) {
    for (char tb : {'N', 'T', 'c'}) {
      const int64_t before = onednn_gemm_calls();
      check({ta, tb, 5, 3, 4}, 1.0f, 0.0f);  // 60 multiply-adds: the system BLAS
      EXPECT_EQ(onednn_gemm_calls(), before);
      check({ta, tb, 67, 45, 31}, 0.5f, 0.0f);  // 93 465: oneDNN
      EXPECT_EQ(onednn_gemm_calls(), before + 1);
      check({ta, tb, 70, 40, 33}, -1.5f, 2.0f);
      EXPECT_EQ(onednn_gemm_calls(), before + 2);
    }
  }
}

TEST(SgemmBridge, RouteFromTheEnvironment) {
  EXPECT_EQ(gemm_route_from(nullptr), GemmRoute::kOneDnn);
  EXPECT_EQ(gemm_route_from(""), GemmRoute::kOneDnn);
  EXPECT_EQ(gemm_route_from("onednn"), GemmRoute::kOneDnn);
  EXPECT_EQ(gemm_route_from("blas"), GemmRoute::kSystemBlas);
  EXPECT_FALSE(gemm_route_from("mkl").has_value());
  setenv("TZREC_GEMM", "mkl", 1);
  try {
    gemm_route();
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "TZREC_GEMM=mkl: not a GEMM route; unset it (oneDNN) or set it to blas (the system BLAS)");
  }
  unsetenv("TZREC_GEMM");
}

}  // namespace sgemm_bridge_test
}  // namespace tzrec::blas
