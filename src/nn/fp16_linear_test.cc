// The emulated fp16 linear against a hand-made reference: inputs, weights and bias rounded to
// half, the product computed in double, the result rounded to half.
#include "nn/fp16_linear.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "nn/autocast.h"
#include "nn/fp16_emulation.h"
#include "nn/mlp.h"

namespace tzrec::nn {
namespace fp16_linear_test {

// Reference rounding through the half dtype, in double.
torch::Tensor half_in_double(const torch::Tensor& t) { return t.to(torch::kHalf).to(torch::kFloat64); }

// Equal, or one fp16 rounding step apart (fp32 vs double accumulation can straddle a rounding
// boundary): |a - b| <= 2^-10 * |b|, and at least 95% of the values exactly equal.
::testing::AssertionResult same_in_fp16(const torch::Tensor& actual, const torch::Tensor& expected) {
  const torch::Tensor a = actual.to(torch::kFloat64), e = expected.to(torch::kFloat64);
  if (a.sizes() != e.sizes()) return ::testing::AssertionFailure() << "shapes differ";
  const bool tolerance_ok = ((a - e).abs() <= e.abs() * std::ldexp(1.0, -10) + 1e-30).all().item<bool>();
  const double equal_fraction = a.eq(e).to(torch::kFloat64).mean().item<double>();
  if (!tolerance_ok || equal_fraction < 0.95) {
    return ::testing::AssertionFailure() << "max |diff| " << (a - e).abs().max().item<double>()
                                         << ", equal fraction " << equal_fraction;
  }
  return ::testing::AssertionSuccess();
}

TEST(Fp16Linear, ForwardMatchesHalfRoundedReference) {
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({6, 37}) * 3;
  const torch::Tensor w = torch::randn({11, 37}) * 0.7;
  const torch::Tensor b = torch::randn({11});
  const torch::Tensor y = fp16_linear(x, w, b);
  EXPECT_EQ(y.scalar_type(), torch::kFloat32);
  const torch::Tensor expected =
      (half_in_double(x).mm(half_in_double(w).t()) + half_in_double(b)).to(torch::kHalf).to(torch::kFloat32);
  EXPECT_TRUE(same_in_fp16(y, expected));
  // Every output is an fp16 value, and the result is not the fp32 one.
  EXPECT_TRUE(torch::equal(y, y.to(torch::kHalf).to(torch::kFloat32)));
  EXPECT_FALSE(torch::allclose(y, torch::nn::functional::linear(x, w, b), 1e-6, 1e-6));
  // No bias, and leading dimensions kept: [2, 3, 37] → [2, 3, 11].
  const torch::Tensor y3 = fp16_linear(x.view({2, 3, 37}), w, torch::Tensor());
  EXPECT_EQ(y3.sizes(), (std::vector<int64_t>{2, 3, 11}));
  EXPECT_TRUE(same_in_fp16(y3.view({6, 11}), half_in_double(x).mm(half_in_double(w).t()).to(torch::kHalf)));
}

TEST(Fp16Linear, OutputOverflowsBeyondFp16Max) {
  // 255*256 + 1*224 = 65504 (the largest fp16) stays finite; 256*256 = 65536 rounds to inf.
  const torch::Tensor x = torch::tensor({{255.0f, 1.0f}, {256.0f, 0.0f}, {-256.0f, 0.0f}});
  const torch::Tensor w = torch::tensor({{256.0f, 224.0f}});
  const torch::Tensor y = fp16_linear(x, w, torch::Tensor());
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(y[0][0].item<float>(), 65504.0f);
  EXPECT_EQ(y[1][0].item<float>(), inf);
  EXPECT_EQ(y[2][0].item<float>(), -inf);
  // Inputs are rounded first: 70000 is already inf as an fp16 input.
  EXPECT_EQ(fp16_linear(torch::tensor({{70000.0f}}), torch::tensor({{1e-3f}}), torch::Tensor()).item<float>(), inf);
}

TEST(Fp16Linear, BackwardRoundsGradientsToHalf) {
  torch::manual_seed(4);
  const torch::Tensor x0 = torch::randn({5, 9});
  const torch::Tensor w0 = torch::randn({4, 9});
  const torch::Tensor b0 = torch::randn({4});
  const torch::Tensor g = torch::randn({5, 4}) * 10;  // upstream gradient
  torch::Tensor x = x0.clone().requires_grad_(true);
  torch::Tensor w = w0.clone().requires_grad_(true);
  torch::Tensor b = b0.clone().requires_grad_(true);
  (fp16_linear(x, w, b) * g).sum().backward();
  const torch::Tensor gh = half_in_double(g);
  auto to_half = [](const torch::Tensor& t) { return t.to(torch::kHalf).to(torch::kFloat32); };
  EXPECT_TRUE(same_in_fp16(x.grad(), to_half(gh.mm(half_in_double(w0)))));
  EXPECT_TRUE(same_in_fp16(w.grad(), to_half(gh.t().mm(half_in_double(x0)))));
  EXPECT_TRUE(same_in_fp16(b.grad(), to_half(gh.sum(0))));
  EXPECT_EQ(w.grad().scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(w.grad(), to_half(w.grad())));
}

// A loss-scaled gradient that fits in fp16 per element still overflows in the weight gradient
// (sum over rows), and an upstream gradient beyond 65504 is inf as soon as it is rounded.
TEST(Fp16Linear, ScaledGradientsOverflowToInf) {
  torch::Tensor x = torch::full({4, 2}, 8.0f).requires_grad_(true);
  torch::Tensor w = torch::full({3, 2}, 0.5f).requires_grad_(true);
  torch::Tensor b = torch::zeros({3}).requires_grad_(true);
  (fp16_linear(x, w, b) * 30000.0f).sum().backward();  // dW = 4 * 8 * 30000 = 960000 → inf
  EXPECT_TRUE(torch::isinf(w.grad()).all().item<bool>());
  EXPECT_TRUE(torch::isinf(b.grad()).all().item<bool>());    // 4 * 30000
  // dx = 3 * 0.5 * 30000 = 45000, rounded to the fp16 grid (spacing 32 there): 44992.
  EXPECT_TRUE(torch::isfinite(x.grad()).all().item<bool>());
  EXPECT_EQ(x.grad()[0][0].item<float>(), 44992.0f);
  x.mutable_grad() = torch::Tensor();
  (fp16_linear(x, w, b) * 1e5f).sum().backward();  // upstream 1e5 → inf
  EXPECT_TRUE(torch::isinf(x.grad()).all().item<bool>());
}

TEST(Fp16Linear, LinearForwardFollowsTheMode) {
  torch::manual_seed(5);
  torch::nn::Linear linear(16, 8);
  const torch::Tensor x = torch::randn({3, 16}) * 5;
  const torch::Tensor fp32 = torch::nn::functional::linear(x, linear->weight, linear->bias);
  const torch::Tensor emulated = fp16_linear(x, linear->weight, linear->bias);
  ASSERT_FALSE(torch::equal(fp32, emulated));
  EXPECT_FALSE(fp16_emulation_enabled());
  EXPECT_TRUE(torch::equal(linear_forward(x, linear->weight, linear->bias), fp32));
  {
    Fp16EmulationGuard on;
    EXPECT_TRUE(torch::equal(linear_forward(x, linear->weight, linear->bias), emulated));
    {
      Fp16EmulationGuard off(false);
      EXPECT_TRUE(torch::equal(linear_forward(x, linear->weight, linear->bias), fp32));
    }
    EXPECT_TRUE(fp16_emulation_enabled());
  }
  EXPECT_FALSE(fp16_emulation_enabled());
  {
    AutocastGuard fp16(c10::ScalarType::Half);
    EXPECT_TRUE(fp16_emulation_enabled());
    const torch::Tensor y = linear_forward(x, linear->weight, linear->bias);
    EXPECT_EQ(y.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(y, emulated));
  }
  EXPECT_FALSE(fp16_emulation_enabled());
  {
    // BF16 keeps real CPU autocast; an FP16 scope inside it emulates fp16 (no bf16 recast).
    AutocastGuard bf16(c10::ScalarType::BFloat16);
    EXPECT_EQ(linear_forward(x, linear->weight, linear->bias).scalar_type(), torch::kBFloat16);
    {
      AutocastGuard fp16(c10::ScalarType::Half);
      EXPECT_TRUE(torch::equal(linear_forward(x, linear->weight, linear->bias), emulated));
    }
    EXPECT_EQ(linear_forward(x, linear->weight, linear->bias).scalar_type(), torch::kBFloat16);
  }
  EXPECT_TRUE(torch::equal(linear_forward(x, linear->weight, linear->bias), fp32));
}

// The MLP's Linear layers go through linear_forward: under FP16 the MLP equals the chain of
// emulated linears, and its parameter names are unchanged.
TEST(Fp16Linear, MlpUsesTheEmulation) {
  torch::manual_seed(6);
  MLPOptions options;
  options.hidden_units = {16, 4};
  MLP mlp(8, options);
  const torch::Tensor x = torch::randn({5, 8}) * 4;
  const auto params = mlp->named_parameters();
  const torch::Tensor w0 = params["mlp.0.perceptron.0.weight"], b0 = params["mlp.0.perceptron.0.bias"];
  const torch::Tensor w1 = params["mlp.1.perceptron.0.weight"], b1 = params["mlp.1.perceptron.0.bias"];
  EXPECT_EQ(params.size(), 4u);
  const torch::Tensor expected = torch::relu(fp16_linear(torch::relu(fp16_linear(x, w0, b0)), w1, b1));
  torch::Tensor y;
  {
    AutocastGuard fp16(c10::ScalarType::Half);
    y = mlp->forward(x);
  }
  EXPECT_TRUE(torch::equal(y, expected));
  EXPECT_FALSE(torch::equal(mlp->forward(x), expected));  // fp32 outside the scope
}

}  // namespace fp16_linear_test
}  // namespace tzrec::nn
