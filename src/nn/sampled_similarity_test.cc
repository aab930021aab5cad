// sampled_similarity against the plain expression it replaces (TorchEasyRec's _sim_with_sampler,
// scaled): values and gradients by autograd on the plain version.
#include "nn/sampled_similarity.h"

#include <gtest/gtest.h>

namespace tzrec::nn {
namespace sampled_similarity_test {

TEST(SampledSimilarity, MatchesThePlainExpression) {
  torch::manual_seed(9);
  for (int64_t negatives : {0, 1, 7}) {
    SCOPED_TRACE(negatives);
    const torch::Tensor u0 = torch::randn({5, 4}), i0 = torch::randn({5 + negatives, 4});
    torch::Tensor u = u0.clone().requires_grad_(true), i = i0.clone().requires_grad_(true);
    torch::Tensor ru = u0.clone().requires_grad_(true), ri = i0.clone().requires_grad_(true);
    torch::Tensor out = sampled_similarity(u, i, 0.5);
    torch::Tensor ref = torch::cat({(ru * ri.narrow(0, 0, 5)).sum(1, true), torch::mm(ru, ri.narrow(0, 5, negatives).t())}, 1) / 2.0;
    ASSERT_EQ(out.sizes(), ref.sizes());
    EXPECT_TRUE(torch::allclose(out, ref, 1e-6, 1e-7));
    const torch::Tensor g = torch::randn(out.sizes());
    out.backward(g);
    ref.backward(g);
    EXPECT_TRUE(torch::allclose(u.grad(), ru.grad(), 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(i.grad(), ri.grad(), 1e-5, 1e-6));
  }
}

}  // namespace sampled_similarity_test
}  // namespace tzrec::nn
