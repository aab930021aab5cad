#include "optim/grad_clipping.h"

#include <limits>

#include <gtest/gtest.h>

namespace tzrec::optim {
namespace grad_clipping_test {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Parameters of several shapes with random gradients; the last one has no gradient.
std::vector<torch::Tensor> random_params(uint64_t seed, double grad_scale) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> params;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{7, 5}, {5}, {3, 4, 2}, {1}, {6}}) {
    params.push_back(torch::randn(shape).requires_grad_(true));
  }
  for (size_t i = 0; i + 1 < params.size(); ++i) {
    params[i].mutable_grad() = torch::randn(params[i].sizes()) * grad_scale;
  }
  return params;
}

std::vector<torch::Tensor> clone_with_grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) {
    auto q = p.detach().clone().requires_grad_(true);
    if (p.grad().defined()) q.mutable_grad() = p.grad().clone();
    out.push_back(q);
  }
  return out;
}

TEST(GradClipping, NormMatchesLibtorch) {
  for (double norm_type : {1.0, 2.0, 3.5, kInf}) {
    for (double max_norm : {0.05, 1.0, 1e6}) {
      auto ours = random_params(17, 3.0);
      auto theirs = clone_with_grads(ours);
      const auto original = clone_with_grads(ours);
      const double total = clip_grad_norm(ours, max_norm, norm_type).item<double>();
      const double expected = torch::nn::utils::clip_grad_norm_(theirs, max_norm, norm_type);
      EXPECT_NEAR(total, expected, 1e-6 * expected) << "p=" << norm_type;
      for (size_t i = 0; i < ours.size(); ++i) {
        ASSERT_EQ(ours[i].grad().defined(), theirs[i].grad().defined());
        if (!ours[i].grad().defined()) continue;
        EXPECT_TRUE(torch::allclose(ours[i].grad(), theirs[i].grad(), 1e-6, 1e-8))
            << "p=" << norm_type << " max_norm=" << max_norm << " param " << i;
        if (max_norm == 1e6) EXPECT_TRUE(torch::equal(ours[i].grad(), original[i].grad()));
      }
    }
  }
}

TEST(GradClipping, TotalNormIsTheNormOfAllElements) {
  auto params = random_params(5, 2.0);
  std::vector<torch::Tensor> flat;
  for (const auto& p : params) {
    if (p.grad().defined()) flat.push_back(p.grad().flatten().to(torch::kFloat64));
  }
  const auto all = torch::cat(flat);
  const double expected2 = all.norm(2).item<double>();
  const double expected_inf = all.abs().max().item<double>();
  EXPECT_NEAR(clip_grad_norm(clone_with_grads(params), 1e9, 2.0).item<double>(), expected2,
              1e-5 * expected2);
  EXPECT_NEAR(clip_grad_norm(clone_with_grads(params), 1e9, kInf).item<double>(), expected_inf,
              1e-6 * expected_inf);
  // After clipping to 0.5 the gradients' total norm is 0.5 (up to the 1e-6 guard).
  auto clipped = clone_with_grads(params);
  clip_grad_norm(clipped, 0.5, 2.0);
  std::vector<torch::Tensor> after;
  for (const auto& p : clipped) {
    if (p.grad().defined()) after.push_back(p.grad().flatten().to(torch::kFloat64));
  }
  EXPECT_NEAR(torch::cat(after).norm(2).item<double>(), 0.5, 1e-6);
}

TEST(GradClipping, HandComputed) {
  auto a = torch::zeros({2}).requires_grad_(true);
  auto b = torch::zeros({1}).requires_grad_(true);
  a.mutable_grad() = torch::tensor({3.0f, -4.0f});
  b.mutable_grad() = torch::tensor({0.0f});
  // |g|_2 = 5 → scale 1 / (5 + 1e-6).
  EXPECT_FLOAT_EQ(clip_grad_norm({a, b}, 1.0).item<float>(), 5.0f);
  EXPECT_NEAR(a.grad()[0].item<float>(), 0.6f, 1e-6);
  EXPECT_NEAR(a.grad()[1].item<float>(), -0.8f, 1e-6);
  EXPECT_EQ(b.grad()[0].item<float>(), 0.0f);
  // inf norm: max |g| = 4 → scale 2 / 4.
  a.mutable_grad() = torch::tensor({3.0f, -4.0f});
  EXPECT_FLOAT_EQ(clip_grad_norm({a}, 2.0, kInf).item<float>(), 4.0f);
  EXPECT_NEAR(a.grad()[0].item<float>(), 1.5f, 1e-6);
  EXPECT_NEAR(a.grad()[1].item<float>(), -2.0f, 1e-6);
  // 1-norm: 7 → max_norm 14 does not scale up (coefficient clamped to 1).
  a.mutable_grad() = torch::tensor({3.0f, -4.0f});
  EXPECT_FLOAT_EQ(clip_grad_norm({a}, 14.0, 1.0).item<float>(), 7.0f);
  EXPECT_TRUE(torch::equal(a.grad(), torch::tensor({3.0f, -4.0f})));
}

TEST(GradClipping, NoGradientsIsANoOp) {
  auto p = torch::ones({3}).requires_grad_(true);
  EXPECT_EQ(clip_grad_norm({p}, 1.0).item<double>(), 0.0);
  EXPECT_EQ(clip_grad_norm({}, 1.0).item<double>(), 0.0);
  clip_grad_value({p}, 0.1);
  EXPECT_FALSE(p.grad().defined());
}

TEST(GradClipping, NonFiniteNormIsNotAnError) {
  // torch with error_if_nonfinite=false: the coefficient is 0 for an inf norm.
  auto p = torch::zeros({2}).requires_grad_(true);
  p.mutable_grad() = torch::tensor({std::numeric_limits<float>::infinity(), 1.0f});
  auto q = clone_with_grads({p});
  const double total = clip_grad_norm({p}, 1.0).item<double>();
  EXPECT_TRUE(std::isinf(total));
  torch::nn::utils::clip_grad_norm_(q, 1.0);
  // inf * 0 = nan in both.
  EXPECT_TRUE(torch::equal(torch::isnan(p.grad()), torch::isnan(q[0].grad())));
  EXPECT_EQ(p.grad()[1].item<float>(), q[0].grad()[1].item<float>());
}

TEST(GradClipping, ValueMatchesLibtorch) {
  auto ours = random_params(3, 2.0);
  auto theirs = clone_with_grads(ours);
  clip_grad_value(ours, 0.7);
  torch::nn::utils::clip_grad_value_(theirs, 0.7);
  for (size_t i = 0; i < ours.size(); ++i) {
    if (!ours[i].grad().defined()) {
      EXPECT_FALSE(theirs[i].grad().defined());
      continue;
    }
    EXPECT_TRUE(torch::equal(ours[i].grad(), theirs[i].grad())) << i;
    EXPECT_LE(ours[i].grad().abs().max().item<float>(), 0.7f);
  }
  // Something was actually clipped (grads ~ N(0, 2)).
  EXPECT_EQ(ours[0].grad().abs().max().item<float>(), 0.7f);
}

TEST(GradClipping, OptionsDispatch) {
  auto base = random_params(11, 4.0);
  auto none = clone_with_grads(base);
  EXPECT_FALSE(clip_gradients(GradClippingOptions{}, none).defined());
  EXPECT_TRUE(torch::equal(none[0].grad(), base[0].grad()));

  auto norm = clone_with_grads(base);
  auto norm_ref = clone_with_grads(base);
  const auto total =
      clip_gradients({GradClippingOptions::Kind::kNorm, 0.3, 3.0}, norm);
  EXPECT_NEAR(total.item<double>(), torch::nn::utils::clip_grad_norm_(norm_ref, 0.3, 3.0),
              1e-6 * total.item<double>());
  EXPECT_TRUE(torch::allclose(norm[2].grad(), norm_ref[2].grad(), 1e-6, 1e-8));

  auto value = clone_with_grads(base);
  EXPECT_FALSE(clip_gradients({GradClippingOptions::Kind::kValue, 0.3, 2.0}, value).defined());
  EXPECT_LE(value[0].grad().abs().max().item<float>(), 0.3f);
}

TEST(GradClipping, RejectsBadArguments) {
  auto p = torch::zeros({2}).requires_grad_(true);
  p.mutable_grad() = torch::ones({2});
  EXPECT_THROW(clip_grad_norm({p}, 1.0, 0.0), c10::Error);
  EXPECT_THROW(clip_grad_norm({p}, -1.0, 2.0), c10::Error);
  EXPECT_THROW(clip_grad_value({p}, -0.5), c10::Error);
}

}  // namespace grad_clipping_test
}  // namespace tzrec::optim
