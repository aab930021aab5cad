// SidReconLoss against sid_loss_reference.py (src/loss/, plain PyTorch; its printed values and
// gradients are copied here), its hand-checked mask rules, and the distance names.
#include "loss/sid_recon_loss.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::loss {
namespace sid_recon_loss_test {

torch::Tensor pattern(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return torch::arange(n, torch::kFloat).mul(0.37).add(phase).sin().mul(0.5).reshape(shape);
}

struct Case {
  SidDistance distance;
  float loss;
  std::vector<float> grad;
  float masked;
  std::vector<float> masked_grad;
};

TEST(SidReconLoss, MatchesThePlainReference) {
  const Case cases[] = {
      {SidDistance::kL2,
       0.22593161f,
       {-0.032538991f, -0.0072184503f, 0.019079074f,  0.042794347f,   0.060717601f,   0.070423007f,  0.070596986f,
        0.061216004f,  0.04354972f,    0.019989191f,  -0.0062767896f, -0.031693257f,  -0.052820157f, -0.066798106f,
        -0.071735241f, -0.066963352f,  -0.053128283f, -0.03210257f,   -0.0067319246f, 0.019549906f},
       0.19606881f,
       {-0.054231655f, -0.012030751f, 0.03179846f,  0.071323916f,  0.0f,          0.0f,          0.0f,
        0.0f,          0.072582871f,  0.033315316f, -0.010461316f, -0.052822094f, -0.088033602f, -0.11133017f,
        -0.11955874f,  -0.11160558f,  -0.0f,        -0.0f,         -0.0f,         0.0f}},
      {SidDistance::kL1,
       0.41796145f,
       {-0.050000001f, -0.050000001f, 0.050000001f,  0.050000001f,  0.050000001f,  0.050000001f,  0.050000001f,
        0.050000001f,  0.050000001f,  0.050000001f,  -0.050000001f, -0.050000001f, -0.050000001f, -0.050000001f,
        -0.050000001f, -0.050000001f, -0.050000001f, -0.050000001f, -0.050000001f, 0.050000001f},
       0.38454723f,
       {-0.083333336f, -0.083333336f, 0.083333336f, 0.083333336f,  0.0f,          0.0f,          0.0f,
        0.0f,          0.083333336f,  0.083333336f, -0.083333336f, -0.083333336f, -0.083333336f, -0.083333336f,
        -0.083333336f, -0.083333336f, -0.0f,        -0.0f,         -0.0f,         0.0f}},
      {SidDistance::kCos,
       0.88828003f,
       {-0.15843567f,  -0.081606075f, 0.0062684938f, 0.093294702f, -0.08743225f,  -0.0023527741f, 0.08304511f,
        0.1572033f,    0.18513423f,   0.10523497f,   0.01109264f,  -0.084551089f, 0.09515702f,    0.014479443f,
        -0.068157956f, -0.14157037f,  -0.23136088f,  -0.1474731f,  -0.043625526f, 0.066126764f},
       0.78189522f,
       {-0.26405945f, -0.13601014f, 0.010447502f, 0.15549117f,  0.0f,         0.0f,        0.0f,
        0.0f,         0.30855703f,  0.17539161f,  0.018487751f, -0.14091849f, 0.15859503f, 0.024132386f,
        -0.1135966f,  -0.23595065f, -0.0f,        0.0f,         0.0f,         0.0f}},
  };
  const torch::Tensor mask = torch::tensor({true, false, true, true, false});
  for (const Case& c : cases) {
    SidReconLoss loss(c.distance);
    const torch::Tensor x = pattern({5, 4}, 1.9);
    torch::Tensor x_hat = pattern({5, 4}, 0.3).requires_grad_(true);
    torch::Tensor value = loss(x_hat, x);
    value.backward();
    EXPECT_NEAR(value.item<float>(), c.loss, 1e-6);
    EXPECT_TRUE(torch::allclose(x_hat.grad(), torch::tensor(c.grad).reshape({5, 4}), 1e-5, 1e-7)) << x_hat.grad();
    x_hat.mutable_grad().reset();
    value = loss(x_hat, x, mask);
    value.backward();
    EXPECT_NEAR(value.item<float>(), c.masked, 1e-6);
    EXPECT_TRUE(torch::allclose(x_hat.grad(), torch::tensor(c.masked_grad).reshape({5, 4}), 1e-5, 1e-7));
  }
}

TEST(SidReconLoss, HandCheckedMask) {
  const torch::Tensor x = torch::zeros({3, 2});
  const torch::Tensor x_hat = torch::tensor({{1.0f, 1.0f}, {2.0f, 2.0f}, {3.0f, 1.0f}});
  SidReconLoss l2;
  EXPECT_FLOAT_EQ(l2(x_hat, x).item<float>(), (1.0f + 4.0f + 5.0f) / 3);
  EXPECT_FLOAT_EQ(l2(x_hat, x, torch::tensor({false, true, true})).item<float>(), 4.5f);
  // No row masked in: 0, not NaN (div_no_nan).
  EXPECT_EQ(l2(x_hat, x, torch::zeros({3}, torch::kBool)).item<float>(), 0.0f);
}

TEST(SidReconLoss, DistanceNames) {
  EXPECT_EQ(parse_sid_distance("cos", "p"), SidDistance::kCos);
  try {
    parse_sid_distance("l3", "model_config.losses[0].recon_loss.recon_type");
    FAIL() << "l3 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model_config.losses[0].recon_loss.recon_type"), std::string::npos);
  }
}

}  // namespace sid_recon_loss_test
}  // namespace tzrec::loss
