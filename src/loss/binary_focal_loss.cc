#include "loss/binary_focal_loss.h"

#include "base/error.h"
#include "loss/l2_loss.h"

namespace tzrec::loss {

BinaryFocalLoss::BinaryFocalLoss(BinaryFocalLossOptions options) : options_(options) {
  if (!(options_.gamma >= 0.0)) {
    throw ConfigError(fmt::format("binary_focal_loss.gamma: must be >= 0, got {}", options_.gamma));
  }
  if (!(options_.alpha > 0.0 && options_.alpha < 1.0)) {
    throw ConfigError(fmt::format("binary_focal_loss.alpha: must be in (0, 1), got {}", options_.alpha));
  }
}

torch::Tensor BinaryFocalLoss::operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                                          const torch::Tensor& sample_weights) const {
  TORCH_CHECK(logits.dim() == 1, "binary_focal_loss: logits must be [B], got ", logits.sizes());
  TORCH_CHECK(labels.sizes() == logits.sizes(), "binary_focal_loss: labels ", labels.sizes(),
              " do not match logits ", logits.sizes());
  torch::Tensor y = labels.to(logits.scalar_type());
  torch::Tensor focal;  // [B], no gradient
  {
    torch::NoGradGuard no_grad;
    torch::Tensor p = torch::sigmoid(logits.detach());
    const double a = options_.alpha, g = options_.gamma;
    focal = a * y * torch::pow(1.0 - p, g) + (1.0 - a) * (1.0 - y) * torch::pow(p, g);
  }
  namespace F = torch::nn::functional;
  torch::Tensor per_sample = F::binary_cross_entropy_with_logits(
      logits, y, F::BinaryCrossEntropyWithLogitsFuncOptions().weight(focal).reduction(torch::kNone));  // [B]
  if (!sample_weights.defined()) return per_sample.mean();
  TORCH_CHECK(sample_weights.sizes() == logits.sizes(), "binary_focal_loss: sample weights ",
              sample_weights.sizes(), " do not match logits ", logits.sizes());
  return (per_sample * normalize_sample_weights(sample_weights, logits.scalar_type())).mean();
}

}  // namespace tzrec::loss
