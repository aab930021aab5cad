// Binary cross entropy on logits, as TorchEasyRec's RankModel computes loss "binary_cross_entropy"
// (nn.BCEWithLogitsLoss + label smoothing + optional sample weights; docs/tzrec-compatibility.md §7.1).
#pragma once

#include <torch/torch.h>

namespace tzrec::loss {

struct BinaryCrossEntropyOptions {
  // Labels become label * (1 - label_smoothing) + 0.5 * label_smoothing; must be in [0, 1].
  double label_smoothing = 0.0;
};

class BinaryCrossEntropy {
 public:
  // Throws tzrec::ConfigError when label_smoothing is outside [0, 1].
  explicit BinaryCrossEntropy(BinaryCrossEntropyOptions options = {});

  // logits: [B] float; labels: [B] any numeric dtype (cast to logits' dtype);
  // sample_weights: [B] or undefined.
  // Without weights: mean_b BCE_b. With weights: mean_b(BCE_b * w_b / mean(w)), where w / mean(w)
  // is 0 wherever the division is not finite (tzrec's div_no_nan). Returns a scalar tensor.
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                           const torch::Tensor& sample_weights = {}) const;

  const BinaryCrossEntropyOptions& options() const { return options_; }

 private:
  BinaryCrossEntropyOptions options_;
};

}  // namespace tzrec::loss
