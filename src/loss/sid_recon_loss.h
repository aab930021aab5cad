// RQ-VAE's reconstruction loss (TorchEasyRec SidReconLoss, tzrec/loss/sid_recon_loss.py; loss
// "recon_loss" of model_config.losses, docs/tzrec-compatibility.md §7.1).
//
//   per row: l2 = mean_d (x̂ − x)², l1 = mean_d |x̂ − x|, cos = 1 − cosine_similarity(x̂, x)
//   loss = mean over the rows, or with a mask Σ per_row · m / Σ m (0 when no row is masked in,
//          TorchEasyRec's div_no_nan)
#pragma once

#include <torch/torch.h>

#include "loss/sid_distance.h"

namespace tzrec::loss {

class SidReconLoss {
 public:
  explicit SidReconLoss(SidDistance distance = SidDistance::kL2) : distance_(distance) {}
  // x_hat, x: [B, D] float; mask: [B] bool (rows that count) or undefined (all). Scalar.
  torch::Tensor operator()(const torch::Tensor& x_hat, const torch::Tensor& x, const torch::Tensor& mask = {}) const;
  // The per-row distance [B].
  torch::Tensor per_row(const torch::Tensor& x_hat, const torch::Tensor& x) const;

 private:
  SidDistance distance_;
};

}  // namespace tzrec::loss
