#include "nn/activation.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/dice.h"

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
    create_activation(act, /*hidden_size=*/4);
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

TEST(Activation, MoreTorchClassesMatchFormulas) {
  auto x = input();
  expect_close(run("nn.Hardtanh", x), x.clamp(-1, 1), "Hardtanh");
  expect_close(run("nn.Hardtanh(min_val=-2.0, max_val=0.5)", x), x.clamp(-2, 0.5), "Hardtanh args");
  expect_close(run("nn.Hardsigmoid", x), (x / 6 + 0.5).clamp(0, 1), "Hardsigmoid");
  expect_close(run("nn.Hardswish", x), x * (x + 3).clamp(0, 6) / 6, "Hardswish");
  expect_close(run("nn.LogSigmoid", x), -torch::log1p(torch::exp(-x)), "LogSigmoid");
  expect_close(run("nn.Tanhshrink", x), x - torch::tanh(x), "Tanhshrink");
  auto shrink = [&](double l) { return torch::where(x > l, x - l, torch::where(x < -l, x + l, torch::zeros_like(x))); };
  expect_close(run("nn.Softshrink", x), shrink(0.5), "Softshrink");
  expect_close(run("nn.Softshrink(lambd=1.0)", x), shrink(1.0), "Softshrink 1");
  auto hard = [&](double l) { return torch::where(x.abs() > l, x, torch::zeros_like(x)); };
  expect_close(run("nn.Hardshrink", x), hard(0.5), "Hardshrink");
  expect_close(run("nn.CELU(alpha=2.0)", x), torch::where(x > 0, x, 2.0 * (torch::exp(x / 2.0) - 1)), "CELU");
  expect_close(run("nn.Threshold(threshold=0.1, value=20)", x), torch::where(x > 0.1, x, torch::full_like(x, 20)),
               "Threshold");
  // RReLU in eval: the fixed slope (lower + upper) / 2.
  torch::nn::AnyModule rrelu = create_activation("nn.RReLU(lower=0.1, upper=0.3)");
  rrelu.ptr()->eval();
  expect_close(rrelu.forward(x), torch::where(x >= 0, x, 0.2 * x), "RReLU eval");
}

TEST(Activation, SoftmaxFamilyUsesPyTorchsImplicitDim) {
  // PyTorch: without dim, rank 2 → dim 1, rank 3 → dim 0 (torch.nn.functional._get_softmax_dim).
  auto x2 = torch::tensor({{1.0, 2.0, 0.5}, {-1.0, 0.0, 3.0}});
  auto x3 = x2.view({2, 1, 3});
  expect_close(run("nn.Softmax", x2), torch::exp(x2) / torch::exp(x2).sum(1, true), "Softmax rank 2");
  expect_close(run("nn.Softmax", x3), torch::exp(x3) / torch::exp(x3).sum(0, true), "Softmax rank 3");
  expect_close(run("nn.Softmax(dim=-1)", x3), torch::exp(x3) / torch::exp(x3).sum(2, true), "Softmax dim");
  expect_close(run("nn.LogSoftmax(dim=1)", x2), x2 - torch::log(torch::exp(x2).sum(1, true)), "LogSoftmax");
  expect_close(run("nn.Softmin", x2), torch::exp(-x2) / torch::exp(-x2).sum(1, true), "Softmin");
}

TEST(Activation, MoreBadArguments) {
  expect_config_error("nn.Threshold(threshold=0.1)", "needs both threshold");
  expect_config_error("nn.Hardtanh(min_val=1, max_val=0)", "max_val");
  expect_config_error("nn.GLU", "halves the layer's width");
  expect_config_error("nn.Dice", "unknown activation class nn.Dice");
  expect_config_error("Dice(dim=3)", "unknown argument dim for Dice");
  expect_config_error("nn.Softmax(dim=1.5)", "must be an integer");
}

// Dice against its definition (tzrec/modules/activation.py, class Dice line 22, forward line 50)
// written with plain ops:
// p = sigmoid((x − mean) / sqrt(var + 1e-5)), out = alpha (1 − p) x + p x; in training mean / var
// are the batch's (biased var) and the running statistics move by momentum 0.1 with the unbiased
// var; in eval the running ones are used.
TEST(Activation, DiceMatchesItsDefinition) {
  torch::manual_seed(3);
  torch::nn::AnyModule m = create_activation("Dice", 3, 2);
  auto* dice = m.ptr()->as<DiceImpl>();
  ASSERT_NE(dice, nullptr);
  std::vector<std::string> names;
  for (const auto& item : m.ptr()->named_parameters()) names.push_back(item.key());
  for (const auto& item : m.ptr()->named_buffers()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  EXPECT_TRUE(torch::equal(dice->alpha(), torch::zeros({3})));
  {
    torch::NoGradGuard g;
    dice->alpha().copy_(torch::tensor({0.25, -0.5, 1.5}));
  }
  auto x = torch::tensor({{1.0, 2.0, -1.0}, {0.5, -0.3, 0.2}, {-1.0, 0.4, 0.9}, {2.0, 0.0, -0.5}});
  auto alpha = torch::tensor({0.25, -0.5, 1.5});
  auto mean = x.mean(0), var = x.var(0, /*unbiased=*/false);
  auto p = torch::sigmoid((x - mean) / torch::sqrt(var + 1e-5));
  m.ptr()->train();
  auto out = m.forward(x);
  expect_close(out, alpha * (1 - p) * x + p * x, "Dice train");
  expect_close(dice->bn()->running_mean, 0.1 * mean, "running_mean");
  expect_close(dice->bn()->running_var, 0.9 + 0.1 * x.var(0, /*unbiased=*/true), "running_var");
  // Eval: the running statistics.
  m.ptr()->eval();
  auto rm = dice->bn()->running_mean, rv = dice->bn()->running_var;
  auto pe = torch::sigmoid((x - rm) / torch::sqrt(rv + 1e-5));
  expect_close(m.forward(x), alpha * (1 - pe) * x + pe * x, "Dice eval");
  // Gradient of alpha: sum over the batch of (1 − p) x · upstream.
  m.ptr()->train();
  auto xg = x.clone().requires_grad_(true);
  m.forward(xg).sum().backward();
  auto p2 = torch::sigmoid((x - mean) / torch::sqrt(var + 1e-5));
  expect_close(dice->alpha().grad(), ((1 - p2) * x).sum(0), "alpha grad");
}

TEST(Activation, DiceOfRank3NormalisesEachChannelOverAllPositions) {
  torch::nn::AnyModule m = create_activation("Dice", 2, 3);
  auto* dice = m.ptr()->as<DiceImpl>();
  {
    torch::NoGradGuard g;
    dice->alpha().copy_(torch::tensor({0.5, -1.0}));
  }
  auto x = torch::tensor({{{1.0, 2.0}, {0.5, -0.3}, {-1.0, 0.4}}, {{2.0, 0.0}, {0.7, 0.1}, {-0.2, -2.0}}});  // [2, 3, 2]
  auto flat = x.reshape({-1, 2});
  auto p = torch::sigmoid((x - flat.mean(0)) / torch::sqrt(flat.var(0, false) + 1e-5));
  m.ptr()->train();
  expect_close(m.forward(x), torch::tensor({0.5, -1.0}) * (1 - p) * x + p * x, "Dice dim 3");
}
}  // namespace activation_test
}  // namespace tzrec::nn
