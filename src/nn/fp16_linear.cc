#include "nn/fp16_linear.h"

#include <vector>

#include "nn/fp16_emulation.h"

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x [..., in] → [rows, in]; and back for the output [rows, out] → [..., out].
torch::Tensor rows_of(const torch::Tensor& x) { return x.reshape({-1, x.size(-1)}); }

std::vector<int64_t> output_shape(const torch::Tensor& x, int64_t out_features) {
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.push_back(out_features);
  return shape;
}

class Fp16LinearFunction : public torch::autograd::Function<Fp16LinearFunction> {
 public:
  // bias: [out], or an empty placeholder when has_bias is false (libtorch 1.13's custom functions
  // do not take undefined tensors).
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, bool has_bias) {
    const torch::Tensor xh = round_to_fp16(rows_of(x));  // [rows, in]
    const torch::Tensor wh = round_to_fp16(weight);      // [out, in]
    torch::Tensor y = has_bias ? torch::addmm(round_to_fp16(bias), xh, wh.t()) : xh.mm(wh.t());
    ctx->save_for_backward({xh, wh});
    ctx->saved_data["has_bias"] = has_bias;
    ctx->saved_data["x_sizes"] = x.sizes().vec();
    return round_to_fp16(y).view(output_shape(x, weight.size(0)));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& xh = saved[0];
    const torch::Tensor& wh = saved[1];
    const std::vector<int64_t> x_sizes = ctx->saved_data["x_sizes"].toIntVector();
    torch::Tensor g = round_to_fp16(grads[0].reshape({-1, wh.size(0)}));  // [rows, out]
    torch::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = round_to_fp16(g.mm(wh)).view(x_sizes);
    if (ctx->needs_input_grad(1)) dw = round_to_fp16(g.t().mm(xh));
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) db = round_to_fp16(g.sum(0));
    return {dx, dw, db, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor fp16_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  TORCH_CHECK(weight.dim() == 2 && x.dim() >= 1 && x.size(-1) == weight.size(1), "fp16_linear: input ",
              x.sizes(), " does not fit weight ", weight.sizes());
  const bool has_bias = bias.defined();
  return Fp16LinearFunction::apply(x, weight, has_bias ? bias : torch::empty({0}, weight.options()), has_bias);
}

torch::Tensor linear_forward(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  // CUDA tensors never take the emulation: a CUDA build runs fp16 on the GPU's own kernels,
  // through the CUDA autocast that nn::AutocastGuard enables for kHalf.
  if (fp16_emulation_enabled() && x.device().is_cpu()) return fp16_linear(x, weight, bias);
  return torch::nn::functional::linear(x, weight, bias);
}

}  // namespace tzrec::nn
