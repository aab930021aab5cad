#include "optim/dense_ema.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::optim {
namespace dense_ema_test {

using NamedParams = std::vector<std::pair<std::string, torch::Tensor>>;

// Parameter values at update k: w = [1 + k, -2 * k], b = [0.5 k]. Expected shadows (hand-computed
// with torch's swa_utils EMA: the first update copies, later ones ema += (1 - decay) (p - ema)).
TEST(DenseEma, MatchesHandComputedAverage) {
  const double decay = 0.75;
  NamedParams params = {{"w", torch::zeros({2}).requires_grad_(true)},
                        {"b", torch::zeros({1}).requires_grad_(true)}};
  DenseEma ema(params, decay);
  std::vector<double> w0(2, 0.0), b0(1, 0.0);  // independent double-precision reference
  for (int k = 0; k < 4; ++k) {
    {
      torch::NoGradGuard ng;
      params[0].second.copy_(torch::tensor({1.0f + k, -2.0f * k}));
      params[1].second.copy_(torch::tensor({0.5f * k}));
    }
    const std::vector<double> w = {1.0 + k, -2.0 * k}, b = {0.5 * k};
    for (size_t i = 0; i < 2; ++i) w0[i] = k == 0 ? w[i] : decay * w0[i] + (1 - decay) * w[i];
    b0[0] = k == 0 ? b[0] : decay * b0[0] + (1 - decay) * b[0];
    ema.update();
  }
  // After 4 updates: w[0] = 1 → 0.75*1+0.25*2 = 1.25 → 1.6875 → 2.265625.
  EXPECT_DOUBLE_EQ(w0[0], 2.265625);
  const auto state = ema.state_dict();
  EXPECT_NEAR(state.at("w")[0].item<float>(), w0[0], 1e-6);
  EXPECT_NEAR(state.at("w")[1].item<float>(), w0[1], 1e-6);
  EXPECT_NEAR(state.at("b")[0].item<float>(), b0[0], 1e-6);
  EXPECT_EQ(state.at(DenseEma::kNAveragedKey).item<int64_t>(), 4);
  EXPECT_EQ(ema.n_averaged(), 4);
  // The decay is honoured: a different decay gives a different average.
  EXPECT_GT(std::abs(state.at("w")[0].item<float>() - 4.0f), 1.0f);
}

TEST(DenseEma, SwapGuardExposesShadowsAndRestores) {
  NamedParams params = {{"w", torch::tensor({1.0f, 2.0f}).requires_grad_(true)}};
  DenseEma ema(params, 0.5);
  ema.update();  // shadow = [1, 2]
  {
    torch::NoGradGuard ng;
    params[0].second.copy_(torch::tensor({3.0f, 6.0f}));
  }
  ema.update();  // shadow = [2, 4]
  {
    EmaSwapGuard guard(&ema);
    EXPECT_TRUE(torch::equal(params[0].second.detach(), torch::tensor({2.0f, 4.0f})));
  }
  EXPECT_TRUE(torch::equal(params[0].second.detach(), torch::tensor({3.0f, 6.0f})));
  EXPECT_TRUE(torch::equal(ema.state_dict().at("w"), torch::tensor({2.0f, 4.0f})));
  { EmaSwapGuard none(nullptr); }  // no EMA: nothing happens
  EXPECT_TRUE(torch::equal(params[0].second.detach(), torch::tensor({3.0f, 6.0f})));
}

TEST(DenseEma, StateRoundTripAndErrors) {
  NamedParams a = {{"w", torch::tensor({1.0f, 2.0f})}}, b = {{"w", torch::zeros({2})}};
  DenseEma ema_a(a, 0.9), ema_b(b, 0.9);
  ema_a.update();
  ema_b.load_state_dict(ema_a.state_dict());
  EXPECT_EQ(ema_b.n_averaged(), 1);
  EXPECT_TRUE(torch::equal(ema_b.state_dict().at("w"), torch::tensor({1.0f, 2.0f})));
  EXPECT_THROW(ema_b.load_state_dict({{"w", torch::zeros({2})}}), CheckpointError);  // no count
  EXPECT_THROW(ema_b.load_state_dict({{"w", torch::zeros({3})}, {DenseEma::kNAveragedKey, torch::tensor(1)}}),
               CheckpointError);
  EXPECT_THROW(ema_b.load_state_dict({{"v", torch::zeros({2})}, {DenseEma::kNAveragedKey, torch::tensor(1)}}),
               CheckpointError);
  EXPECT_THROW(ema_b.load_state_dict({{DenseEma::kNAveragedKey, torch::tensor(1)}}), CheckpointError);
  EXPECT_THROW(DenseEma(a, 1.5), ConfigError);
}

}  // namespace dense_ema_test
}  // namespace tzrec::optim
