#include "loss/sid_commitment_loss.h"

namespace tzrec::loss {

torch::Tensor SidCommitmentLoss::operator()(const torch::Tensor& encoder_out, const torch::Tensor& latents) const {
  const torch::Tensor x = encoder_out.unsqueeze(1);
  torch::Tensor loss1, loss2;
  switch (options_.distance) {
    case SidDistance::kCos:
      loss1 = (1 - torch::cosine_similarity(x, latents.detach(), -1)).mean();
      loss2 = (1 - torch::cosine_similarity(x.detach(), latents, -1)).mean();
      break;
    case SidDistance::kL1:
      loss1 = (x - latents.detach()).abs().mean();
      loss2 = (x.detach() - latents).abs().mean();
      break;
    case SidDistance::kL2:
      loss1 = (x - latents.detach()).pow(2.0).mean();
      loss2 = (x.detach() - latents).pow(2.0).mean();
      break;
  }
  return options_.w1 * loss1 + options_.w2 * loss2;
}

}  // namespace tzrec::loss
