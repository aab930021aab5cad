#include "nn/fm.h"

#include <gtest/gtest.h>

namespace tzrec::nn {
namespace fm_test {

TEST(FactorizationMachine, HandComputed) {
  // B=1, N=3, D=2: pairwise sums Σ_{i<j} v_i * v_j per dim.
  auto v = torch::tensor({{{1.0, 2.0}, {3.0, -1.0}, {0.5, 4.0}}});
  FactorizationMachine fm;
  auto y = fm->forward(v);
  // dim 0: 1*3 + 1*0.5 + 3*0.5 = 5; dim 1: 2*(-1) + 2*4 + (-1)*4 = 2
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR(y[0][0].item<double>(), 5.0, 1e-6);
  EXPECT_NEAR(y[0][1].item<double>(), 2.0, 1e-6);
}

TEST(FactorizationMachine, MatchesPairwiseLoop) {
  torch::manual_seed(3);
  auto v = torch::randn({4, 5, 3}, torch::kFloat64);
  auto want = torch::zeros({4, 3}, torch::kFloat64);
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j) want += v.select(1, i) * v.select(1, j);
  FactorizationMachine fm;
  EXPECT_TRUE(torch::allclose(fm->forward(v), want, 1e-12, 1e-12));
  EXPECT_TRUE(fm->parameters().empty());
}

TEST(FactorizationMachine, GradientMatchesAutogradOfThePlainFormula) {
  torch::manual_seed(4);
  auto v = torch::randn({6, 4, 3}, torch::kFloat64).requires_grad_(true);
  auto g = torch::randn({6, 3}, torch::kFloat64);
  FactorizationMachine fm;
  (fm->forward(v) * g).sum().backward();
  auto v2 = v.detach().clone().requires_grad_(true);
  auto s = v2.sum(1);
  (0.5 * (s * s - (v2 * v2).sum(1)) * g).sum().backward();
  EXPECT_TRUE(torch::allclose(v.grad(), v2.grad(), 1e-12, 1e-12));
  // A strided view (a column block of a wider tensor, as DeepFM passes it) works the same way.
  auto wide = torch::randn({6, 20}, torch::kFloat64).requires_grad_(true);
  auto block = wide.slice(1, 4, 16).reshape({6, 4, 3});
  (fm->forward(block) * g).sum().backward();
  auto block2 = wide.detach().slice(1, 4, 16).reshape({6, 4, 3}).clone().requires_grad_(true);
  auto s2 = block2.sum(1);
  (0.5 * (s2 * s2 - (block2 * block2).sum(1)) * g).sum().backward();
  EXPECT_TRUE(torch::allclose(wide.grad().slice(1, 4, 16).reshape({6, 4, 3}), block2.grad(), 1e-12, 1e-12));
  EXPECT_EQ(wide.grad().slice(1, 0, 4).abs().sum().item<double>(), 0.0);
}

}  // namespace fm_test
}  // namespace tzrec::nn
