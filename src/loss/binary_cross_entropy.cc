#include "loss/binary_cross_entropy.h"

#include "base/error.h"

namespace tzrec::loss {

BinaryCrossEntropy::BinaryCrossEntropy(BinaryCrossEntropyOptions options) : options_(options) {
  if (!(options_.label_smoothing >= 0.0 && options_.label_smoothing <= 1.0)) {
    throw ConfigError(fmt::format("binary_cross_entropy.label_smoothing: must be in [0, 1], got {}",
                                  options_.label_smoothing));
  }
}

torch::Tensor BinaryCrossEntropy::operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                                             const torch::Tensor& sample_weights) const {
  TORCH_CHECK(logits.dim() == 1, "binary_cross_entropy: logits must be [B], got ", logits.sizes());
  TORCH_CHECK(labels.sizes() == logits.sizes(), "binary_cross_entropy: labels ", labels.sizes(),
              " do not match logits ", logits.sizes());
  torch::Tensor target = labels.to(logits.scalar_type());
  const double ls = options_.label_smoothing;
  if (ls > 0.0) target = target * (1.0 - ls) + 0.5 * ls;
  namespace F = torch::nn::functional;
  if (!sample_weights.defined()) {
    return F::binary_cross_entropy_with_logits(logits, target);  // reduction mean
  }
  TORCH_CHECK(sample_weights.sizes() == logits.sizes(), "binary_cross_entropy: sample weights ",
              sample_weights.sizes(), " do not match logits ", logits.sizes());
  torch::Tensor per_sample = F::binary_cross_entropy_with_logits(
      logits, target, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));  // [B]
  torch::Tensor w = sample_weights.to(logits.scalar_type());
  torch::Tensor normalized = torch::nan_to_num(w / w.mean(), 0.0, 0.0, 0.0);  // [B]
  return (per_sample * normalized).mean();
}

}  // namespace tzrec::loss
