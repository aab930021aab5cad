// CapsuleLayer against capsule_layer_reference.py (an independent plain-PyTorch version of
// TorchEasyRec's dynamic routing; its printed values are copied here). Both draw the "normal"
// routing logits from the default generator seeded with 0 right before the forward.
#include "nn/capsule_layer.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::nn {
namespace capsule_layer_test {

torch::Tensor input() {
  return (torch::arange(2 * 6 * 3, torch::kFloat32).reshape({2, 6, 3}).fmod(7) - 3) / 4;
}

CapsuleLayer layer(CapsuleOptions o) {
  CapsuleLayer l(o, 3);
  torch::NoGradGuard no_grad;
  l->bilinear_matrix.copy_(torch::tensor({{0.5f, -0.25f}, {0.125f, 1.0f}, {-0.75f, 0.5f}}));
  return l;
}

CapsuleOptions options(bool normal) {
  CapsuleOptions o;
  o.max_k = 3;
  o.max_seq_len = 5;  // the 6-item history is truncated
  o.high_dim = 2;
  o.num_iters = 3;
  o.routing_logits_scale = 2.0;
  o.routing_logits_stddev = 1.5;
  o.squash_pow = 0.5;
  o.normal_init = normal;
  return o;
}

TEST(CapsuleLayer, MatchesThePlainReference) {
  const torch::Tensor lengths = torch::tensor({6, 2}, torch::kInt64);
  {
    CapsuleLayer l = layer(options(true));
    torch::manual_seed(0);
    auto [h, mask] = l->forward(input(), lengths);
    const torch::Tensor expected = torch::tensor({{{-0.07263270f, 0.09637122f}, {0.22563429f, 0.60889924f},
                                                   {0.22495063f, -0.82410425f}},
                                                  {{-0.50507629f, 0.30304575f}, {0.0f, 0.0f}, {0.0f, 0.0f}}});
    EXPECT_TRUE(torch::allclose(h, expected, 1e-5, 1e-6)) << h;
    // log2(6) = 2.58 → 3 interests; log2(2) = 1 → 1.
    EXPECT_TRUE(torch::equal(mask, torch::tensor({{true, true, true}, {true, false, false}})));
  }
  {
    CapsuleLayer l = layer(options(false));
    auto [h, mask] = l->forward(input(), lengths);
    const torch::Tensor expected = torch::tensor({{{0.20853496f, -0.21846519f}, {0.20853496f, -0.21846519f},
                                                   {0.20853496f, -0.21846519f}},
                                                  {{-0.50507629f, 0.30304575f}, {0.0f, 0.0f}, {0.0f, 0.0f}}});
    EXPECT_TRUE(torch::allclose(h, expected, 1e-5, 1e-6)) << h;
  }
  {
    CapsuleOptions o = options(true);
    o.max_k = 2;
    o.max_seq_len = 8;  // padded
    o.num_iters = 1;
    o.routing_logits_scale = 1.0;
    o.squash_pow = 1.0;
    o.const_caps_num = true;
    CapsuleLayer l = layer(o);
    torch::manual_seed(0);
    auto [h, mask] = l->forward(input(), lengths);
    const torch::Tensor expected = torch::tensor({{{0.17574486f, -0.10586130f}, {-0.02551114f, -0.23321187f}},
                                                  {{-0.13047498f, 0.12586558f}, {-0.07667800f, 0.01293320f}}});
    EXPECT_TRUE(torch::allclose(h, expected, 1e-5, 1e-6)) << h;
    EXPECT_TRUE(mask.all().item<bool>());
  }
}

TEST(CapsuleLayer, GradientsReachTheBilinearMatrixAndInputs) {
  CapsuleLayer l = layer(options(true));
  torch::Tensor x = input().requires_grad_(true);
  auto [h, mask] = l->forward(x, torch::tensor({6, 2}, torch::kInt64));
  h.sum().backward();
  EXPECT_GT(l->bilinear_matrix.grad().abs().sum().item<double>(), 0.0);
  // Items past the history length (row 1 from item 2) and past max_seq_len get no gradient.
  EXPECT_EQ(x.grad()[1].narrow(0, 2, 4).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(x.grad()[0][5].abs().sum().item<double>(), 0.0);
  EXPECT_GT(x.grad()[0].narrow(0, 0, 5).abs().sum().item<double>(), 0.0);
}

TEST(CapsuleLayer, RejectsEmptySizes) {
  CapsuleOptions o = options(true);
  o.high_dim = 0;
  EXPECT_THROW(CapsuleLayer(o, 3, "model_config.mind.user_tower.capsule_config"), ConfigError);
}

}  // namespace capsule_layer_test
}  // namespace tzrec::nn
