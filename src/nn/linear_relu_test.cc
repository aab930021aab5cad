// linear_relu_forward vs Linear → ReLU in plain autograd: values and every gradient.
#include "nn/linear_relu.h"

#include <gtest/gtest.h>

#include "nn/autocast.h"

namespace tzrec::nn {
namespace linear_relu_test {

struct Grads {
  torch::Tensor y, x, w, b;
};

Grads run(bool fused, const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0,
          const torch::Tensor& g, bool x_requires_grad = true) {
  auto x = x0.clone().requires_grad_(x_requires_grad);
  auto w = w0.clone().requires_grad_(true);
  auto b = b0.clone().requires_grad_(true);
  auto y = fused ? linear_relu_forward(x, w, b) : torch::relu(torch::addmm(b, x, w.t()));
  (y * g).sum().backward();
  return {y.detach(), x_requires_grad ? x.grad() : torch::Tensor(), w.grad(), b.grad()};
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-5)) << what << "\n" << (got - want).abs().max();
}

TEST(LinearRelu, MatchesLinearThenReluWithGradients) {
  torch::manual_seed(7);
  // About half the pre-activations are negative.
  auto x = torch::randn({700, 9});
  auto w = torch::randn({5, 9});
  auto b = torch::randn({5});
  auto g = torch::randn({700, 5});
  Grads fused = run(true, x, w, b, g), plain = run(false, x, w, b, g);
  expect_close(fused.y, plain.y, "output");
  EXPECT_GT((plain.y == 0).sum().item<int64_t>(), 700);  // the mask matters
  expect_close(fused.x, plain.x, "grad x");
  expect_close(fused.w, plain.w, "grad weight");
  expect_close(fused.b, plain.b, "grad bias");
  // An input that needs no gradient (e.g. raw dense features) gets none.
  Grads no_x = run(true, x, w, b, g, /*x_requires_grad=*/false);
  EXPECT_FALSE(no_x.x.defined());
  expect_close(no_x.w, plain.w, "grad weight without grad x");
}

TEST(LinearRelu, OtherDtypesAndModesFallBackToTheSameValues) {
  torch::manual_seed(9);
  auto x = torch::randn({6, 4}, torch::kFloat64), w = torch::randn({3, 4}, torch::kFloat64);
  auto b = torch::randn({3}, torch::kFloat64), g = torch::randn({6, 3}, torch::kFloat64);
  Grads fused = run(true, x, w, b, g), plain = run(false, x, w, b, g);
  EXPECT_TRUE(torch::allclose(fused.x, plain.x, 1e-12, 1e-12));
  // Under bf16 autocast the GEMM runs in bf16 as for any Linear.
  AutocastGuard bf16(torch::kBFloat16);
  auto y = linear_relu_forward(x.to(torch::kFloat32), w.to(torch::kFloat32), b.to(torch::kFloat32));
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
}

}  // namespace linear_relu_test
}  // namespace tzrec::nn
