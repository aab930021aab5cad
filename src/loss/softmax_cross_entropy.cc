#include "loss/softmax_cross_entropy.h"

#include <algorithm>
#include <vector>

#include <ATen/Parallel.h>

#include "base/error.h"
#include "loss/l2_loss.h"
#include "loss/softmax_rows.h"

namespace tzrec::loss {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// mean_b(s_b · CE_b), CE_b = logsumexp(logits_b) − logits_b[label_b], s_b the row's normalised
// sample weight (row_scale [B]; an empty row_scale: 1 each), as one autograd node with a scalar
// output. Forward computes each row's softmax once (softmax_rows.h: one row at a time, in cache,
// over the intra-op threads), scaled by s_b / B and less s_b / B at the label: that is the
// gradient, kept for backward, which hands it over as it is when the upstream gradient is 1 (the
// loss added to the total unweighted) and scales it in place otherwise — no other pass over the
// [B, C] matrix (torch's path writes the log-softmax, a zero-filled NLL gradient and the softmax
// gradient). Handed over once: a second backward through the node (retain_graph) is an error, not
// a reuse of the overwritten values.
class MeanCrossEntropyFunction : public torch::autograd::Function<MeanCrossEntropyFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits_in, const torch::Tensor& labels_in,
                               const torch::Tensor& row_scale_in) {
    const torch::Tensor logits = logits_in.contiguous();
    const torch::Tensor labels = labels_in.contiguous();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const int64_t* y = labels.data_ptr<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      TORCH_CHECK(y[r] >= 0 && y[r] < cols, "softmax_cross_entropy: label ", y[r], " of row ", r,
                  " is not a class id in [0, ", cols, ")");
    }
    const torch::Tensor row_scale = row_scale_in.contiguous();  // [B], or [0] for 1 each
    const float* w = row_scale.numel() > 0 ? row_scale.data_ptr<float>() : nullptr;
    torch::Tensor grad = torch::empty_like(logits);
    const float* x = logits.data_ptr<float>();
    float* g = grad.data_ptr<float>();
    std::vector<double> row_loss(static_cast<size_t>(rows));
    const float inv_rows = 1.0f / static_cast<float>(rows);
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(cols, 1));  // ≥ 128 KiB a task
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float weight = w != nullptr ? w[r] : 1.0f;
        const float scale = weight * inv_rows;
        const float lse = softmax_row(x + r * cols, cols, g + r * cols, scale);
        g[r * cols + y[r]] -= scale;
        row_loss[static_cast<size_t>(r)] = static_cast<double>(lse - x[r * cols + y[r]]) * weight;
      }
    });
    double total = 0;
    for (double v : row_loss) total += v;
    ctx->saved_data["grad"] = grad;
    return torch::full({}, total / static_cast<double>(rows), logits.options());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto it = ctx->saved_data.find("grad");
    TORCH_CHECK(it != ctx->saved_data.end(),
                "softmax_cross_entropy: backward through the same graph twice (retain_graph) is not supported");
    torch::Tensor grad = it->second.toTensor();
    ctx->saved_data.erase(it);
    const torch::Tensor& upstream = grads[0];
    if (!(upstream.numel() == 1 && upstream.item<double>() == 1.0)) grad.mul_(upstream);
    return {grad, torch::Tensor(), torch::Tensor()};
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
  // The fused node: float logits on the CPU without label smoothing, weights that need no gradient.
  const bool fused = options_.label_smoothing == 0.0 && logits.scalar_type() == torch::kFloat && logits.is_cpu() &&
                     !(sample_weights.defined() && sample_weights.requires_grad());
  if (!sample_weights.defined()) {
    if (fused) return MeanCrossEntropyFunction::apply(logits, labels, torch::empty({0}, logits.options()));
    return F::cross_entropy(logits, labels, opts);  // reduction mean
  }
  TORCH_CHECK(sample_weights.dim() == 1 && sample_weights.size(0) == logits.size(0),
              "softmax_cross_entropy: sample weights ", sample_weights.sizes(), " do not match logits ",
              logits.sizes());
  const torch::Tensor weights = normalize_sample_weights(sample_weights, logits.scalar_type());
  if (fused) return MeanCrossEntropyFunction::apply(logits, labels, weights);
  return (F::cross_entropy(logits, labels, opts.reduction(torch::kNone)) * weights).mean();  // [B] → mean
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
