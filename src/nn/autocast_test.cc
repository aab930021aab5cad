#include "nn/autocast.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>

namespace tzrec::nn {
namespace autocast_test {

TEST(AutocastGuard, Bf16LinearWithFp32MasterWeightsAndRestore) {
  torch::manual_seed(0);
  torch::nn::Linear linear(16, 8);
  const torch::Tensor x = torch::randn({4, 16});
  torch::Tensor y;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    y = linear->forward(x);
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    {
      AutocastGuard off(std::nullopt);  // a no-op guard leaves autocast on
      EXPECT_EQ(linear->forward(x).scalar_type(), torch::kBFloat16);
    }
  }
  // Restored: fp32 again outside the scope.
  EXPECT_EQ(linear->forward(x).scalar_type(), torch::kFloat32);
  // bf16 result close to fp32 (8 mantissa bits), and fp32 gradients on the fp32 weights.
  EXPECT_TRUE(torch::allclose(y.to(torch::kFloat32), linear->forward(x), 0.05, 0.05));
  y.to(torch::kFloat32).sum().backward();
  EXPECT_EQ(linear->weight.scalar_type(), torch::kFloat32);
  ASSERT_TRUE(linear->weight.grad().defined());
  EXPECT_EQ(linear->weight.grad().scalar_type(), torch::kFloat32);
  // d(sum y)/dW = column sums of x per output row (up to bf16 rounding of x).
  const torch::Tensor expect = x.sum(0).unsqueeze(0).expand({8, 16});
  EXPECT_TRUE(torch::allclose(linear->weight.grad(), expect, 0.05, 0.05));
}

TEST(AutocastGuard, NullDtypeIsANoOp) {
  torch::nn::Linear linear(4, 2);
  AutocastGuard guard(std::nullopt);
  EXPECT_EQ(linear->forward(torch::randn({3, 4})).scalar_type(), torch::kFloat32);
}

}  // namespace autocast_test
}  // namespace tzrec::nn
