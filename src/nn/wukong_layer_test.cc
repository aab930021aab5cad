// WuKongLayer against tests/python/wukong_reference.py (the layer written out in plain PyTorch
// ops from tzrec/modules/interaction.py: LinearCompressBlock line 236, FactorizationMachineBlock
// line 267, WuKongLayer line 324), state-dict names and the Kaiming init of the compress weights.
#include "nn/wukong_layer.h"

#include <gtest/gtest.h>

#include "nn/testing.h"

namespace tzrec::nn {
namespace wukong_layer_test {

using testing::names;
using testing::pattern;

WuKongLayerOptions options() {
  WuKongLayerOptions o;
  o.lcb_feature_num = 2;
  o.fmb_feature_num = 3;
  o.compressed_feature_num = 2;
  o.feature_num_mlp = testing::relu_mlp({5, 4});
  return o;
}

TEST(WuKongLayer, StateDictNamesAsTzrec) {
  WuKongLayer projected(3, 4, options(), "layer");  // 4 features in, 5 out: residual projection
  EXPECT_EQ(names(projected->named_parameters()),
            (std::vector<std::string>{"lcb.weight", "fmb.weight", "fmb.norm.weight", "fmb.norm.bias",
                                      "fmb.mlp.mlp.0.perceptron.0.weight", "fmb.mlp.mlp.0.perceptron.0.bias",
                                      "fmb.mlp.mlp.1.perceptron.0.weight", "fmb.mlp.mlp.1.perceptron.0.bias",
                                      "fmb.feature_out_liner.weight", "fmb.feature_out_liner.bias", "norm.weight",
                                      "norm.bias", "residual_projection.weight"}));
  EXPECT_EQ(projected->named_parameters()["fmb.feature_out_liner.weight"].sizes(), (std::vector<int64_t>{9, 4}));
  EXPECT_EQ(projected->output_feature_num(), 5);
  WuKongLayer same(3, 5, options(), "layer");  // 5 in, 5 out: identity residual, no parameters
  EXPECT_FALSE(same->named_parameters().contains("residual_projection.weight"));
}

// torch.nn.init.kaiming_uniform_ of a [F, F'] tensor: bound sqrt(6 / fan_in), fan_in = F' (dim 1).
TEST(WuKongLayer, CompressWeightsUseTorchsKaimingBound) {
  torch::manual_seed(1);
  LinearCompressBlock lcb(200, 8);
  const double bound = std::sqrt(6.0 / 8);
  EXPECT_LE(lcb->weight.abs().max().item<double>(), bound);
  EXPECT_GT(lcb->weight.abs().max().item<double>(), 0.95 * bound);
}

TEST(WuKongLayer, TwoLayersMatchPyTorchReference) {
  WuKongLayer first(3, 4, options(), "l0");
  WuKongLayer second(3, 5, options(), "l1");
  {
    torch::NoGradGuard g;
    int k = 0;  // phases 0.1 (k + 1) over both layers' parameters in state-dict order
    for (WuKongLayer* layer : {&first, &second}) {
      for (auto& item : (*layer)->named_parameters()) {
        item.value().copy_(pattern(item.value().sizes().vec(), 0.1 * (k + 1)));
        ++k;
      }
    }
  }
  auto x = pattern({2, 4, 3}, 0.0).requires_grad_(true);
  auto out = second->forward(first->forward(x));
  (out * pattern({2, 5, 3}, 0.77)).sum().backward();
  // /usr/bin/python3 tests/python/wukong_reference.py
  auto want = torch::tensor({0.748165846, 0.0893754438, -0.0499864407, 0.220732749, 0.37455827, -0.0499937125,
                             -0.079929173, 0.100832723, -0.0480842814, 0.440810323, 0.308418423, -0.0502225049,
                             0.449997514, 0.304580301, -0.0502273291, 0.768794239, 0.0486133248, -0.0498562977,
                             0.36613512, 0.336311221, -0.0501687787, -0.112306379, 0.131901443, -0.0481442139,
                             0.21112448, 0.376346856, -0.0499789044, -0.0360191241, 0.382316768, -0.0494223945},
                            torch::kFloat)
                  .view({2, 5, 3});
  auto want_grad =
      torch::tensor({-0.06499964, 0.145585969, -0.0777502209, 0.00439507887, -0.0186058059, 0.0147946812,
                     -0.0430768505, 0.0790475011, -0.0378711969, -0.107225671, 0.230499029, -0.123532668,
                     4.77818489, 0.111726403, -4.90989685, -0.924931526, -0.235986054, 1.14485073, 5.30497551,
                     -0.295140803, -5.02921867, 10.5261822, 1.39968729, -11.9506264},
                    torch::kFloat)
          .view({2, 4, 3});
  EXPECT_TRUE(torch::allclose(out, want, 1e-4, 1e-5)) << out;
  EXPECT_TRUE(torch::allclose(x.grad(), want_grad, 1e-3, 1e-4)) << x.grad();
}

}  // namespace wukong_layer_test
}  // namespace tzrec::nn
