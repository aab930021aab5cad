// Binary focal loss (tzrec loss "binary_focal_loss", docs/tzrec-compatibility.md §7.1) on logits:
//   p = sigmoid(logit), w = alpha·y·(1−p)^gamma + (1−alpha)·(1−y)·p^gamma  (detached: no gradient),
//   loss_b = w_b · BCE-with-logits(logit_b, y_b), reduced by the mean (or by
//   mean(loss_b · s_b / mean(s)) with sample weights s, like binary_cross_entropy).
#pragma once

#include <torch/torch.h>

namespace tzrec::loss {

struct BinaryFocalLossOptions {
  double gamma = 2.0;  // >= 0
  double alpha = 0.5;  // in (0, 1), as tzrec asserts
};

class BinaryFocalLoss {
 public:
  // Throws tzrec::ConfigError for gamma < 0 or alpha outside (0, 1).
  explicit BinaryFocalLoss(BinaryFocalLossOptions options = {});

  // logits: [B] float; labels: [B] numeric in [0, 1]; sample_weights: [B] or undefined. Scalar result.
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                           const torch::Tensor& sample_weights = {}) const;

  const BinaryFocalLossOptions& options() const { return options_; }

 private:
  BinaryFocalLossOptions options_;
};

}  // namespace tzrec::loss
