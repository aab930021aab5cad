#include "loss/softmax_cross_entropy.h"

#include "base/error.h"
#include "loss/l2_loss.h"

namespace tzrec::loss {

SoftmaxCrossEntropy::SoftmaxCrossEntropy(SoftmaxCrossEntropyOptions options) : options_(options) {
  if (!(options_.label_smoothing >= 0.0 && options_.label_smoothing <= 1.0)) {
    throw ConfigError(fmt::format("softmax_cross_entropy.label_smoothing: must be in [0, 1], got {}",
                                  options_.label_smoothing));
  }
}

torch::Tensor SoftmaxCrossEntropy::operator()(const torch::Tensor& logits, const torch::Tensor& labels,
                                              const torch::Tensor& sample_weights) const {
  TORCH_CHECK(logits.dim() == 2, "softmax_cross_entropy: logits must be [B, C], got ", logits.sizes());
  TORCH_CHECK(labels.dim() == 1 && labels.size(0) == logits.size(0), "softmax_cross_entropy: labels ",
              labels.sizes(), " do not match logits ", logits.sizes());
  TORCH_CHECK(labels.scalar_type() == torch::kInt64, "softmax_cross_entropy: labels must be int64 class ids");
  namespace F = torch::nn::functional;
  auto opts = F::CrossEntropyFuncOptions().label_smoothing(options_.label_smoothing);
  if (!sample_weights.defined()) return F::cross_entropy(logits, labels, opts);  // reduction mean
  TORCH_CHECK(sample_weights.dim() == 1 && sample_weights.size(0) == logits.size(0),
              "softmax_cross_entropy: sample weights ", sample_weights.sizes(), " do not match logits ",
              logits.sizes());
  torch::Tensor per_sample = F::cross_entropy(logits, labels, opts.reduction(torch::kNone));  // [B]
  return (per_sample * normalize_sample_weights(sample_weights, logits.scalar_type())).mean();
}

torch::Tensor class_labels(const torch::Tensor& labels, int64_t num_classes, const std::string& label_name) {
  torch::Tensor y = labels.detach().reshape({-1});
  torch::Tensor yd = y.to(torch::kFloat64);
  torch::Tensor bad = ~((yd >= 0) & (yd < static_cast<double>(num_classes)) & (yd == torch::floor(yd)));
  if (bad.any().item<bool>()) {
    const double v = yd.masked_select(bad)[0].item<double>();
    const int64_t row = bad.to(torch::kInt64).argmax().item<int64_t>();
    throw DataError(fmt::format(
        "label '{}' row {}: value {} is not a class id in [0, {}); with num_class {} the label column must hold "
        "integer class ids",
        label_name, row, v, num_classes, num_classes));
  }
  return yd.to(torch::kInt64);
}

}  // namespace tzrec::loss
