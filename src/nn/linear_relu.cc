#include "nn/linear_relu.h"

#include <ATen/autocast_mode.h>

#include "nn/fp16_emulation.h"
#include "nn/fp16_linear.h"

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class LinearReluFunction : public torch::autograd::Function<LinearReluFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias) {
    torch::Tensor y = torch::addmm(bias, x, weight.t()).relu_();  // [B, out]
    ctx->save_for_backward({x, weight, y});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& y = saved[2];
    torch::Tensor masked = torch::threshold_backward(grads[0], y, 0);  // [B, out]
    torch::Tensor grad_x = ctx->needs_input_grad(0) ? masked.mm(weight) : torch::Tensor();
    torch::Tensor grad_w = ctx->needs_input_grad(1) ? masked.t().mm(x) : torch::Tensor();
    torch::Tensor grad_b = ctx->needs_input_grad(2) ? masked.sum(0) : torch::Tensor();
    return {grad_x, grad_w, grad_b};
  }
};

}  // namespace

torch::Tensor linear_relu_forward(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const bool fused = bias.defined() && x.dim() == 2 && x.is_cpu() && x.scalar_type() == torch::kFloat32 &&
                     weight.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32 &&
                     !at::autocast::is_cpu_enabled() && !fp16_emulation_enabled();
  if (!fused) return torch::relu(linear_forward(x, weight, bias));
  return LinearReluFunction::apply(x, weight, bias);
}

}  // namespace tzrec::nn
