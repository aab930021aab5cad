// Dense-gradient clipping for train_config.grad_clipping (docs/tzrec-compatibility.md §2.5), the
// same operations as torch.nn.utils.clip_grad_norm_ / clip_grad_value_ which TorchRec's
// GradientClippingOptimizer calls inside the optimizer step in TorchEasyRec. Only parameters whose
// gradient is defined take part (fused embedding tables have none there, so the clipping is
// dense-only); sparse (embedding) gradients are clipped separately by the sparse optimizer's
// gradient_clipping.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace tzrec::optim {

// Scales every defined gradient in place by min(1, max_norm / (total_norm + 1e-6)), where
//   total_norm = vector_norm([vector_norm(g_1, p), ..., vector_norm(g_n, p)], p)
// (p = inf: the largest |g|). Like torch with error_if_nonfinite=false, a non-finite total norm is
// not an error (the gradients become nan/0 as in torch). Returns the total norm before clipping
// as a 0-dim tensor on the first gradient's device (0 when no parameter has a gradient).
// norm_type must be > 0 (inf allowed) and max_norm >= 0 (TORCH_CHECK). Gradients: dense, [any].
torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm,
                             double norm_type = 2.0);

// Clamps every defined gradient in place to [-clip_value, clip_value]; clip_value >= 0.
void clip_grad_value(const std::vector<torch::Tensor>& params, double clip_value);

struct GradClippingOptions {
  enum class Kind { kNone, kNorm, kValue };
  Kind kind = Kind::kNone;
  double max_gradient = 1.0;  // max_norm (kNorm) or clip_value (kValue)
  double norm_type = 2.0;     // kNorm only
};

// Applies `options` to the gradients of `params` (call after backward, before the dense
// optimizer step, on the accumulated gradients when accumulating). Returns the total norm for
// kNorm and an undefined tensor otherwise.
torch::Tensor clip_gradients(const GradClippingOptions& options,
                             const std::vector<torch::Tensor>& params);

}  // namespace tzrec::optim
