#include "nn/linear_relu.h"

#include <algorithm>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include "nn/fp16_emulation.h"
#include "nn/fp16_linear.h"
#include "nn/parallel.h"

namespace tzrec::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per block for tall inputs (e.g. DIN's attention MLP on B·T = 204800 rows). OpenBLAS with
// several threads packs about the whole [rows, in] operand of a GEMM into a buffer that it keeps
// for the rest of the process (≈ 200 MB for [204800, 256]); GEMMs on blocks of rows keep it at a
// few MB, and backward masks the gradient block by block instead of in one [rows, out] tensor.
// The blocks are spread over the threads by parallel_chunks (single-threaded GEMMs). Same values
// up to float rounding (the weight and bias gradients are summed over the blocks).
constexpr int64_t kGemmRows = 8192;

class LinearReluFunction : public torch::autograd::Function<LinearReluFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias) {
    const int64_t rows = x.size(0);
    if (rows <= 2 * kGemmRows) {
      torch::Tensor y = torch::addmm(bias, x, weight.t()).relu_();  // [B, out]
      ctx->save_for_backward({x, weight, y});
      return y;
    }
    // Tall input: saves the ReLU's mask as bytes, not the output, so that the output is freed as
    // soon as its consumers' backward has run (e.g. DIN's attention MLP: [B·T, 64] floats, 52 MB,
    // against a 13 MB mask while the layer's backward runs).
    torch::Tensor y = torch::empty({rows, weight.size(0)}, x.options());
    torch::Tensor mask = torch::empty(y.sizes(), x.options().dtype(torch::kBool));
    parallel_chunks((rows + kGemmRows - 1) / kGemmRows, [&](int64_t c, int64_t) {
      const int64_t r = c * kGemmRows, n = std::min(kGemmRows, rows - r);
      torch::Tensor block = y.narrow(0, r, n);
      torch::Tensor mask_block = mask.narrow(0, r, n);
      at::gt_out(mask_block, at::addmm_out(block, bias, x.narrow(0, r, n), weight.t()).relu_(), 0);
    });
    ctx->save_for_backward({x, weight, mask});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& y = saved[2];  // the output, or for tall inputs its mask y > 0
    const torch::Tensor& g = grads[0];
    const int64_t rows = y.size(0);
    if (rows <= 2 * kGemmRows) {
      torch::Tensor masked = torch::threshold_backward(g.to(y.scalar_type()), y, 0);  // [B, out]
      torch::Tensor grad_x = ctx->needs_input_grad(0) ? masked.mm(weight) : torch::Tensor();
      torch::Tensor grad_w = ctx->needs_input_grad(1) ? masked.t().mm(x) : torch::Tensor();
      torch::Tensor grad_b = ctx->needs_input_grad(2) ? masked.sum(0) : torch::Tensor();
      return {grad_x, grad_w, grad_b};
    }
    // Tall input: block by block, so that the masked gradient exists one block at a time. The
    // weight and bias gradients are summed in float (bf16 blocks too).
    const torch::Tensor& mask = y;
    const auto float_options = weight.options().dtype(torch::kFloat);
    const auto type = x.scalar_type();
    torch::Tensor grad_x = ctx->needs_input_grad(0) ? torch::empty({rows, weight.size(1)}, x.options()) : torch::Tensor();
    const bool need_w = ctx->needs_input_grad(1), need_b = ctx->needs_input_grad(2);
    const bool is_float = type == torch::kFloat;
    // Per-thread buffers, allocated here on the calling thread (in the worker threads they would
    // come from per-thread malloc arenas, which keep their freed memory apart).
    const int64_t threads = at::get_num_threads();
    std::vector<torch::Tensor> masked(threads), grad_w(threads), grad_b(threads);
    const torch::Tensor zero = torch::zeros({}, g.options().dtype(type));
    for (int64_t t = 0; t < threads; ++t) {
      masked[t] = torch::empty({std::min(kGemmRows, rows), weight.size(0)}, x.options());
      if (need_w) grad_w[t] = torch::zeros(weight.sizes(), float_options);
      if (need_b) grad_b[t] = torch::zeros({weight.size(0)}, float_options);
    }
    parallel_chunks((rows + kGemmRows - 1) / kGemmRows, [&](int64_t c, int64_t slot) {
      const int64_t r = c * kGemmRows, n = std::min(kGemmRows, rows - r);
      torch::Tensor m = masked[slot].narrow(0, 0, n);
      at::where_out(m, mask.narrow(0, r, n), g.narrow(0, r, n).to(type), zero);
      if (grad_x.defined()) {
        torch::Tensor block = grad_x.narrow(0, r, n);
        at::mm_out(block, m, weight);
      }
      if (need_w) {
        if (is_float) {
          grad_w[slot].addmm_(m.t(), x.narrow(0, r, n));
        } else {
          // A bf16 product per block would be rounded to bf16 before the blocks add up (an error
          // that grows with the number of blocks); in float the only rounding is the final one.
          grad_w[slot].addmm_(m.t().to(torch::kFloat), x.narrow(0, r, n).to(torch::kFloat));
        }
      }
      if (need_b) grad_b[slot].add_(m.sum(0, false, torch::kFloat));
    });
    auto total = [&](const std::vector<torch::Tensor>& parts) {
      torch::Tensor sum = parts[0];
      for (size_t t = 1; t < parts.size(); ++t) sum.add_(parts[t]);
      return sum.to(weight.scalar_type());
    };
    return {grad_x, need_w ? total(grad_w) : torch::Tensor(), need_b ? total(grad_b) : torch::Tensor()};
  }
};

}  // namespace

torch::Tensor linear_relu_forward(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const bool eligible = bias.defined() && x.dim() == 2 && x.is_cpu() && !fp16_emulation_enabled();
  const bool floats = x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                      bias.scalar_type() == torch::kFloat32;
  if (eligible && at::autocast::is_cpu_enabled()) {
    // CPU autocast in bf16: the node on bf16 copies of the operands, as autocast runs a Linear.
    const bool bf16 = at::autocast::get_autocast_cpu_dtype() == torch::kBFloat16 &&
                      (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kBFloat16) &&
                      weight.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32;
    if (bf16) {
      return LinearReluFunction::apply(x.to(torch::kBFloat16), weight.to(torch::kBFloat16), bias.to(torch::kBFloat16));
    }
  } else if (eligible && floats) {
    return LinearReluFunction::apply(x, weight, bias);
  }
  return torch::relu(linear_forward(x, weight, bias));
}

}  // namespace tzrec::nn
