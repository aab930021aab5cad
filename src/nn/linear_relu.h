// relu(x Wᵀ + b) as one autograd node: the ReLU runs in place on the GEMM's output (autograd's
// out-of-place ReLU allocates and writes a second [B, out] tensor per layer), and backward masks
// the gradient once for the three gradients of the GEMM. Used by the MLP
// layers whose activation is ReLU without batch or layer norm. Inputs of more than 16384 rows run
// in blocks of rows (see linear_relu.cc), spread over the threads by parallel_chunks (nn/parallel.h).
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace tzrec::nn {

// x: [B, in], weight: [out, in], bias: [out] → [B, out]. Float32 without autocast or fp16
// emulation: the fused node; under CPU bf16 autocast the fused node on bf16 copies of the
// operands (as autocast runs a Linear: bf16 output and gradients); otherwise
// relu(linear_forward(x, weight, bias)) (same values).
torch::Tensor linear_relu_forward(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace tzrec::nn
