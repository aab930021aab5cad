#include "optim/grad_clipping.h"

namespace tzrec::optim {
namespace {

std::vector<torch::Tensor> defined_grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    // p.grad() shares its storage with the parameter's gradient: in-place ops below clip it.
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

}  // namespace

torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm,
                             double norm_type) {
  TORCH_CHECK(norm_type > 0, "clip_grad_norm: norm_type must be > 0 or inf, got ", norm_type);
  TORCH_CHECK(max_norm >= 0, "clip_grad_norm: max_norm must be >= 0, got ", max_norm);
  torch::NoGradGuard no_grad;
  const auto grads = defined_grads(params);
  if (grads.empty()) return torch::zeros({});
  const auto device = grads.front().device();
  // Per-gradient norms [n], then the norm of those: equal to the norm of all elements together.
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) {
    norms.push_back(torch::linalg_vector_norm(g, norm_type).to(device));
  }
  const torch::Tensor total = torch::linalg_vector_norm(torch::stack(norms), norm_type);
  // torch: clip_coef = max_norm / (total_norm + 1e-6), clamped to at most 1 and always applied.
  // Python evaluates `float / tensor` as reciprocal(tensor) * float; do the same (a plain division
  // can differ in the last bit).
  const torch::Tensor coef = torch::clamp_max(torch::reciprocal(total + 1e-6) * max_norm, 1.0);
  for (const auto& g : grads) {
    auto grad = g;
    grad.mul_(coef.to(grad.device()));
  }
  return total;
}

void clip_grad_value(const std::vector<torch::Tensor>& params, double clip_value) {
  TORCH_CHECK(clip_value >= 0, "clip_grad_value: clip_value must be >= 0, got ", clip_value);
  torch::NoGradGuard no_grad;
  for (const auto& g : defined_grads(params)) {
    auto grad = g;
    grad.clamp_(-clip_value, clip_value);
  }
}

torch::Tensor clip_gradients(const GradClippingOptions& options,
                             const std::vector<torch::Tensor>& params) {
  switch (options.kind) {
    case GradClippingOptions::Kind::kNorm:
      return clip_grad_norm(params, options.max_gradient, options.norm_type);
    case GradClippingOptions::Kind::kValue:
      clip_grad_value(params, options.max_gradient);
      return {};
    case GradClippingOptions::Kind::kNone:
      return {};
  }
  return {};
}

}  // namespace tzrec::optim
