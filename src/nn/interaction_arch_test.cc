#include "nn/interaction_arch.h"

#include <gtest/gtest.h>

namespace tzrec::nn {
namespace interaction_arch_test {

TEST(InteractionArch, HandComputed) {
  // B=1, N=3, D=2: pairs (0,1), (0,2), (1,2).
  auto f = torch::tensor({{{1.0, 2.0}, {3.0, -1.0}, {0.5, 4.0}}});
  InteractionArch arch(3);
  EXPECT_EQ(arch->output_dim(), 3);
  auto y = arch->forward(f);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 3}));
  // 1*3 + 2*(-1) = 1; 1*0.5 + 2*4 = 8.5; 3*0.5 + (-1)*4 = -2.5
  EXPECT_TRUE(torch::allclose(y, torch::tensor({{1.0, 8.5, -2.5}})));
  EXPECT_TRUE(arch->parameters().empty());
  EXPECT_TRUE(arch->buffers().empty());  // triu_indices is not persistent in TorchEasyRec either
}

TEST(InteractionArch, SingleFeatureHasNoPairs) {
  InteractionArch arch(1);
  EXPECT_EQ(arch->output_dim(), 0);
  EXPECT_EQ(arch->forward(torch::randn({4, 1, 3})).sizes(), (std::vector<int64_t>{4, 0}));
}

// Values and gradients against the plain formula: dot(F[:, i], F[:, j]) for i < j, row-major.
TEST(InteractionArch, MatchesPairwiseDotsWithGradients) {
  torch::manual_seed(5);
  const int64_t n = 6;
  auto f = torch::randn({4, n, 3}, torch::kFloat64).requires_grad_(true);
  auto g = torch::randn({4, n * (n - 1) / 2}, torch::kFloat64);
  InteractionArch arch(n);
  auto y = arch->forward(f);
  (y * g).sum().backward();

  auto f2 = f.detach().clone().requires_grad_(true);
  std::vector<torch::Tensor> cols;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) cols.push_back((f2.select(1, i) * f2.select(1, j)).sum(1));
  }
  auto want = torch::stack(cols, 1);
  (want * g).sum().backward();
  EXPECT_TRUE(torch::allclose(y, want, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(f.grad(), f2.grad(), 1e-12, 1e-12));
  // Same order as torch::triu_indices(N, N, 1) applied to bmm(F, Fᵀ).
  auto t = torch::triu_indices(n, n, 1);
  auto full = torch::bmm(f2.detach(), f2.detach().transpose(1, 2));
  auto by_index = full.index({torch::indexing::Slice(), t[0], t[1]});
  EXPECT_TRUE(torch::allclose(y.detach(), by_index, 1e-12, 1e-12));
}

}  // namespace interaction_arch_test
}  // namespace tzrec::nn
