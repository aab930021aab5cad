// libtorch's fp32 matrix products in this process run on the GEMM of blas/sgemm_bridge.h (oneDNN):
// torch::mm and a Linear layer's forward and backward go through it, and agree with the same
// products in double precision (libtorch's dgemm, the system BLAS: an independent computation).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "blas/sgemm_bridge.h"

namespace tzrec::nn {
namespace onednn_gemm_test {

void expect_close(const torch::Tensor& got, const torch::Tensor& want) {
  EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), want, /*rtol=*/1e-4, /*atol=*/1e-4))
      << (got.to(torch::kDouble) - want).abs().max().item<double>();
}

TEST(OneDnnGemm, LibtorchProductsRunThroughTheBridge) {
  if (!blas::onednn_gemm_available()) GTEST_SKIP() << "built without oneDNN";
  torch::manual_seed(3);
  const torch::Tensor a = torch::randn({256, 96});
  const torch::Tensor b = torch::randn({96, 80});
  int64_t calls = blas::onednn_gemm_calls();
  const torch::Tensor c = torch::mm(a, b);
  EXPECT_EQ(blas::onednn_gemm_calls(), calls + 1);
  expect_close(c, torch::mm(a.to(torch::kDouble), b.to(torch::kDouble)));

  // A Linear layer: x · Wᵀ + b, then the gradients of sum(y · g): dx = g · W, dW = gᵀ · x.
  torch::nn::Linear linear(96, 80);
  const torch::Tensor x = a.clone().requires_grad_(true);
  const torch::Tensor g = torch::randn({256, 80});
  calls = blas::onednn_gemm_calls();
  const torch::Tensor y = linear(x);
  (y * g).sum().backward();
  EXPECT_EQ(blas::onednn_gemm_calls(), calls + 3);
  const torch::Tensor w = linear->weight.detach().to(torch::kDouble);
  const torch::Tensor xd = a.to(torch::kDouble), gd = g.to(torch::kDouble);
  expect_close(y.detach(), torch::mm(xd, w.t()) + linear->bias.detach().to(torch::kDouble));
  expect_close(x.grad(), torch::mm(gd, w));
  expect_close(linear->weight.grad(), torch::mm(gd.t(), xd));

  // A product below kMinOneDnnWork stays on the system BLAS.
  calls = blas::onednn_gemm_calls();
  torch::mm(torch::randn({8, 8}), torch::randn({8, 8}));
  EXPECT_EQ(blas::onednn_gemm_calls(), calls);
}

}  // namespace onednn_gemm_test
}  // namespace tzrec::nn
