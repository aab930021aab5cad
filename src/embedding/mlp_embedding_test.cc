#include "embedding/mlp_embedding.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec::embedding {
namespace mlp_embedding_test {

void expect_values(const torch::Tensor& got, const std::vector<float>& want) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  const torch::Tensor flat = got.detach().reshape({-1});
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(flat[static_cast<int64_t>(i)].item<float>(), want[i], 1e-6) << "element " << i;
  }
}

TEST(MLPEmbedding, StateDictKeysAndShapes) {
  MLPEmbedding scalar(std::vector<std::string>{"price", "age"}, 16, 1);
  std::vector<std::string> names;
  for (const auto& p : scalar->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"proj_w_price.weight", "proj_w_age.weight"}));
  EXPECT_EQ(scalar->named_parameters()["proj_w_age.weight"].sizes(), (std::vector<int64_t>{16}));

  MLPEmbedding vector(std::vector<std::string>{"pic_emb"}, 8, 4);
  ASSERT_EQ(vector->named_parameters().size(), 1u);
  EXPECT_EQ(vector->named_parameters()["proj_w_pic_emb.weight"].sizes(), (std::vector<int64_t>{4, 8}));
}

// Values printed by tests/tools/dense_embedding_reference.py (numpy, float64).
TEST(MLPEmbedding, ForwardMatchesReference) {
  MLPEmbedding m(std::vector<std::string>{"a", "b"}, 3, 1);
  {
    torch::NoGradGuard no_grad;
    auto params = m->named_parameters();
    for (int64_t n = 0; n < 2; ++n) {
      torch::Tensor w = params[n == 0 ? "proj_w_a.weight" : "proj_w_b.weight"];
      for (int64_t d = 0; d < 3; ++d) w[d] = 0.25 * std::cos(1.0 + 13 * n + d);
    }
  }
  torch::Tensor x = torch::tensor({0.5f, -1.2f, 2.0f, 0.1f, -0.3f, 0.0f}).reshape({3, 2});
  torch::Tensor out = m->forward(x);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 6}));
  expect_values(out, {0.067537785, -0.052018356, -0.12374906, -0.041021165, 0.22790638, 0.28729786,
                      0.27015114, -0.20807342, -0.49499625, 0.0034184304, -0.018992198, -0.023941487,
                      -0.040522672, 0.031211015, 0.07424944, 0, 0, 0});

  MLPEmbedding v(std::vector<std::string>{"vec"}, 2, 3);
  {
    torch::NoGradGuard no_grad;
    torch::Tensor w = v->named_parameters()["proj_w_vec.weight"];
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t d = 0; d < 2; ++d) w[i][d] = 0.2 * std::sin(0.5 + 3 * i + d);
    }
  }
  torch::Tensor xv = torch::tensor({0.5f, -1.2f, 3.0f, 2.0f, 0.1f, -0.7f}).reshape({2, 3});
  expect_values(v->forward(xv), {0.26120252, 0.89715674, 0.15463775, 0.24812739});
}

// TorchEasyRec's glorot-normal initialisation: std sqrt(2 / (1 + D)), or sqrt(2 / (V + D)).
TEST(MLPEmbedding, InitialisationDistributions) {
  torch::manual_seed(5);
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) names.push_back("f" + std::to_string(i));
  MLPEmbedding scalar(names, 8, 1);
  std::vector<torch::Tensor> ws;
  for (const auto& p : scalar->named_parameters()) ws.push_back(p.value());
  const torch::Tensor all = torch::stack(ws);
  EXPECT_NEAR(all.std().item<double>(), std::sqrt(2.0 / 9), 0.03 * std::sqrt(2.0 / 9));
  MLPEmbedding vector(std::vector<std::string>{"v"}, 200, 100);
  EXPECT_NEAR(vector->named_parameters()["proj_w_v.weight"].std().item<double>(), std::sqrt(2.0 / 300),
              0.03 * std::sqrt(2.0 / 300));
}

}  // namespace mlp_embedding_test
}  // namespace tzrec::embedding
