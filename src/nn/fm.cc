#include "nn/fm.h"

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The FM with its gradient in one expression: ∂out_d / ∂v_{n,d} = Σ_m v_{m,d} − v_{n,d}, so
// dv = g ⊙ (s − v) (two passes over [B, N, D]; autograd on the plain formula makes about five).
class FactorizationMachineFunction : public torch::autograd::Function<FactorizationMachineFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& feature) {
    torch::Tensor sum_of_input = feature.sum(1);               // [B, D]
    torch::Tensor sum_of_square = feature.square().sum(1);     // [B, D]
    ctx->save_for_backward({feature, sum_of_input});
    return sum_of_input.square().sub_(sum_of_square).mul_(0.5);  // [B, D]
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& feature = saved[0];
    const torch::Tensor& sum_of_input = saved[1];
    return {torch::sub(sum_of_input.unsqueeze(1), feature).mul_(grads[0].unsqueeze(1))};  // [B, N, D]
  }
};

}  // namespace

torch::Tensor FactorizationMachineImpl::forward(const torch::Tensor& feature) {
  TORCH_CHECK(feature.dim() == 3, "FactorizationMachine expects [B, N, D], got ", feature.sizes());
  return FactorizationMachineFunction::apply(feature);
}

}  // namespace tzrec::nn
