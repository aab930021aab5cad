// l2_loss and BinaryFocalLoss vs values computed with /usr/bin/python3 torch 1.13 (float64):
//   x = [-1.5, 0.3, 2.0, -0.2, 0.9], y = [0, 1, 1, 0, 0], w = [1, 2, 0.5, 3, 1.5]
//   p = sigmoid(x).detach(); fw = a*y*(1-p)**g + (1-a)*(1-y)*p**g
//   l = F.binary_cross_entropy_with_logits(x, y, weight=fw, reduction='none'); l.mean(); (l*w/w.mean()).mean()
//   l2: F.mse_loss(x, yr), ((x-yr)**2*w/w.mean()).mean() with yr = [0.5, 1.2, 3.0, -1.0, 0.0]
#include <gtest/gtest.h>

#include "base/error.h"
#include "loss/binary_focal_loss.h"
#include "loss/l2_loss.h"

namespace tzrec::loss {
namespace regression_and_focal_loss_test {

torch::Tensor x_values() { return torch::tensor({-1.5, 0.3, 2.0, -0.2, 0.9}, torch::kFloat64); }
torch::Tensor weights() { return torch::tensor({1.0, 2.0, 0.5, 3.0, 1.5}, torch::kFloat64); }

TEST(L2Loss, MatchesTorchMseWithAndWithoutWeights) {
  auto yr = torch::tensor({0.5, 1.2, 3.0, -1.0, 0.0}, torch::kFloat64);
  EXPECT_NEAR(l2_loss(x_values(), yr).item<double>(), 1.452, 1e-12);
  EXPECT_NEAR(l2_loss(x_values(), yr, weights()).item<double>(), 1.156875, 1e-12);
  // Integer labels are cast; all-zero weights → every normalised weight 0 (div_no_nan), loss 0.
  EXPECT_NEAR(l2_loss(torch::tensor({1.0, 2.0}), torch::tensor({0, 4})).item<double>(), 2.5, 1e-6);
  EXPECT_EQ(l2_loss(torch::tensor({1.0, 2.0}), torch::tensor({0, 4}), torch::zeros({2})).item<double>(), 0.0);
}

TEST(BinaryFocalLoss, MatchesTorchReference) {
  auto y = torch::tensor({0.0, 1.0, 1.0, 0.0, 0.0}, torch::kFloat64);
  struct Case {
    double gamma, alpha, mean, weighted;
    std::vector<double> grad;
  };
  const std::vector<Case> cases = {
      {2.0, 0.5, 0.0857452413382269, 0.0945649389318046,
       {0.0006070952093233394, -0.007706810763001032, -0.0001693794444934317, 0.00912258838390488,
        0.03593488539884728}},
      {1.5, 0.25, 0.149011688275701, 0.166609458701344,
       {0.0021320886777700435, -0.00590698113266886, -0.0002452941878174308, 0.02039496630489267,
        0.06392756255458668}}};
  for (const Case& c : cases) {
    BinaryFocalLoss loss({c.gamma, c.alpha});
    auto x = x_values().requires_grad_(true);
    auto l = loss(x, y);
    EXPECT_NEAR(l.item<double>(), c.mean, 1e-12) << c.gamma;
    // The focal weight is detached: the gradient is that of weight·BCE with the weight constant.
    l.backward();
    for (int64_t i = 0; i < 5; ++i) EXPECT_NEAR(x.grad()[i].item<double>(), c.grad[i], 1e-12) << i;
    EXPECT_NEAR(loss(x_values(), y, weights()).item<double>(), c.weighted, 1e-12) << c.gamma;
  }
}

TEST(BinaryFocalLoss, GammaZeroAlphaHalfIsHalfBce) {
  BinaryFocalLoss loss({0.0, 0.5});
  auto x = x_values();
  auto y = torch::tensor({0.0, 1.0, 1.0, 0.0, 0.0}, torch::kFloat64);
  auto bce = torch::nn::functional::binary_cross_entropy_with_logits(x, y);
  EXPECT_NEAR(loss(x, y).item<double>(), 0.5 * bce.item<double>(), 1e-12);
}

TEST(BinaryFocalLoss, RejectsBadOptions) {
  EXPECT_THROW(BinaryFocalLoss({-1.0, 0.5}), ConfigError);
  EXPECT_THROW(BinaryFocalLoss({2.0, 1.5}), ConfigError);
  EXPECT_THROW(BinaryFocalLoss({2.0, 0.0}), ConfigError);
  EXPECT_THROW(BinaryFocalLoss({2.0, 1.0}), ConfigError);
}

}  // namespace regression_and_focal_loss_test
}  // namespace tzrec::loss
