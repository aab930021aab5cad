// RQ-VAE's pair contrastive loss (TorchEasyRec SidContrastiveLoss,
// tzrec/loss/sid_contrastive_loss.py; loss "contrastive_loss", docs/tzrec-compatibility.md
// §7.1): a masked InfoNCE over the rows flagged as pairs of a mixed batch, in three symmetric
// groups, each with a learnable temperature:
//
//   a = normalize(embed_a), b = normalize(embed_b) (the two decoded views; the originals are used
//   as they are)
//   self: a vs b, b vs a;   ori: a vs b_ori, b vs a_ori;   cl: a vs a_ori, b vs b_ori
//   logits = (exp(min(scale, ln 100)) · view) @ targetᵀ [B, B], the columns of non-pair rows set
//   to the dtype's lowest finite value; per row the cross entropy towards its own column (non-pair
//   rows: the first pair row's, then weighted 0), NaN → 0;
//   group loss = Σ_pair rows (ce_view1 + ce_view2) / (2 · max(#pairs, 1)); loss = Σ groups / 3.
// State: "logit_scale_self", "logit_scale_cl", "logit_scale_ori" (scalar parameters, ln(1/0.07) at
// start), so the module sits in the model as "_loss_modules.contrastive_loss".
// On several ranks (`ranks` given), as TorchEasyRec: the targets are every rank's rows (gathered
// with their gradient), the columns of all ranks' non-pair rows are masked, and row i of this rank
// targets column ranks.offset + i; the sums stay over this rank's rows.
#pragma once

#include <functional>

#include <torch/torch.h>

namespace tzrec::loss {

// Rows of every rank: `rows(x)` is every rank's x concatenated in rank order (differentiable);
// `offset` is where this rank's rows start in it.
struct RankRows {
  std::function<torch::Tensor(const torch::Tensor&)> rows;
  int64_t offset = 0;
};

class SidContrastiveLossImpl : public torch::nn::Module {
 public:
  SidContrastiveLossImpl();
  // embed_a, embed_b, embed_a_ori, embed_b_ori: [B, D]; pair_mask: [B] bool. Scalar.
  torch::Tensor forward(const torch::Tensor& embed_a, const torch::Tensor& embed_b, const torch::Tensor& embed_a_ori,
                        const torch::Tensor& embed_b_ori, const torch::Tensor& pair_mask,
                        const RankRows* ranks = nullptr);

  torch::Tensor logit_scale_self;
  torch::Tensor logit_scale_cl;
  torch::Tensor logit_scale_ori;
};
TORCH_MODULE(SidContrastiveLoss);

}  // namespace tzrec::loss
