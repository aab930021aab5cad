#include "nn/cross.h"

#include <functional>

#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/testing.h"

namespace tzrec::nn {
namespace cross_test {

using testing::names;

// A copy of `t` that is a fresh leaf needing a gradient (for the plain-ops reference).
torch::Tensor leaf(const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); }

TEST(Cross, ParameterNamesShapesAndInit) {
  torch::manual_seed(1);
  Cross cross(5, 3);
  EXPECT_EQ(names(cross->named_parameters()),
            (std::vector<std::string>{"w.0.weight", "w.1.weight", "w.2.weight", "b.0", "b.1", "b.2"}));
  auto p = cross->named_parameters();
  EXPECT_EQ(p["w.1.weight"].sizes(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(p["b.2"].sizes(), (std::vector<int64_t>{5}));
  for (const auto& item : p) EXPECT_TRUE(item.value().requires_grad()) << item.key();
  // xavier_uniform on [1, 5]: bound sqrt(6 / (1 + 5)) = 1; the biases start at 0.
  EXPECT_LE(p["w.0.weight"].abs().max().item<double>(), 1.0);
  EXPECT_GT(p["w.0.weight"].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(p["b.0"].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(cross->output_dim(), 5);
}

// x_{l+1} = (x_l · w_l) x_0 + b_l + x_l, written with plain ops; values and every gradient agree.
TEST(Cross, MatchesPlainOpsValuesAndGradients) {
  torch::manual_seed(2);
  const int64_t B = 6, d = 4, L = 3;
  Cross cross(d, L);
  cross->to(torch::kFloat64);
  {
    torch::NoGradGuard g;
    for (auto& p : cross->parameters()) p.normal_();  // non-zero biases too
  }
  auto x = torch::randn({B, d}, torch::kFloat64).requires_grad_(true);
  auto gy = torch::randn({B, d}, torch::kFloat64);
  auto y = cross->forward(x);
  (y * gy).sum().backward();

  auto p = cross->named_parameters();
  auto x0 = leaf(x);
  std::vector<torch::Tensor> w, b;
  for (int64_t l = 0; l < L; ++l) {
    w.push_back(leaf(p["w." + std::to_string(l) + ".weight"]));
    b.push_back(leaf(p["b." + std::to_string(l)]));
  }
  auto xl = x0;
  for (int64_t l = 0; l < L; ++l) {
    auto s = (xl * w[l].squeeze(0)).sum(1, /*keepdim=*/true);  // [B, 1]
    xl = s * x0 + b[l] + xl;
  }
  EXPECT_TRUE(torch::allclose(y, xl, 1e-12, 1e-12));
  (xl * gy).sum().backward();
  EXPECT_TRUE(torch::allclose(x.grad(), x0.grad(), 1e-12, 1e-12));
  for (int64_t l = 0; l < L; ++l) {
    EXPECT_TRUE(torch::allclose(p["w." + std::to_string(l) + ".weight"].grad(), w[l].grad(), 1e-12, 1e-12)) << l;
    EXPECT_TRUE(torch::allclose(p["b." + std::to_string(l)].grad(), b[l].grad(), 1e-12, 1e-12)) << l;
  }
}

// One layer by hand: x = [1, 2], w = [0.5, -1], b = [0.1, 0.2] → s = -1.5,
// y = -1.5 * [1, 2] + [0.1, 0.2] + [1, 2] = [-0.4, -0.8].
TEST(Cross, HandComputedOneLayer) {
  Cross cross(2, 1);
  {
    torch::NoGradGuard g;
    auto p = cross->named_parameters();
    p["w.0.weight"].copy_(torch::tensor({{0.5f, -1.0f}}));
    p["b.0"].copy_(torch::tensor({0.1f, 0.2f}));
  }
  auto y = cross->forward(torch::tensor({{1.0f, 2.0f}}));
  EXPECT_TRUE(torch::allclose(y, torch::tensor({{-0.4f, -0.8f}}), 1e-6, 1e-6)) << y;
}

TEST(CrossV2, ParameterNamesAndShapes) {
  CrossV2 cross(6, 2, 3);
  EXPECT_EQ(names(cross->named_parameters()),
            (std::vector<std::string>{"u_kernels.0.weight", "u_kernels.1.weight", "v_kernels.0.weight",
                                      "v_kernels.0.bias", "v_kernels.1.weight", "v_kernels.1.bias"}));
  auto p = cross->named_parameters();
  EXPECT_EQ(p["u_kernels.0.weight"].sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(p["v_kernels.1.weight"].sizes(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(p["v_kernels.1.bias"].sizes(), (std::vector<int64_t>{6}));
  EXPECT_EQ(cross->output_dim(), 6);
}

// x_{l+1} = x_0 * (V_l (U_l x_l) + c_l) + x_l with plain matmuls; values and every gradient agree.
TEST(CrossV2, MatchesPlainOpsValuesAndGradients) {
  torch::manual_seed(3);
  const int64_t B = 5, d = 7, r = 2, L = 3;
  CrossV2 cross(d, L, r);
  cross->to(torch::kFloat64);
  auto x = torch::randn({B, d}, torch::kFloat64).requires_grad_(true);
  auto gy = torch::randn({B, d}, torch::kFloat64);
  auto y = cross->forward(x);
  (y * gy).sum().backward();

  auto p = cross->named_parameters();
  auto x0 = leaf(x);
  std::vector<torch::Tensor> u, v, c;
  for (int64_t l = 0; l < L; ++l) {
    const std::string s = std::to_string(l);
    u.push_back(leaf(p["u_kernels." + s + ".weight"]));
    v.push_back(leaf(p["v_kernels." + s + ".weight"]));
    c.push_back(leaf(p["v_kernels." + s + ".bias"]));
  }
  auto xl = x0;
  for (int64_t l = 0; l < L; ++l) {
    auto full = torch::matmul(torch::matmul(xl, u[l].t()), v[l].t()) + c[l];  // [B, d]
    xl = x0 * full + xl;
  }
  EXPECT_TRUE(torch::allclose(y, xl, 1e-12, 1e-12));
  (xl * gy).sum().backward();
  EXPECT_TRUE(torch::allclose(x.grad(), x0.grad(), 1e-12, 1e-12));
  for (int64_t l = 0; l < L; ++l) {
    const std::string s = std::to_string(l);
    EXPECT_TRUE(torch::allclose(p["u_kernels." + s + ".weight"].grad(), u[l].grad(), 1e-12, 1e-12)) << l;
    EXPECT_TRUE(torch::allclose(p["v_kernels." + s + ".weight"].grad(), v[l].grad(), 1e-12, 1e-12)) << l;
    EXPECT_TRUE(torch::allclose(p["v_kernels." + s + ".bias"].grad(), c[l].grad(), 1e-12, 1e-12)) << l;
  }
}

TEST(Cross, BadArgumentsNameTheConfigField) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message([] { Cross(4, 0, "model_config.dcn_v1.cross"); }),
            "model_config.dcn_v1.cross.cross_num: must be >= 1, got 0");
  EXPECT_EQ(message([] { CrossV2(4, 0, 8, "model_config.dcn_v2.cross"); }),
            "model_config.dcn_v2.cross.cross_num: must be >= 1, got 0");
  EXPECT_EQ(message([] { CrossV2(4, 2, 0, "model_config.dcn_v2.cross"); }),
            "model_config.dcn_v2.cross.low_rank: must be >= 1, got 0");
  EXPECT_NE(message([] { Cross(0, 2, "c"); }).find("c: input dimension must be > 0"), std::string::npos);
}

}  // namespace cross_test
}  // namespace tzrec::nn
