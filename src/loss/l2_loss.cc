#include "loss/l2_loss.h"

namespace tzrec::loss {

torch::Tensor normalize_sample_weights(const torch::Tensor& sample_weights, torch::ScalarType dtype) {
  torch::Tensor w = sample_weights.to(dtype);
  return torch::nan_to_num(w / w.mean(), 0.0, 0.0, 0.0);
}

torch::Tensor l2_loss(const torch::Tensor& preds, const torch::Tensor& labels, const torch::Tensor& sample_weights) {
  TORCH_CHECK(preds.dim() == 1, "l2_loss: predictions must be [B], got ", preds.sizes());
  TORCH_CHECK(labels.sizes() == preds.sizes(), "l2_loss: labels ", labels.sizes(), " do not match predictions ",
              preds.sizes());
  torch::Tensor diff = preds - labels.to(preds.scalar_type());
  torch::Tensor per_sample = diff * diff;  // [B]
  if (!sample_weights.defined()) return per_sample.mean();
  TORCH_CHECK(sample_weights.sizes() == preds.sizes(), "l2_loss: sample weights ", sample_weights.sizes(),
              " do not match predictions ", preds.sizes());
  return (per_sample * normalize_sample_weights(sample_weights, preds.scalar_type())).mean();
}

}  // namespace tzrec::loss
