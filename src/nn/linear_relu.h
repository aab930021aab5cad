// relu(x Wᵀ + b) as one autograd node: the ReLU runs in place on the GEMM's output (autograd's
// out-of-place ReLU allocates and writes a second [B, out] tensor per layer), and backward masks
// the gradient once for the three gradients of the GEMM. Used by the MLP
// layers whose activation is ReLU without batch or layer norm. Inputs of more than 16384 rows run
// in blocks of rows (see linear_relu.cc).
#pragma once

#include <cstdint>
#include <functional>

#include <torch/torch.h>

namespace tzrec::nn {

// Runs fn(chunk, slot) for every chunk in [0, chunks) inside one parallel region of the intra-op
// threads, each thread claiming the next chunk when it is done with one (a thread slowed down by
// other work on the machine does fewer), slot < at::get_num_threads() naming the thread (for
// per-thread buffers and partial sums). Inside fn, ATen ops and the BLAS run single-threaded
// (OpenBLAS's and oneDNN's OpenMP builds take one thread inside a parallel region): one fork and
// join for all chunks, instead of one per op of every chunk. Used by the row-block paths of the
// fused layers (here and nn/din_encoder.cc).
void parallel_chunks(int64_t chunks, const std::function<void(int64_t chunk, int64_t slot)>& fn);

// x: [B, in], weight: [out, in], bias: [out] → [B, out]. Float32 without autocast or fp16
// emulation: the fused node; under CPU bf16 autocast the fused node on bf16 copies of the
// operands (as autocast runs a Linear: bf16 output and gradients); otherwise
// relu(linear_forward(x, weight, bias)) (same values).
torch::Tensor linear_relu_forward(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace tzrec::nn
