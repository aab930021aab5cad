// linear_relu_forward vs Linear → ReLU in plain autograd: values and every gradient.
#include "nn/linear_relu.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "nn/autocast.h"

namespace tzrec::nn {
namespace linear_relu_test {

struct Grads {
  torch::Tensor y, x, w, b;
};

Grads run(bool fused, const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0,
          const torch::Tensor& g, bool x_requires_grad = true) {
  auto x = x0.clone().requires_grad_(x_requires_grad);
  auto w = w0.clone().requires_grad_(true);
  auto b = b0.clone().requires_grad_(true);
  auto y = fused ? linear_relu_forward(x, w, b) : torch::relu(torch::addmm(b, x, w.t()));
  (y * g).sum().backward();
  return {y.detach(), x_requires_grad ? x.grad() : torch::Tensor(), w.grad(), b.grad()};
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-5)) << what << "\n" << (got - want).abs().max();
}

TEST(LinearRelu, MatchesLinearThenReluWithGradients) {
  torch::manual_seed(7);
  // About half the pre-activations are negative.
  auto x = torch::randn({700, 9});
  auto w = torch::randn({5, 9});
  auto b = torch::randn({5});
  auto g = torch::randn({700, 5});
  Grads fused = run(true, x, w, b, g), plain = run(false, x, w, b, g);
  expect_close(fused.y, plain.y, "output");
  EXPECT_GT((plain.y == 0).sum().item<int64_t>(), 700);  // the mask matters
  expect_close(fused.x, plain.x, "grad x");
  expect_close(fused.w, plain.w, "grad weight");
  expect_close(fused.b, plain.b, "grad bias");
  // An input that needs no gradient (e.g. raw dense features) gets none.
  Grads no_x = run(true, x, w, b, g, /*x_requires_grad=*/false);
  EXPECT_FALSE(no_x.x.defined());
  expect_close(no_x.w, plain.w, "grad weight without grad x");
}

// Inputs taller than two GEMM blocks (8192 rows) run their row GEMMs block by block, last block
// partial: the same values and gradients.
TEST(LinearRelu, TallInputInRowBlocks) {
  torch::manual_seed(5);
  auto x = torch::randn({40000, 6});
  auto w = torch::randn({7, 6});
  auto b = torch::randn({7});
  auto g = torch::randn({40000, 7});
  Grads fused = run(true, x, w, b, g), plain = run(false, x, w, b, g);
  expect_close(fused.y, plain.y, "output");
  expect_close(fused.x, plain.x, "grad x");
  EXPECT_TRUE(torch::allclose(fused.w, plain.w, 1e-4, 1e-4)) << (fused.w - plain.w).abs().max();
  EXPECT_TRUE(torch::allclose(fused.b, plain.b, 1e-4, 1e-4)) << (fused.b - plain.b).abs().max();
}

// Under CPU bf16 autocast the node runs on bf16 copies: the output of autocast's Linear → ReLU,
// and fp32 gradients for the fp32 operands, for a short and a tall (row-block) input. Reference
// gradients: float64 on the bf16-rounded operands, masked where the bf16 output is 0. The node
// must be at least as close to that reference as autocast's own backward (whose bf16 GEMM
// accuracy depends on the CPU: without oneDNN, long reductions such as the weight gradient's lose
// precision; the tall input's blocks compute their weight gradients in float, rounded once), and
// within 6 % (short) / 15 % (tall) of the gradient's largest value.
TEST(LinearRelu, Bf16AutocastMatchesAutocastLinear) {
  for (int64_t rows : {300, 20000}) {
    SCOPED_TRACE(rows);
    torch::manual_seed(3);
    auto x = torch::randn({rows, 24});
    auto w = torch::randn({16, 24}) * 0.2;
    auto b = torch::randn({16});
    auto g = torch::randn({rows, 16});
    Grads fused, plain;
    {
      AutocastGuard bf16(torch::kBFloat16);
      fused = run(true, x, w, b, g);
      plain = run(false, x, w, b, g);
    }
    EXPECT_EQ(fused.y.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(fused.y, plain.y));
    auto round = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat64); };
    auto masked = torch::where(fused.y > 0, round(g), torch::zeros({}, torch::kFloat64));
    const std::vector<std::pair<const char*, torch::Tensor>> want = {
        {"x", masked.mm(round(w))}, {"w", masked.t().mm(round(x))}, {"b", masked.sum(0)}};
    const std::vector<torch::Tensor> got = {fused.x, fused.w, fused.b}, autocast = {plain.x, plain.w, plain.b};
    for (size_t i = 0; i < want.size(); ++i) {
      const auto& [name, expected] = want[i];
      EXPECT_EQ(got[i].scalar_type(), torch::kFloat) << name;
      const double scale = expected.abs().max().item<double>();
      const double error = (got[i].to(torch::kFloat64) - expected).abs().max().item<double>();
      const double autocast_error = (autocast[i].to(torch::kFloat64) - expected).abs().max().item<double>();
      EXPECT_LE(error, 1.05 * autocast_error + 1e-6 * scale) << name;
      EXPECT_LT(error, (rows > 1000 ? 0.15 : 0.06) * scale) << name;
    }
  }
}

TEST(LinearRelu, OtherDtypesAndModesFallBackToTheSameValues) {
  torch::manual_seed(9);
  auto x = torch::randn({6, 4}, torch::kFloat64), w = torch::randn({3, 4}, torch::kFloat64);
  auto b = torch::randn({3}, torch::kFloat64), g = torch::randn({6, 3}, torch::kFloat64);
  Grads fused = run(true, x, w, b, g), plain = run(false, x, w, b, g);
  EXPECT_TRUE(torch::allclose(fused.x, plain.x, 1e-12, 1e-12));
  // Under bf16 autocast the GEMM runs in bf16 as for any Linear.
  AutocastGuard bf16(torch::kBFloat16);
  auto y = linear_relu_forward(x.to(torch::kFloat32), w.to(torch::kFloat32), b.to(torch::kFloat32));
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
}

}  // namespace linear_relu_test
}  // namespace tzrec::nn
