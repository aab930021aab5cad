#include "nn/activation.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::nn {
namespace activation_test {

torch::Tensor input() { return torch::tensor({-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 30.0}); }

torch::Tensor run(const std::string& act, const torch::Tensor& x) {
  torch::nn::AnyModule m = create_activation(act);
  EXPECT_FALSE(m.is_empty()) << act;
  return m.forward(x);
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(torch::allclose(got, want, 1e-6, 1e-6)) << what << "\ngot " << got << "\nwant " << want;
}

TEST(Activation, PathSpellingsAreEquivalent) {
  auto x = input();
  auto want = x.clamp_min(0);
  for (const char* s : {"nn.ReLU", "torch.nn.ReLU", "  nn.ReLU  ", "nn.ReLU()", "nn.ReLU(inplace=False)"}) {
    expect_close(run(s, x), want, s);
  }
}

TEST(Activation, ValuesMatchFormulas) {
  auto x = input();
  expect_close(run("nn.LeakyReLU", x), torch::where(x > 0, x, 0.01 * x), "LeakyReLU default");
  expect_close(run("nn.LeakyReLU(negative_slope=0.1)", x), torch::where(x > 0, x, 0.1 * x), "LeakyReLU 0.1");
  expect_close(run("nn.LeakyReLU( negative_slope = 2e-1 )", x), torch::where(x > 0, x, 0.2 * x), "LeakyReLU sp");
  expect_close(run("nn.Sigmoid", x), 1.0 / (1.0 + torch::exp(-x)), "Sigmoid");
  expect_close(run("nn.Tanh", x), (torch::exp(x) - torch::exp(-x)) / (torch::exp(x) + torch::exp(-x)), "Tanh");
  expect_close(run("nn.ELU", x), torch::where(x > 0, x, torch::exp(x) - 1), "ELU");
  expect_close(run("nn.ELU(alpha=0.5)", x), torch::where(x > 0, x, 0.5 * (torch::exp(x) - 1)), "ELU 0.5");
  expect_close(run("nn.GELU", x), 0.5 * x * (1 + torch::erf(x / std::sqrt(2.0))), "GELU");
  auto tanh_gelu = 0.5 * x * (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
  expect_close(run("nn.GELU(approximate='tanh')", x), tanh_gelu, "GELU tanh");
  expect_close(run("nn.SiLU", x), x / (1.0 + torch::exp(-x)), "SiLU");
  // Softplus: log(1 + exp(beta x)) / beta, linear above threshold.
  auto sp = torch::where(x > 20, x, torch::log1p(torch::exp(x)));
  expect_close(run("nn.Softplus", x), sp, "Softplus");
  auto sp2 = torch::where(2 * x > 1, x, torch::log1p(torch::exp(2 * x)) / 2);
  expect_close(run("nn.Softplus(beta=2, threshold=1)", x), sp2, "Softplus beta");
  expect_close(run("nn.Identity", x), x, "Identity");
  expect_close(run("nn.ReLU6", x), x.clamp(0, 6), "ReLU6");
  const double alpha = 1.6732632423543772, scale = 1.0507009873554805;
  expect_close(run("nn.SELU", x), scale * torch::where(x > 0, x, alpha * (torch::exp(x) - 1)), "SELU");
  expect_close(run("nn.Mish", x), x * torch::tanh(torch::log1p(torch::exp(x))), "Mish");
  expect_close(run("nn.Softsign", x), x / (1 + x.abs()), "Softsign");
}

TEST(Activation, PReLUHasWeightParameter) {
  torch::nn::AnyModule m = create_activation("nn.PReLU(num_parameters=3, init=0.5)");
  auto params = m.ptr()->named_parameters();
  ASSERT_EQ(params.size(), 1u);
  ASSERT_TRUE(params.contains("weight"));
  expect_close(params["weight"], torch::full({3}, 0.5), "PReLU weight");
  auto x = torch::tensor({{-2.0, 1.0, -4.0}});
  expect_close(m.forward(x), torch::tensor({{-1.0, 1.0, -2.0}}), "PReLU forward");
  auto d = create_activation("nn.PReLU");
  expect_close(d.ptr()->named_parameters()["weight"], torch::full({1}, 0.25), "PReLU default");
}

TEST(Activation, EmptyStringMeansNoActivation) {
  EXPECT_TRUE(create_activation("").is_empty());
  EXPECT_TRUE(create_activation("   ").is_empty());
}

void expect_config_error(const std::string& act, const std::string& fragment) {
  try {
    create_activation(act);
    ADD_FAILURE() << "no error for " << act;
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(act.substr(act.find_first_not_of(' '))), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

TEST(Activation, BadStringsNameTheString) {
  expect_config_error("nn.Foo", "unknown activation class nn.Foo");
  expect_config_error("nn.relu", "unknown activation class");
  expect_config_error("tf.nn.relu", "not a torch.nn class path");
  expect_config_error("nn.LeakyReLU(slope=0.1)", "unknown argument slope");
  expect_config_error("nn.LeakyReLU(0.1)", "keyword=value");
  expect_config_error("nn.LeakyReLU(negative_slope=abc)", "cannot parse value");
  expect_config_error("nn.LeakyReLU(negative_slope=0.1", "unbalanced parentheses");
  expect_config_error("nn.PReLU(num_parameters=2.5)", "must be an integer");
  expect_config_error("nn.PReLU(num_parameters=0)", "num_parameters");
  expect_config_error("nn.ReLU(inplace=1)", "True or False");
  expect_config_error("nn.GELU(approximate='exact')", "approximate");
  expect_config_error("nn.Sigmoid(x=1)", "unknown argument x");
  expect_config_error("nn.ELU(alpha=1, alpha=2)", "given twice");
}

TEST(Activation, DiceIsNotSupported) {
  try {
    create_activation("Dice");
    ADD_FAILURE() << "no error";
  } catch (const NotSupportedError& e) {
    EXPECT_STREQ(e.what(), "not supported yet: activation Dice");
  }
}

}  // namespace activation_test
}  // namespace tzrec::nn
