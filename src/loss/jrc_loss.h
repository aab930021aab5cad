// JRC loss (TorchEasyRec loss "jrc_loss", tzrec/loss/jrc_loss.py; docs/tzrec-compatibility.md §7.1): Joint
// optimization of Ranking and Calibration (https://arxiv.org/abs/2208.06164) for a two-class model.
//
// With logits z_b = (z_b0, z_b1) ([B, 2]), labels y_b in {0, 1} and session ids s_b, per row b:
//   ce_b = −log softmax(z_b)[y_b]                                    (plain 2-class cross entropy)
//   ge_b = −log( exp(z_b1) / (exp(z_b1) + Σ_{j: s_j = s_b, y_j = 0} exp(z_j1)) )   if y_b = 1
//        = −log( exp(z_b0) / (exp(z_b0) + Σ_{j: s_j = s_b, y_j = 1} exp(z_j0)) )   if y_b = 0
//        = softplus(logsumexp(competitors) − own logit)
//   i.e. each positive competes, on the positive logit, with the negatives of its session, and each
//   negative, on the negative logit, with the positives of its session; a row whose session has no
//   row of the other label has ge_b = 0.
//   loss_b = alpha · ce_b + (1 − alpha) · ge_b
// Reduction: mean_b loss_b, or with sample weights mean_b(loss_b · w_b / mean(w)) (tzrec's
// reduction="none" + div_no_nan weighting, as for the other losses).
//
// Choices where the paper leaves room: this is the current tzrec JRCLoss semantics (segment
// log-sum-exp form, identical to its earlier batch-mask form); the mean over the batch counts every
// row (Σ_pos ge + Σ_neg ge) / B, so a batch without positives (or negatives) is well defined, where
// the earlier tzrec form produced NaN. Sessions are compared by id only: rows need not be grouped.
#pragma once

#include <torch/torch.h>

namespace tzrec::loss {

struct JrcLossOptions {
  // Weight of the cross-entropy term; in [0, 1].
  double alpha = 0.5;
};

class JrcLoss {
 public:
  // Throws tzrec::ConfigError when alpha is outside [0, 1].
  explicit JrcLoss(JrcLossOptions options = {});

  // logits: [B, 2] float; labels: [B] int64 in {0, 1}; session_ids: [B] integer;
  // sample_weights: [B] or undefined. Returns a scalar tensor (differentiable in logits).
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                           const torch::Tensor& session_ids, const torch::Tensor& sample_weights = {}) const;
  // loss_b per row: [B].
  torch::Tensor per_sample(const torch::Tensor& logits, const torch::Tensor& labels,
                           const torch::Tensor& session_ids) const;

  const JrcLossOptions& options() const { return options_; }

 private:
  JrcLossOptions options_;
};

}  // namespace tzrec::loss
