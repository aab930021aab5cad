// SidCommitmentLoss against sid_loss_reference.py (src/loss/, plain PyTorch; its printed values
// and gradients are copied here) with weights [0.75, 0.25], and a hand-checked case.
#include "loss/sid_commitment_loss.h"

#include <gtest/gtest.h>

namespace tzrec::loss {
namespace sid_commitment_loss_test {

torch::Tensor pattern(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return torch::arange(n, torch::kFloat).mul(0.37).add(phase).sin().mul(0.5).reshape(shape);
}

struct Case {
  SidDistance distance;
  float loss;
  std::vector<float> grad_encoder;
  std::vector<float> grad_latents;
};

TEST(SidCommitmentLoss, MatchesThePlainReference) {
  const Case cases[] = {
      {SidDistance::kL2,
       0.30486161f,
       {0.015262531f, 0.050674021f, 0.079227015f, 0.11319306f, 0.097410381f, 0.068443678f, -0.022241712f, -0.053940475f,
        -0.078338645f, -0.044846341f, -0.038536943f, -0.027011756f},
       {0.0025401446f,  -0.0029574342f, -0.0080547361f, -0.0076276548f, -0.013933907f, -0.018354271f,
        -0.020290468f,  -0.019480446f,  -0.016033839f,  -0.017440554f,  -0.012989683f, -0.0067807208f,
        0.00034597766f, 0.0074258475f,  0.013500663f,   0.0070679262f,  0.010554312f,  0.012612219f,
        0.012963124f,   0.011559524f,   0.0085914023f,  0.0019856575f,  0.0012861248f, 0.00041251694f}},
      {SidDistance::kL1,
       0.46957827f,
       {0.0f, 0.0625f, 0.0625f, 0.0625f, 0.0625f, 0.0625f, -0.0625f, -0.0625f, -0.0625f, -0.0625f, -0.0625f, -0.0625f},
       {0.010416667f,  -0.010416667f, -0.010416667f, -0.010416667f, -0.010416667f, -0.010416667f,
        -0.010416667f, -0.010416667f, -0.010416667f, -0.010416667f, -0.010416667f, -0.010416667f,
        0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f,
        0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f,  0.010416667f}},
      {SidDistance::kCos,
       1.2517499f,
       {-0.095168732f, -0.014737703f, 0.067687988f, 0.024464823f, -0.0041823089f, -0.032263398f, -0.45407891f,
        -0.4069674f, -0.30477479f, -0.095718279f, -0.0099835582f, 0.077102251f},
       {0.015110707f,   -0.010052523f,  -0.033855177f, -0.015407776f, -0.0048242137f, 0.0064122863f,
        -0.0038416814f, 8.0438331e-05f, 0.0039916746f, 0.0081349351f, -0.013694607f,  -0.033670649f,
        -0.04040125f,   -0.0093973447f, 0.022878451f,  -0.025575398f, 0.0019727889f,  0.029253967f,
        0.008994367f,   0.048528112f,   0.081493728f,  0.0037468225f, 0.00063983724f, -0.0025537629f}},
  };
  for (const Case& c : cases) {
    SidCommitmentLoss loss({0.75, 0.25, c.distance});
    torch::Tensor z = pattern({4, 3}, 0.6).requires_grad_(true);
    torch::Tensor latents = pattern({4, 2, 3}, 2.2).requires_grad_(true);
    torch::Tensor value = loss(z, latents);
    value.backward();
    EXPECT_NEAR(value.item<float>(), c.loss, 1e-6);
    EXPECT_TRUE(torch::allclose(z.grad(), torch::tensor(c.grad_encoder).reshape({4, 3}), 1e-5, 1e-7)) << z.grad();
    EXPECT_TRUE(torch::allclose(latents.grad(), torch::tensor(c.grad_latents).reshape({4, 2, 3}), 1e-5, 1e-7));
  }
}

TEST(SidCommitmentLoss, HandChecked) {
  // One row, two layers: squared errors 1 and 4 per element of a 1-dim vector.
  const torch::Tensor z = torch::tensor({{1.0f}});
  const torch::Tensor latents = torch::tensor({{{0.0f}, {3.0f}}});
  EXPECT_FLOAT_EQ(SidCommitmentLoss()(z, latents).item<float>(), 1.0f * 2.5f + 0.5f * 2.5f);
}

}  // namespace sid_commitment_loss_test
}  // namespace tzrec::loss
