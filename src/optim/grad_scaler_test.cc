#include "optim/grad_scaler.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::optim {
namespace grad_scaler_test {

GradScalerOptions options(double init, double growth, double backoff, int64_t interval) {
  GradScalerOptions o;
  o.init_scale = init;
  o.growth_factor = growth;
  o.backoff_factor = backoff;
  o.growth_interval = interval;
  return o;
}

TEST(GradScaler, DefaultsAreTorchs) {
  GradScaler s{GradScalerOptions{}};
  EXPECT_EQ(s.scale_value(), 65536.0);
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_EQ(s.options().growth_factor, 2.0);
  EXPECT_EQ(s.options().backoff_factor, 0.5);
  EXPECT_EQ(s.options().growth_interval, 2000);
}

// Hand-computed: init 8, growth 2, backoff 0.5, interval 3.
//   update(false) x3      → trackers 1, 2, then 3 == interval: scale 16, tracker 0
//   update(true)          → scale 8, tracker 0
//   update(false) x2      → trackers 1, 2
//   update(true)          → scale 4, tracker 0 (the partial count is lost)
//   update(false) x3      → scale 8
TEST(GradScaler, UpdateSequence) {
  GradScaler s(options(8, 2, 0.5, 3));
  const std::vector<std::pair<bool, std::pair<double, int64_t>>> steps = {
      {false, {8, 1}}, {false, {8, 2}}, {false, {16, 0}}, {true, {8, 0}},  {false, {8, 1}},
      {false, {8, 2}}, {true, {4, 0}},  {false, {4, 1}},  {false, {4, 2}}, {false, {8, 0}}};
  for (size_t i = 0; i < steps.size(); ++i) {
    s.update(steps[i].first);
    EXPECT_EQ(s.scale_value(), steps[i].second.first) << "after update " << i;
    EXPECT_EQ(s.growth_tracker(), steps[i].second.second) << "after update " << i;
  }
}

// Non-power-of-two factors: the scale is rounded to float32 after every update, like torch's
// scale tensor. Growth 1.1 three times from 1 (hand-computed in float32):
//   f32(1 * 1.1) = 1.10000002384, f32(1.10000002384 * 1.1) = 1.21000003815,
//   f32(1.21000003815 * 1.1) = 1.33100008965 (a double product 1.331 would round to 1.33099997044).
TEST(GradScaler, Float32Scale) {
  GradScaler s(options(1, 1.1, 0.5, 1));
  for (int i = 0; i < 3; ++i) s.update(false);
  EXPECT_EQ(s.scale_value(), static_cast<double>(1.33100008964538574f));
  EXPECT_NE(s.scale_value(), static_cast<double>(1.33099997043609619f));
}

TEST(GradScaler, GrowthStopsAtFloatMax) {
  GradScaler s(options(3e38, 2, 0.5, 1));
  s.update(false);  // 6e38 is inf in float32: kept at 3e38, tracker reset
  EXPECT_EQ(s.scale_value(), static_cast<double>(3e38f));
  EXPECT_EQ(s.growth_tracker(), 0);
}

TEST(GradScaler, ScaleAndUnscale) {
  GradScaler s(options(1024, 2, 0.5, 10));
  torch::Tensor loss = torch::tensor(0.75f);
  EXPECT_EQ(s.scale(loss).item<float>(), 768.0f);

  torch::Tensor a = torch::zeros({3}, torch::requires_grad());
  torch::Tensor b = torch::zeros({2}, torch::requires_grad());
  torch::Tensor no_grad = torch::zeros({2}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({1024.0f, -2048.0f, 512.0f});
  b.mutable_grad() = torch::tensor({3.0f, 0.0f});
  EXPECT_FALSE(s.unscale({a, b, no_grad}));
  EXPECT_TRUE(torch::equal(a.grad(), torch::tensor({1.0f, -2.0f, 0.5f})));
  EXPECT_TRUE(torch::equal(b.grad(), torch::tensor({3.0f / 1024, 0.0f})));
  EXPECT_FALSE(no_grad.grad().defined());

  const float inf = std::numeric_limits<float>::infinity();
  a.mutable_grad() = torch::tensor({1.0f, inf, 2.0f});
  b.mutable_grad() = torch::tensor({4.0f, 8.0f});
  EXPECT_TRUE(s.unscale({a, b}));
  EXPECT_TRUE(torch::equal(b.grad(), torch::tensor({4.0f / 1024, 8.0f / 1024})));  // all unscaled
  a.mutable_grad() = torch::tensor({std::nanf(""), 1.0f, 2.0f});
  EXPECT_TRUE(s.unscale({b, a}));
}

TEST(GradScaler, StateDictRoundTrip) {
  GradScaler s(options(8, 2, 0.5, 5));
  s.update(true);
  s.update(false);
  s.update(false);
  auto state = s.state_dict();
  EXPECT_EQ(state.at("scale").item<float>(), 4.0f);
  EXPECT_EQ(state.at("scale").scalar_type(), torch::kFloat32);
  EXPECT_EQ(state.at("growth_tracker").item<int64_t>(), 2);

  GradScaler restored(options(8, 2, 0.5, 5));
  restored.load_state_dict(state);
  EXPECT_EQ(restored.scale_value(), 4.0);
  EXPECT_EQ(restored.growth_tracker(), 2);
  for (int i = 0; i < 3; ++i) restored.update(false);
  EXPECT_EQ(restored.scale_value(), 8.0);  // 2 + 3 clean steps reach the interval of 5

  EXPECT_THROW(restored.load_state_dict({{"scale", torch::tensor(1.0f)}}), CheckpointError);
  EXPECT_THROW(restored.load_state_dict({{"scale", torch::tensor(-1.0f)},
                                         {"growth_tracker", torch::tensor(int64_t{0})}}),
               CheckpointError);
}

TEST(GradScaler, InvalidOptionsNameTheField) {
  auto expect_error = [](GradScalerOptions o, const std::string& field) {
    try {
      GradScaler s(o);
      ADD_FAILURE() << "no ConfigError for " << field;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("train_config.grad_scaler." + field + ":"), std::string::npos)
          << e.what();
    }
  };
  expect_error(options(0, 2, 0.5, 1), "init_scale");
  expect_error(options(-1, 2, 0.5, 1), "init_scale");
  expect_error(options(std::numeric_limits<double>::infinity(), 2, 0.5, 1), "init_scale");
  expect_error(options(1, 1, 0.5, 1), "growth_factor");
  expect_error(options(1, 0.5, 0.5, 1), "growth_factor");
  expect_error(options(1, 2, 0, 1), "backoff_factor");
  expect_error(options(1, 2, 1, 1), "backoff_factor");
  expect_error(options(1, 2, 0.5, 0), "growth_interval");
  EXPECT_NO_THROW(GradScaler{options(1, 1.0001, 0.9999, 1)});
}

}  // namespace grad_scaler_test
}  // namespace tzrec::optim
