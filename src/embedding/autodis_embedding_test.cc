#include "embedding/autodis_embedding.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec::embedding {
namespace autodis_embedding_test {

// The parameters of tests/tools/dense_embedding_reference.py (autodis_params): fixed functions of
// the indices, rounded to float32.
void set_reference_params(AutoDisEmbedding& m, int64_t channels, int64_t dim) {
  torch::NoGradGuard no_grad;
  auto params = m->named_parameters();
  for (int64_t n = 0; n < static_cast<int64_t>(m->feature_names().size()); ++n) {
    const std::string& f = m->feature_names()[n];
    torch::Tensor meta = params["meta_emb_" + f + ".weight"];
    torch::Tensor proj_w = params["proj_w_" + f + ".weight"];
    torch::Tensor proj_m = params["proj_m_" + f + ".weight"];
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t d = 0; d < dim; ++d) meta[c][d] = std::sin(1.0 + 100 * n + 10 * c + d);
      proj_w[c] = std::cos(2.0 + 7 * n + c);
      for (int64_t j = 0; j < channels; ++j) proj_m[c][j] = 0.3 * std::sin(3.0 + 31 * n + 5 * c + j);
    }
  }
}

torch::Tensor reference_input() {
  return torch::tensor({0.5f, -1.2f, 2.0f, 0.1f, -0.3f, 0.0f}).reshape({3, 2});
}

void expect_values(const torch::Tensor& got, const std::vector<float>& want) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  const torch::Tensor flat = got.detach().reshape({-1});
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(flat[static_cast<int64_t>(i)].item<float>(), want[i], 2e-5) << "element " << i;
  }
}

TEST(AutoDisEmbedding, StateDictKeysAndShapes) {
  AutoDisEmbedding m(std::vector<std::string>{"price", "age"}, 16, 3, 0.1, 0.8);
  std::vector<std::string> names;
  for (const auto& p : m->named_parameters()) names.push_back(p.key());
  // TorchEasyRec's split state dict: per feature meta_emb, proj_w, proj_m.
  EXPECT_EQ(names, (std::vector<std::string>{"meta_emb_price.weight", "proj_w_price.weight", "proj_m_price.weight",
                                             "meta_emb_age.weight", "proj_w_age.weight", "proj_m_age.weight"}));
  auto params = m->named_parameters();
  EXPECT_EQ(params["meta_emb_age.weight"].sizes(), (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(params["proj_w_age.weight"].sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(params["proj_m_age.weight"].sizes(), (std::vector<int64_t>{3, 3}));
}

// Values printed by tests/tools/dense_embedding_reference.py (numpy, float64, the formulas written
// out per row and feature).
TEST(AutoDisEmbedding, ForwardMatchesReference) {
  AutoDisEmbedding m(std::vector<std::string>{"a", "b"}, 4, 3, static_cast<double>(0.1f), static_cast<double>(0.8f));
  set_reference_params(m, 3, 4);
  torch::Tensor out = m->forward(reference_input());
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 8}));
  expect_values(out, {0.23567115,  0.13459993,  -0.090221875, -0.2320941,  -0.8465062, -0.86418662,
                      -0.087337862, 0.76980898,  0.26573993,   0.17583874,  -0.075727805, -0.25767055,
                      0.19938891,  0.20321788,  0.020209275,  -0.18137963, 0.027397693, -0.22086476,
                      -0.2660652,  -0.066646507, 0.19542987,  0.20118146,  0.021967751, -0.177443});

  AutoDisEmbedding warm(std::vector<std::string>{"a", "b"}, 4, 3, static_cast<double>(0.5f),
                        static_cast<double>(0.25f));
  set_reference_params(warm, 3, 4);
  expect_values(warm->forward(reference_input()),
                {0.22692959, 0.12318367, -0.093816763, -0.22456249, -0.1984633,  -0.19205611, -0.0090734226, 0.18225136,
                 0.229631,   0.1288996,  -0.090341517, -0.22652306, 0.19584997,  0.20146998,  0.021859427,   -0.17784857,
                 0.18839753, 0.020708599, -0.16601975, -0.2001103, 0.19542987,  0.20118146,  0.021967751,   -0.177443});
}

// Gradients reach each feature's own parameters, as with a plain per-feature computation.
TEST(AutoDisEmbedding, GradientsMatchPlainPerFeatureComputation) {
  torch::manual_seed(3);
  AutoDisEmbedding m(std::vector<std::string>{"a", "b"}, 4, 3, 0.2, 0.8);
  torch::Tensor x = torch::randn({5, 2});
  torch::Tensor weights = torch::randn({5, 8});
  (m->forward(x) * weights).sum().backward();

  auto params = m->named_parameters();
  std::vector<torch::Tensor> ref_loss;
  std::vector<torch::Tensor> leaves;
  for (int64_t n = 0; n < 2; ++n) {
    const std::string f = n == 0 ? "a" : "b";
    torch::Tensor meta = params["meta_emb_" + f + ".weight"].detach().clone().requires_grad_(true);
    torch::Tensor w = params["proj_w_" + f + ".weight"].detach().clone().requires_grad_(true);
    torch::Tensor mm = params["proj_m_" + f + ".weight"].detach().clone().requires_grad_(true);
    torch::Tensor h = torch::leaky_relu(x.select(1, n).unsqueeze(1) * w.unsqueeze(0), 0.01);  // [B, C]
    torch::Tensor x_bar = h.matmul(mm.t()) + 0.8 * h;
    torch::Tensor e = torch::softmax(x_bar / 0.2, 1).matmul(meta);  // [B, D]
    ref_loss.push_back((e * weights.narrow(1, n * 4, 4)).sum());
    leaves.insert(leaves.end(), {meta, w, mm});
  }
  torch::stack(ref_loss).sum().backward();
  const std::vector<std::string> names = {"meta_emb_a.weight", "proj_w_a.weight", "proj_m_a.weight",
                                          "meta_emb_b.weight", "proj_w_b.weight", "proj_m_b.weight"};
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_TRUE(params[names[i]].grad().defined()) << names[i];
    EXPECT_TRUE(torch::allclose(params[names[i]].grad(), leaves[i].grad(), 1e-5, 1e-6)) << names[i];
  }
}

// TorchEasyRec's initialisation: meta_emb ~ N(0, 1), proj_w ~ N(0, 2 / (1 + C)), proj_m ~ N(0, 1 / C).
TEST(AutoDisEmbedding, InitialisationDistributions) {
  torch::manual_seed(7);
  const int64_t c = 64;
  AutoDisEmbedding m(std::vector<std::string>{"f"}, 256, c, 0.1, 0.8);
  auto params = m->named_parameters();
  auto check = [](const torch::Tensor& t, double stddev) {
    EXPECT_NEAR(t.mean().item<double>(), 0.0, 4 * stddev / std::sqrt(static_cast<double>(t.numel())));
    EXPECT_NEAR(t.std().item<double>(), stddev, 0.06 * stddev);
  };
  check(params["meta_emb_f.weight"], 1.0);
  check(params["proj_w_f.weight"], std::sqrt(2.0 / (1 + c)));
  check(params["proj_m_f.weight"], std::sqrt(1.0 / c));
}

}  // namespace autodis_embedding_test
}  // namespace tzrec::embedding
