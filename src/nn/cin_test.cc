#include "nn/cin.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace cin_test {

// TorchEasyRec's CIN.forward written with plain libtorch ops (einsum, view, conv1d, sum).
torch::Tensor reference_cin(const torch::Tensor& input, const std::vector<torch::Tensor>& weights,
                            const std::vector<torch::Tensor>& biases) {
  const int64_t b = input.size(0), f = input.size(1), d = input.size(2);
  torch::Tensor x = input;
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < weights.size(); ++i) {
    torch::Tensor z = torch::einsum("bhd,bfd->bhfd", {x, input}).reshape({b, x.size(1) * f, d});
    x = torch::conv1d(z, weights[i], biases[i]);
    out.push_back(x.sum(2));
  }
  return torch::cat(out, 1);
}

TEST(CIN, ParameterNamesAndShapesAsTorchEasyRec) {
  CIN cin(5, std::vector<int64_t>{4, 3});
  EXPECT_EQ(cin->output_dim(), 7);
  EXPECT_EQ(testing::names(cin->named_parameters()),
            (std::vector<std::string>{"cin_layers.0.weight", "cin_layers.0.bias", "cin_layers.1.weight",
                                      "cin_layers.1.bias"}));
  auto p = cin->named_parameters();
  EXPECT_EQ(p["cin_layers.0.weight"].sizes(), (std::vector<int64_t>{4, 25, 1}));
  EXPECT_EQ(p["cin_layers.1.weight"].sizes(), (std::vector<int64_t>{3, 20, 1}));
  EXPECT_EQ(p["cin_layers.1.bias"].sizes(), (std::vector<int64_t>{3}));
}

TEST(CIN, HandComputedOneLayer) {
  // F=2, D=2, one output channel with weight 1 on channel (h=0, f=1) only: out = Σ_d x0·x1.
  CIN cin(2, std::vector<int64_t>{1});
  {
    torch::NoGradGuard g;
    auto p = cin->named_parameters();
    p["cin_layers.0.weight"].zero_();
    p["cin_layers.0.weight"][0][1][0] = 1.0;
    p["cin_layers.0.bias"].fill_(0.25);
  }
  auto x = torch::tensor({{{1.0f, 2.0f}, {3.0f, -1.0f}}});
  // Σ_d (x0·x1 + 0.25) = (3 + 0.25) + (−2 + 0.25) = 1.5
  EXPECT_TRUE(torch::allclose(cin->forward(x), torch::tensor({{1.5f}})));
}

TEST(CIN, MatchesPlainOpsWithGradients) {
  torch::manual_seed(11);
  CIN cin(4, std::vector<int64_t>{5, 3, 2});
  cin->to(torch::kFloat64);
  auto x = torch::randn({6, 4, 3}, torch::kFloat64).requires_grad_(true);
  auto g = torch::randn({6, 10}, torch::kFloat64);
  auto y = cin->forward(x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{6, 10}));
  (y * g).sum().backward();

  std::vector<torch::Tensor> w, b;
  for (int i = 0; i < 3; ++i) {
    auto p = cin->named_parameters();
    w.push_back(p["cin_layers." + std::to_string(i) + ".weight"].detach().clone().requires_grad_(true));
    b.push_back(p["cin_layers." + std::to_string(i) + ".bias"].detach().clone().requires_grad_(true));
  }
  auto x2 = x.detach().clone().requires_grad_(true);
  auto want = reference_cin(x2, w, b);
  (want * g).sum().backward();
  EXPECT_TRUE(torch::allclose(y, want, 1e-10, 1e-12));
  EXPECT_TRUE(torch::allclose(x.grad(), x2.grad(), 1e-10, 1e-12));
  auto p = cin->named_parameters();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(torch::allclose(p["cin_layers." + std::to_string(i) + ".weight"].grad(), w[i].grad(), 1e-10, 1e-12))
        << i;
    EXPECT_TRUE(torch::allclose(p["cin_layers." + std::to_string(i) + ".bias"].grad(), b[i].grad(), 1e-10, 1e-12))
        << i;
  }
}

TEST(CIN, RunsUnderBf16Autocast) {
  torch::manual_seed(4);
  CIN cin(3, std::vector<int64_t>{4, 2});
  auto x = (torch::randn({5, 3, 4}) * 0.5).requires_grad_(true);
  auto want = cin->forward(x).detach();
  torch::Tensor y;
  {
    AutocastGuard guard(c10::ScalarType::BFloat16);
    y = cin->forward(x);
  }
  EXPECT_TRUE(torch::allclose(y.to(torch::kFloat32), want, 0.05, 0.05)) << y << want;
  y.to(torch::kFloat32).sum().backward();
  EXPECT_EQ(x.grad().scalar_type(), torch::kFloat32);
  for (const auto& item : cin->named_parameters()) ASSERT_TRUE(item.value().grad().defined()) << item.key();
}

TEST(CIN, ConfigErrors) {
  EXPECT_THROW(CIN(3, std::vector<int64_t>{}, "model_config.xdeepfm.cin"), ConfigError);
  try {
    CIN(3, std::vector<int64_t>{4, 0}, "model_config.xdeepfm.cin");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.xdeepfm.cin.cin_layer_size[1]: must be > 0"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace cin_test
}  // namespace tzrec::nn
