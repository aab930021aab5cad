// The GEMM of the dense layers (torch::nn::Linear's weight and bias), routed by the current
// mixed-precision mode. Layers call linear_forward instead of Linear::forward so that FP16
// training on the CPU can emulate fp16 (nn/fp16_emulation.h); BF16 (CPU autocast) and fp32 take
// libtorch's own linear unchanged.
#pragma once

#include <torch/torch.h>

namespace tzrec::nn {

// y = x W^T + b. x: [..., in] float, weight: [out, in], bias: [out] or undefined → [..., out].
// With fp16 emulation enabled on this thread and x on the CPU: fp16_linear below. Otherwise
// torch's linear (which CPU bf16 autocast, or CUDA fp16 autocast for CUDA tensors, intercepts).
torch::Tensor linear_forward(const torch::Tensor& x, const torch::Tensor& weight,
                             const torch::Tensor& bias);

// Linear with CUDA fp16 autocast numerics computed in fp32 (always emulates, whatever the mode):
//   forward:  y  = r(r(x) r(W)^T + r(b))              (r = round to fp16, fp32 accumulation)
//   backward: g' = r(g); dx = r(g' r(W)); dW = r(g'^T r(x)); db = r(sum over rows of g')
// Values are float32 holding fp16-representable numbers; overflow gives ±inf.
torch::Tensor fp16_linear(const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias);

}  // namespace tzrec::nn
