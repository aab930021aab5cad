// Intervention and RotateLayer against tests/python/intervention_reference.py, which runs
// TorchEasyRec's Intervention.forward (tzrec/modules/intervention.py line 68; RotateLayer line
// 16) with the layers wrapped by PyTorch's own torch.nn.utils.parametrizations.orthogonal;
// state-dict names and the initial state.
#include "nn/intervention.h"

#include <gtest/gtest.h>

#include "nn/testing.h"

namespace tzrec::nn {
namespace intervention_test {

using testing::names;
using testing::pattern;

torch::Tensor values(std::vector<float> v, std::vector<int64_t> shape) {
  return torch::tensor(v, torch::kFloat).view(shape);
}

TEST(Intervention, StateDictNamesAsTorchsParametrization) {
  Intervention m(5, 4, 2, 0.1);
  EXPECT_EQ(names(m->named_parameters()),
            (std::vector<std::string>{"base_rotate_layer.parametrizations.weight.original",
                                      "source_rotate_layer.parametrizations.weight.original"}));
  EXPECT_EQ(names(m->named_buffers()), (std::vector<std::string>{"base_rotate_layer.parametrizations.weight.0.base",
                                                                 "source_rotate_layer.parametrizations.weight.0.base"}));
  EXPECT_EQ(m->named_buffers()["base_rotate_layer.parametrizations.weight.0.base"].sizes(),
            (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(m->output_dim(), 5);
}

// As torch's right_inverse: original = −I, base orthogonal, and W = base[:, :k] has orthonormal
// columns.
TEST(Intervention, InitialStateIsOrthonormal) {
  torch::manual_seed(2);
  RotateLayer r(6, 3);
  auto p = r->named_parameters()["parametrizations.weight.original"];
  auto base = r->named_buffers()["parametrizations.weight.0.base"];
  auto neg_id = torch::zeros({6, 3});
  neg_id.diagonal().fill_(-1);
  EXPECT_TRUE(torch::equal(p, neg_id));
  EXPECT_TRUE(torch::allclose(torch::matmul(base.t(), base), torch::eye(6), 1e-5, 1e-5));
  auto w = r->weight();
  EXPECT_TRUE(torch::allclose(w, base.narrow(1, 0, 3), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(torch::matmul(w.t(), w), torch::eye(3), 1e-5, 1e-5));
}

TEST(Intervention, MatchesPyTorchReference) {
  Intervention m(5, 4, 2, 0.1);
  m->eval();
  {
    torch::NoGradGuard g;
    auto set_original = [&](const std::string& name, std::vector<int64_t> shape, double phase) {
      auto x = pattern(shape, phase);
      x.diagonal().copy_(torch::tensor({-1.0f, 1.0f}));
      m->named_parameters()[name].copy_(x);
    };
    set_original("base_rotate_layer.parametrizations.weight.original", {5, 2}, 0.3);
    set_original("source_rotate_layer.parametrizations.weight.original", {4, 2}, 0.6);
    m->named_buffers()["base_rotate_layer.parametrizations.weight.0.base"].copy_(pattern({5, 5}, 1.1));
    m->named_buffers()["source_rotate_layer.parametrizations.weight.0.base"].copy_(pattern({4, 4}, 1.7));
  }
  auto base = pattern({3, 5}, 0.0).requires_grad_(true);
  auto source = pattern({3, 4}, 2.0).requires_grad_(true);
  auto out = m->forward(base, source);
  (out * pattern({3, 5}, 0.9)).sum().backward();
  // /usr/bin/python3 tests/python/intervention_reference.py
  auto want = values({0.139533266, 0.13156113, 0.224754468, 0.559042811, 0.549042165, 0.401558876, 0.422916055,
                      0.32752344, 0.0295617506, -0.125671908, -0.523106933, -0.313683361, -0.271136522, -0.700254321,
                      -0.545064569},
                     {3, 5});
  auto want_base_grad = values({0.65561235, 0.394330472, 0.280723482, 0.655966461, 0.450995296, 0.104936123,
                                0.0378010646, -0.0996913016, -0.395237803, -0.477496475, -0.713451028, -0.415165663,
                                -0.225775644, -0.438119084, -0.18780838},
                               {3, 5});
  auto want_base_original = values({0, 0, 0.0157101452, 0, -0.0599449575, 0.0114754057, -0.0607221872, 0.0137608936,
                                    0.00107630994, 0.00186297495},
                                   {5, 2});
  auto want_source_original =
      values({0, 0, 0.00689558126, 0, 0.0675654411, -0.0213234331, 0.116418354, -0.0475972258}, {4, 2});
  EXPECT_TRUE(torch::allclose(out, want, 1e-5, 1e-6)) << out;
  EXPECT_TRUE(torch::allclose(base.grad(), want_base_grad, 1e-5, 1e-6)) << base.grad();
  EXPECT_FALSE(source.grad().defined());  // the source is detached
  auto params = m->named_parameters();
  EXPECT_TRUE(torch::allclose(params["base_rotate_layer.parametrizations.weight.original"].grad(), want_base_original,
                              1e-4, 1e-6))
      << params["base_rotate_layer.parametrizations.weight.original"].grad();
  EXPECT_TRUE(torch::allclose(params["source_rotate_layer.parametrizations.weight.original"].grad(),
                              want_source_original, 1e-4, 1e-6))
      << params["source_rotate_layer.parametrizations.weight.original"].grad();
}

}  // namespace intervention_test
}  // namespace tzrec::nn
