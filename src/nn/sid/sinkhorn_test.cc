// Sinkhorn against sid_reference.py (src/nn/sid/, plain PyTorch; its printed values are copied
// here) and hand-checked properties.
#include "nn/sid/sinkhorn.h"

#include <gtest/gtest.h>

#include "nn/testing.h"

namespace tzrec::nn::sid {
namespace sinkhorn_test {

using nn::testing::pattern;

TEST(Sinkhorn, MatchesThePlainReference) {
  const torch::Tensor cost = pattern({5, 3}, 0.3).abs() * 2;
  const torch::Tensor q = sinkhorn(cost, 3, 2.0);
  const torch::Tensor expected = torch::tensor({0.51041555f, 0.31354007f, 0.17604433f, 0.27425689f, 0.32881832f,
                                                0.39692467f, 0.16649413f, 0.38197741f, 0.45152837f, 0.48100051f,
                                                0.31872752f, 0.2002719f, 0.23518121f, 0.32351658f, 0.44130212f})
                                     .reshape({5, 3});
  EXPECT_TRUE(torch::allclose(q, expected, 1e-5, 1e-7)) << q;
  // The last step normalises the columns (inputs) to sum 1 each.
  EXPECT_TRUE(torch::allclose(q.sum(1), torch::ones({5}), 1e-5));
}

TEST(Sinkhorn, SpreadsRowsThatAllPreferOneCode) {
  const torch::Tensor d = torch::tensor({{0.1f, 0.5f, 0.9f},
                                         {0.2f, 0.6f, 0.7f},
                                         {0.1f, 0.3f, 0.8f},
                                         {0.15f, 0.4f, 0.5f},
                                         {0.05f, 0.9f, 0.95f},
                                         {0.3f, 0.35f, 0.6f}});
  EXPECT_TRUE(torch::equal(d.argmin(-1), torch::zeros({6}, torch::kInt64)));
  const torch::Tensor codes = sinkhorn_codes(d, 5, 10.0);
  EXPECT_TRUE(torch::equal(codes, torch::tensor({0, 2, 1, 2, 0, 1}, torch::kInt64))) << codes;
  // Balanced: every code gets two of the six rows.
  EXPECT_TRUE(torch::equal(torch::bincount(codes, {}, 3), torch::tensor({2, 2, 2}, torch::kInt64)));
}

TEST(Sinkhorn, HasNoGradient) {
  const torch::Tensor d = pattern({4, 3}, 0.1).abs().requires_grad_(true);
  EXPECT_FALSE(sinkhorn(d, 2, 1.0).requires_grad());
}

}  // namespace sinkhorn_test
}  // namespace tzrec::nn::sid
