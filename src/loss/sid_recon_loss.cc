#include "loss/sid_recon_loss.h"

namespace tzrec::loss {

torch::Tensor SidReconLoss::per_row(const torch::Tensor& x_hat, const torch::Tensor& x) const {
  switch (distance_) {
    case SidDistance::kL1:
      return (x_hat - x).abs().mean(-1);
    case SidDistance::kCos:
      return 1 - torch::cosine_similarity(x_hat, x, -1);
    case SidDistance::kL2:
      break;
  }
  return (x_hat - x).pow(2).mean(-1);
}

torch::Tensor SidReconLoss::operator()(const torch::Tensor& x_hat, const torch::Tensor& x,
                                       const torch::Tensor& mask) const {
  const torch::Tensor rows = per_row(x_hat, x);
  if (!mask.defined()) return rows.mean();
  const torch::Tensor m = mask.to(rows.scalar_type());
  return torch::nan_to_num((rows * m).sum() / m.sum(), 0.0, 0.0, 0.0);
}

}  // namespace tzrec::loss
