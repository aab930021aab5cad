// Loss scaling in the fused backward: the gradient of S * loss is unscaled before clipping and
// the row updates, and a non-finite gradient skips the whole update.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "embedding/fused_embedding_bags.h"

namespace tzrec::embedding {
namespace fused_embedding_bags_scale_test {

// Table "t" [12, 4] under adam (state: momentum1/2 and a step counter), gradient clipping at 0.05;
// features f0 (sum) and f1 (mean) on it.
FusedEmbeddingBags make_bags(const torch::Tensor& initial) {
  FusedOptimizerOptions options;
  options.kind = FusedOptimizerKind::kAdam;
  options.lr = 0.1;
  options.gradient_clipping = true;
  options.max_gradient = 0.05;
  return FusedEmbeddingBags({{"t", initial.clone(), true}}, {{"f0", "t", "sum"}, {"f1", "t", "mean"}}, options);
}

std::vector<FusedFeatureInput> batch() {
  std::vector<FusedFeatureInput> in(2);
  in[0].ids = torch::tensor({0, 3, 3, 5}, torch::kInt64);
  in[0].lengths = torch::tensor({1, 2, 1}, torch::kInt64);
  in[1].ids = torch::tensor({7, 0, 9}, torch::kInt64);
  in[1].lengths = torch::tensor({2, 0, 1}, torch::kInt64);
  return in;
}

// Runs forward and backward with output gradient `grad` [3, 8].
void step(FusedEmbeddingBags& bags, const torch::Tensor& grad) {
  torch::Tensor out = bags.forward(batch());
  out.backward(grad);
}

std::map<std::string, torch::Tensor> copy_state(const FusedEmbeddingBags& bags) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : bags.state_dict()) out.emplace(k, v.clone());
  return out;
}

TEST(FusedEmbeddingBagsScale, ScaledGradientIsUnscaledBeforeClippingAndUpdate) {
  torch::manual_seed(11);
  const torch::Tensor initial = torch::randn({12, 4});
  const torch::Tensor grad = torch::randn({3, 8}) * 0.1;  // partly beyond the clipping bound
  FusedEmbeddingBags plain = make_bags(initial);
  FusedEmbeddingBags scaled = make_bags(initial);
  scaled.set_gradient_scale(1024.0);
  EXPECT_EQ(scaled.gradient_scale(), 1024.0);
  for (int i = 0; i < 2; ++i) {
    step(plain, grad);
    step(scaled, grad * 1024);  // powers of two: exact in float32 both ways
    EXPECT_FALSE(scaled.last_backward_found_inf());
  }
  EXPECT_FALSE(torch::equal(plain.tables()[0].weight, initial));
  EXPECT_TRUE(torch::equal(scaled.tables()[0].weight, plain.tables()[0].weight));
  auto a = plain.state_dict(), b = scaled.state_dict();
  for (const auto& [k, v] : a) EXPECT_TRUE(torch::equal(v, b.at(k))) << k;
}

TEST(FusedEmbeddingBagsScale, NonFiniteGradientSkipsTheUpdate) {
  torch::manual_seed(12);
  const torch::Tensor initial = torch::randn({12, 4});
  FusedEmbeddingBags bags = make_bags(initial);
  bags.set_gradient_scale(65536.0);
  step(bags, torch::randn({3, 8}));
  const torch::Tensor weights = bags.tables()[0].weight.clone();
  const auto state = copy_state(bags);
  ASSERT_EQ(state.at("t.step").item<int64_t>(), 1);

  for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    torch::Tensor grad = torch::randn({3, 8});
    grad[1][6] = bad;  // one value of f1's column block
    step(bags, grad);
    EXPECT_TRUE(bags.last_backward_found_inf());
    EXPECT_TRUE(torch::equal(bags.tables()[0].weight, weights)) << "rows moved on a skipped step";
    for (const auto& [k, v] : bags.state_dict()) EXPECT_TRUE(torch::equal(v, state.at(k))) << k;
  }
  // The next forward clears the flag; a finite step updates again (and advances t).
  step(bags, torch::randn({3, 8}));
  EXPECT_FALSE(bags.last_backward_found_inf());
  EXPECT_FALSE(torch::equal(bags.tables()[0].weight, weights));
  EXPECT_EQ(bags.state_dict().at("t.step").item<int64_t>(), 2);
}

// Without a gradient scale there is no check: a nan gradient goes into the rows as before.
TEST(FusedEmbeddingBagsScale, NoScaleNoCheck) {
  FusedEmbeddingBags bags = make_bags(torch::zeros({12, 4}));
  EXPECT_FALSE(bags.gradient_scale().has_value());
  torch::Tensor grad = torch::zeros({3, 8});
  grad[0][0] = std::nanf("");  // (clipping would turn an inf into max_gradient)
  step(bags, grad);
  EXPECT_FALSE(bags.last_backward_found_inf());
  EXPECT_FALSE(torch::isfinite(bags.tables()[0].weight).all().item<bool>());
}

}  // namespace fused_embedding_bags_scale_test
}  // namespace tzrec::embedding
