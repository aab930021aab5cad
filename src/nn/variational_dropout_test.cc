#include "nn/variational_dropout.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace tzrec::nn {
namespace variational_dropout_test {

// Features of widths [2, 1]; feature_p = [0, ln 3] → dropout rates 0.5, 0.75.
VariationalDropout two_features(double lambda) {
  VariationalDropout vd(std::vector<int64_t>{2, 1}, lambda);
  torch::NoGradGuard g;
  vd->feature_p.copy_(torch::tensor({0.0f, static_cast<float>(std::log(3.0))}));
  return vd;
}

TEST(VariationalDropout, EvalScalesByKeepProbabilityHandComputed) {
  auto vd = two_features(0.1);
  vd->eval();
  auto x = torch::tensor({{1.0f, 2.0f, 4.0f}, {-2.0f, 0.0f, 8.0f}});
  auto [out, penalty] = vd->forward(x);
  // keep 0.5 for columns 0-1, 0.25 for column 2.
  auto want = torch::tensor({{0.5f, 1.0f, 1.0f}, {-1.0f, 0.0f, 2.0f}});
  EXPECT_TRUE(torch::allclose(out, want, 1e-6, 1e-6)) << out;
  // 0.1 / B(2) * ((1 - 0.5) + (1 - 0.75)) = 0.0375.
  EXPECT_NEAR(penalty.item<double>(), 0.0375, 1e-7);
  EXPECT_TRUE(torch::allclose(vd->keep_probabilities(), torch::tensor({0.5f, 0.25f}), 1e-6, 1e-6));
}

// Training: the concrete relaxation written out with plain ops on the same uniform draws.
TEST(VariationalDropout, TrainingMatchesConcreteRelaxationAndTrainsFeatureP) {
  auto vd = two_features(0.01);
  vd->train();
  torch::manual_seed(11);
  auto x = torch::randn({5, 3});
  torch::manual_seed(12);
  auto [out, penalty] = vd->forward(x);
  (out.sum() + penalty).backward();

  torch::manual_seed(12);
  auto u = torch::rand({5, 2}).to(torch::kFloat64);
  auto p_param = torch::tensor({0.0, std::log(3.0)}, torch::kFloat64).requires_grad_(true);
  const double eps = std::numeric_limits<float>::epsilon();
  auto logit = [eps](const torch::Tensor& v) { return torch::log(v + eps) - torch::log(1 - v + eps); };
  auto p = torch::sigmoid(p_param).unsqueeze(0).expand({5, 2});
  auto z = torch::sigmoid((logit(p) + logit(u)) / 0.1);                         // [5, 2]
  auto z_cols = torch::stack({z.select(1, 0), z.select(1, 0), z.select(1, 1)}, 1);  // [5, 3]
  auto want = x.to(torch::kFloat64) * (1 - z_cols);
  auto want_penalty = (1 - torch::sigmoid(p_param)).sum() * (0.01 / 5);
  (want.sum() + want_penalty).backward();

  EXPECT_TRUE(torch::allclose(out.to(torch::kFloat64), want, 1e-5, 1e-5)) << out << want;
  EXPECT_NEAR(penalty.item<double>(), want_penalty.item<double>(), 1e-7);
  ASSERT_TRUE(vd->feature_p.grad().defined());
  EXPECT_TRUE(torch::allclose(vd->feature_p.grad().to(torch::kFloat64), p_param.grad(), 1e-4, 1e-4))
      << vd->feature_p.grad() << p_param.grad();
}

// A feature with rate ≈ 0 passes unchanged, one with rate ≈ 1 is dropped, in every row.
TEST(VariationalDropout, ExtremeRatesKeepOrDrop) {
  VariationalDropout vd(std::vector<int64_t>{1, 2}, 0.01);
  {
    torch::NoGradGuard g;
    vd->feature_p.copy_(torch::tensor({-30.0f, 30.0f}));
  }
  vd->train();
  auto x = torch::ones({64, 3});
  auto [out, penalty] = vd->forward(x);
  EXPECT_TRUE(torch::allclose(out.select(1, 0), torch::ones({64}), 1e-4, 1e-4));
  EXPECT_TRUE(torch::allclose(out.slice(1, 1, 3), torch::zeros({64, 2}), 1e-4, 1e-4));
}

TEST(VariationalDropout, RejectsWrongInputWidth) {
  VariationalDropout vd(std::vector<int64_t>{2, 1}, 0.01);
  EXPECT_THROW(vd->forward(torch::ones({2, 4})), c10::Error);
}

}  // namespace variational_dropout_test
}  // namespace tzrec::nn
