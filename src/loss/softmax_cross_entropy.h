// Softmax cross entropy on class logits, as TorchEasyRec's RankModel computes loss
// "softmax_cross_entropy" (nn.CrossEntropyLoss(label_smoothing) + optional sample weights;
// docs/tzrec-compatibility.md §7.1). num_class > 1; the label column holds class ids.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace tzrec::loss {

struct SoftmaxCrossEntropyOptions {
  // torch CrossEntropyLoss label smoothing: the target is (1 - ls) * one_hot + ls / C; in [0, 1].
  double label_smoothing = 0.0;
};

class SoftmaxCrossEntropy {
 public:
  // Throws tzrec::ConfigError when label_smoothing is outside [0, 1].
  explicit SoftmaxCrossEntropy(SoftmaxCrossEntropyOptions options = {});

  // logits: [B, C] float; labels: [B] int64 class ids in [0, C) (see class_labels());
  // sample_weights: [B] or undefined.
  // Without weights: mean_b CE_b. With weights: mean_b(CE_b * w_b / mean(w)), where w / mean(w) is 0
  // wherever the division is not finite (tzrec's div_no_nan). Returns a scalar tensor. Float32
  // CPU logits without label smoothing go through one fused autograd node (same values up to
  // float rounding; backward through it once per graph).
  torch::Tensor operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                           const torch::Tensor& sample_weights = {}) const;

  const SoftmaxCrossEntropyOptions& options() const { return options_; }

 private:
  SoftmaxCrossEntropyOptions options_;
};

// A label column ([B], any numeric dtype; the batch stores labels as float32) as class ids:
// [B] int64 on the same device. Throws tzrec::DataError naming `label_name` and the first bad value
// when a label is not an integer in [0, num_classes).
torch::Tensor class_labels(const torch::Tensor& labels, int64_t num_classes, const std::string& label_name);

}  // namespace tzrec::loss
