#include "loss/softmax_cross_entropy.h"

#include <algorithm>

#include <ATen/Parallel.h>

#include "base/error.h"
#include "loss/l2_loss.h"
#include "loss/softmax_rows.h"

namespace tzrec::loss {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// CE_b = logsumexp(logits_b) − logits_b[label_b] as one autograd node. Forward computes each
// row's softmax once (softmax_rows.h: one row at a time, in cache, over the intra-op threads) and
// keeps it: it is the gradient but for the label's −1 and the per-row scale, so backward is one
// multiply (torch's path writes the [B, C] log-softmax, a zero-filled [B, C] NLL gradient and the
// softmax gradient, each a pass through memory).
class RowCrossEntropyFunction : public torch::autograd::Function<RowCrossEntropyFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits_in, const torch::Tensor& labels) {
    const torch::Tensor logits = logits_in.contiguous();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    torch::Tensor lse = torch::empty({rows}, logits.options());
    torch::Tensor softmax = torch::empty_like(logits);
    const float* x = logits.data_ptr<float>();
    float* s = softmax.data_ptr<float>();
    float* l = lse.data_ptr<float>();
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(cols, 1));  // ≥ 128 KiB a task
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) l[r] = softmax_row(x + r * cols, cols, s + r * cols);
    });
    torch::Tensor picked = logits.gather(1, labels.unsqueeze(1)).squeeze(1);  // [B]
    ctx->save_for_backward({softmax, labels});
    return lse - picked;
  }

  // The gradient is written over the saved softmax (no second [B, C] tensor): a second backward
  // through this node (retain_graph) then fails torch's saved-tensor version check instead of
  // reading it.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    torch::Tensor grad = saved[0];
    const torch::Tensor& labels = saved[1];
    const torch::Tensor g = grads[0].unsqueeze(1);  // [B, 1]
    grad.mul_(g);
    grad.scatter_add_(1, labels.unsqueeze(1), -g);
    return {grad, torch::Tensor()};
  }
};

}  // namespace

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
  const bool fused = options_.label_smoothing == 0.0 && logits.scalar_type() == torch::kFloat;
  if (!sample_weights.defined()) {
    if (fused) return RowCrossEntropyFunction::apply(logits, labels).mean();
    return F::cross_entropy(logits, labels, opts);  // reduction mean
  }
  TORCH_CHECK(sample_weights.dim() == 1 && sample_weights.size(0) == logits.size(0),
              "softmax_cross_entropy: sample weights ", sample_weights.sizes(), " do not match logits ",
              logits.sizes());
  torch::Tensor per_sample = fused ? RowCrossEntropyFunction::apply(logits, labels)
                                   : F::cross_entropy(logits, labels, opts.reduction(torch::kNone));  // [B]
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
