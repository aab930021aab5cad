// The VQ-VAE commitment loss of RQ-VAE (TorchEasyRec SidCommitmentLoss,
// tzrec/loss/sid_commitment_loss.py; loss "commitment_loss", docs/tzrec-compatibility.md §7.1),
// between the encoder output and the residual quantizer's latents (the running sums after each
// layer):
//
//   x = encoder_out [B, 1, D] broadcast over the L layers
//   loss1 = mean dist(x, latents.detach())   (pulls the encoder towards the codes)
//   loss2 = mean dist(x.detach(), latents)   (pulls the codebooks towards the encoder)
//   loss = w1 · loss1 + w2 · loss2
// dist per element: (a − b)² for l2, |a − b| for l1; for cos 1 − cosine_similarity over D.
#pragma once

#include <torch/torch.h>

#include "loss/sid_distance.h"

namespace tzrec::loss {

struct SidCommitmentLossOptions {
  double w1 = 1.0;  // latent_weight[0]
  double w2 = 0.5;  // latent_weight[1]
  SidDistance distance = SidDistance::kL2;
};

class SidCommitmentLoss {
 public:
  explicit SidCommitmentLoss(SidCommitmentLossOptions options = {}) : options_(options) {}
  // encoder_out: [B, D]; latents: [B, L, D]. Scalar.
  torch::Tensor operator()(const torch::Tensor& encoder_out, const torch::Tensor& latents) const;

 private:
  SidCommitmentLossOptions options_;
};

}  // namespace tzrec::loss
