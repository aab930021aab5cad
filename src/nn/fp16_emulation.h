// FP16 mixed precision emulated on the CPU (train_config.mixed_precision: "FP16").
//
// libtorch's CPU autocast only computes in bf16 and its CPU GEMMs have no fp16 kernels, so the
// CPU build reproduces the numerics of CUDA fp16 autocast for the GEMM-type layers of the dense
// part (nn::linear_forward, nn/fp16_linear.h) while doing the arithmetic in fp32:
//   * inputs, weights and bias are rounded to fp16 (binary16, round to nearest even);
//   * the product is accumulated in fp32 (as cuBLAS does with fp16 inputs) and the output rounded
//     to fp16: magnitudes of 65520 and more become ±inf;
//   * in backward the incoming gradient and the input / weight / bias gradients are rounded to fp16
//     the same way, so large (loss-scaled) gradients overflow to inf exactly where a GPU's would;
//     that is what optim::GradScaler detects and skips.
// Parameters and their .grad stay fp32 (the master weights). Element-wise ops between the layers
// run in fp32 on the fp16-representable values. Slower than plain fp32 (extra rounding passes);
// BF16 (real CPU autocast) is the fast mixed precision on CPUs.
//
// The mode is thread-local, like autocast: enable it with Fp16EmulationGuard (nn::AutocastGuard
// does so for kHalf) on the thread that runs the forward pass. The backward of an emulated layer
// rounds its gradients whatever the mode is when backward runs.
#pragma once

#include <torch/torch.h>

namespace tzrec::nn {

// Whether linear_forward emulates fp16 on this thread.
bool fp16_emulation_enabled();
// Sets the mode of this thread (prefer the guard, which restores it).
void set_fp16_emulation(bool enabled);

// Sets the mode for its scope and restores the previous one (guards nest).
class Fp16EmulationGuard {
 public:
  explicit Fp16EmulationGuard(bool enabled = true);
  ~Fp16EmulationGuard();
  Fp16EmulationGuard(const Fp16EmulationGuard&) = delete;
  Fp16EmulationGuard& operator=(const Fp16EmulationGuard&) = delete;

 private:
  bool previous_;
};

// `t` rounded to the nearest fp16 value and returned as float32 (any shape; undefined stays
// undefined). |t| >= 65520 → ±inf; nan stays nan.
torch::Tensor round_to_fp16(const torch::Tensor& t);

}  // namespace tzrec::nn
