// ReservoirSampler against sid_reference.py (src/nn/sid/, plain PyTorch with the same generator
// calls after the same seed; its printed sample is copied here), and its bookkeeping.
#include "nn/sid/reservoir_sampler.h"

#include <gtest/gtest.h>

namespace tzrec::nn::sid {
namespace reservoir_sampler_test {

TEST(ReservoirSampler, MatchesThePlainReference) {
  const torch::Tensor rows = torch::arange(60, torch::kFloat32).reshape({30, 2});
  ReservoirSampler sampler(6, 2);
  torch::manual_seed(42);
  sampler.add(rows.narrow(0, 0, 4));
  EXPECT_EQ(sampler.n_filled(), 4);
  sampler.add(rows.narrow(0, 4, 7));
  sampler.add(rows.narrow(0, 11, 19).to(torch::kFloat64));  // any float dtype
  EXPECT_EQ(sampler.n_seen(), 30);
  EXPECT_EQ(sampler.n_filled(), 6);
  const torch::Tensor expected =
      torch::tensor({0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 56.0f, 57.0f, 20.0f, 21.0f, 26.0f, 27.0f}).reshape({6, 2});
  EXPECT_TRUE(torch::equal(sampler.sample(), expected)) << sampler.sample();
}

TEST(ReservoirSampler, KeepsEverythingBelowCapacityAndResets) {
  ReservoirSampler sampler(10, 3);
  EXPECT_EQ(sampler.sample().sizes(), (std::vector<int64_t>{0, 3}));
  const torch::Tensor x = torch::randn({7, 3});
  sampler.add(x);
  EXPECT_TRUE(torch::equal(sampler.sample(), x));
  sampler.reset();
  EXPECT_EQ(sampler.n_seen(), 0);
  EXPECT_EQ(sampler.sample().size(0), 0);
}

TEST(ReservoirSampler, SampleIsUniformOverTheStream) {
  // 200 rows through a 20-row reservoir, 400 times: each row is kept with probability 0.1.
  torch::manual_seed(7);
  torch::Tensor kept = torch::zeros({200});
  const torch::Tensor rows = torch::arange(200, torch::kFloat32).unsqueeze(1);
  for (int t = 0; t < 400; ++t) {
    ReservoirSampler sampler(20, 1);
    for (int64_t b = 0; b < 200; b += 25) sampler.add(rows.narrow(0, b, 25));
    kept.index_add_(0, sampler.sample().squeeze(1).to(torch::kInt64), torch::ones({20}));
  }
  const torch::Tensor first = kept.narrow(0, 0, 100).sum() / 400, last = kept.narrow(0, 100, 100).sum() / 400;
  EXPECT_NEAR(first.item<double>(), 10.0, 1.0);  // 100 rows × 0.1
  EXPECT_NEAR(last.item<double>(), 10.0, 1.0);
}

}  // namespace reservoir_sampler_test
}  // namespace tzrec::nn::sid
