// SidContrastiveLoss against sid_loss_reference.py (src/loss/, plain PyTorch; its printed values
// and gradients are copied here) for a mixed batch, an all-pair batch and a batch without pairs,
// with one temperature above the ln(100) cap; and its state names.
#include "loss/sid_contrastive_loss.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec::loss {
namespace sid_contrastive_loss_test {

torch::Tensor pattern(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return torch::arange(n, torch::kFloat).mul(0.37).add(phase).sin().mul(0.5).reshape(shape);
}

TEST(SidContrastiveLoss, StateNamesAndInit) {
  SidContrastiveLoss loss;
  std::vector<std::string> names;
  for (const auto& p : loss->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"logit_scale_self", "logit_scale_cl", "logit_scale_ori"}));
  EXPECT_FLOAT_EQ(loss->logit_scale_self.item<float>(), static_cast<float>(std::log(1 / 0.07)));
}

struct Case {
  std::vector<bool> mask;
  float loss;
  std::vector<float> grad_a;
  std::vector<float> grad_b;
  std::vector<float> grad_scales;  // self, cl, ori
};

TEST(SidContrastiveLoss, MatchesThePlainReference) {
  const Case cases[] = {
      {{true, false, true, true, false, true},
       28.407082f,
       {-0.22283255f, -0.12802577f, -0.015890121f, 0.098395824f,  0.0f,        0.0f,         0.0f,        0.0f,
        0.32604799f,  0.21055174f,  0.066557407f,  -0.086442471f, 1.9371207f,  0.4634304f,   -1.0729852f, -2.4641762f,
        0.0f,         0.0f,         0.0f,          0.0f,          -1.4610546f, -0.43388128f, 0.65201855f, 1.6496692f},
       {0.21642199f,  0.08624962f,  -0.055596352f, -0.18991753f, 0.0f,        0.0f,        0.0f,       0.0f,
        -0.39075288f, -0.17143464f, 0.071086675f,  0.30398667f,  1.4817531f,  -1.0073991f, -3.360208f, -5.2582245f,
        0.0f,         0.0f,         0.0f,          0.0f,         -1.3566885f, 0.18579769f, 1.7031363f, 2.9899604f},
       {0.11601357f, 0.72589827f, 0.0f}},
      {{true, true, true, true, true, true},
       28.580429f,
       {-0.15080684f, -0.086644292f, -0.01075387f, 0.066591263f,   -1.3031743f, -0.21081185f, 0.91008282f,  1.9078023f,
        0.18104547f,  0.11691356f,   0.036957502f, -0.047999144f,  1.0684929f,  0.25562239f,  -0.59184647f, -1.3592098f,
        0.4759295f,   0.35737064f,   0.19044769f,  -0.0022549629f, -1.0665519f, -0.31672788f, 0.47596526f,  1.2042382f},
       {-0.024054348f, -0.0095861256f, 0.0061794221f, 0.02110821f,  -0.14080739f, 1.7297771f,
        3.3662441f,    4.5471063f,     -0.26602578f,  -0.11671323f, 0.048396036f, 0.20695508f,
        0.99277341f,   -0.67495692f,   -2.2513375f,   -3.5230072f,  0.25279316f,  0.12148449f,
        -0.026266515f, -0.17046276f,   -1.1268442f,   0.15432036f,  1.4145981f,   2.4834144f},
       {0.21775265f, 0.7269814f, 0.0f}},
      {{false, false, false, false, false, false},
       0.0f,
       {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
        0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
       {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
        0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
       {0.0f, 0.0f, 0.0f}},
  };
  for (const Case& c : cases) {
    SidContrastiveLoss loss;
    {
      torch::NoGradGuard no_grad;
      loss->logit_scale_cl.fill_(1.2);
      loss->logit_scale_ori.fill_(5.0);  // above ln(100): clamped, no gradient
    }
    torch::Tensor a = pattern({6, 4}, 0.1).requires_grad_(true);
    torch::Tensor b = pattern({6, 4}, 0.8).requires_grad_(true);
    std::vector<uint8_t> bytes(c.mask.begin(), c.mask.end());
    const torch::Tensor mask = torch::tensor(bytes).to(torch::kBool);
    torch::Tensor value = loss(a, b, pattern({6, 4}, 1.5), pattern({6, 4}, 2.6), mask);
    value.backward();
    EXPECT_NEAR(value.item<float>(), c.loss, 1e-4 * std::max(1.0f, c.loss));
    EXPECT_TRUE(std::isfinite(value.item<float>()));
    EXPECT_TRUE(torch::allclose(a.grad(), torch::tensor(c.grad_a).reshape({6, 4}), 1e-4, 1e-5)) << a.grad();
    EXPECT_TRUE(torch::allclose(b.grad(), torch::tensor(c.grad_b).reshape({6, 4}), 1e-4, 1e-5)) << b.grad();
    const torch::Tensor scales =
        torch::stack({loss->logit_scale_self.grad(), loss->logit_scale_cl.grad(), loss->logit_scale_ori.grad()});
    EXPECT_TRUE(torch::allclose(scales, torch::tensor(c.grad_scales), 1e-4, 1e-6)) << scales;
  }
}

}  // namespace sid_contrastive_loss_test
}  // namespace tzrec::loss
