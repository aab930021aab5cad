// Scoped mixed precision for the model's forward pass (train_config.mixed_precision).
//
// kBFloat16: CPU autocast. Autocast-eligible ops (linear, matmul, conv, ...) run in bf16 on casted
// copies of their fp32 inputs and weights; parameters stay fp32 (the master weights) and autograd
// casts gradients back. Ops outside autocast's lists (our fused embedding bags, element-wise ops)
// are unaffected.
//
// kHalf: FP16. CPU tensors take the fp16 emulation of nn/fp16_emulation.h (libtorch's CPU autocast
// has no fp16): the dense layers' GEMMs (nn::linear_forward) round inputs, weights, outputs and
// gradients to fp16 and compute in fp32; CPU bf16 autocast is switched off inside the scope. In a
// build with CUDA, CUDA autocast (fp16) is enabled as well, so that CUDA tensors run real fp16
// kernels (linear_forward never emulates for them).
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

namespace tzrec::nn {

class AutocastGuard {
 public:
  // nullopt: no-op. kBFloat16 or kHalf: as above until destruction, restoring the previous state
  // (guards nest). Other dtypes → TORCH_CHECK.
  explicit AutocastGuard(std::optional<c10::ScalarType> dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool active_ = false;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::BFloat16;
  bool prev_fp16_emulation_ = false;
  bool cuda_ = false;  // CUDA autocast switched on by this guard (kHalf with CUDA available)
  bool prev_cuda_enabled_ = false;
  c10::ScalarType prev_cuda_dtype_ = c10::ScalarType::Half;
};

// `x` in the dtype of a normalisation layer's parameter `weight` (LayerNorm, BatchNorm). libtorch
// 1.13's CPU autocast has no policy for layer_norm / batch_norm and fails on a bf16 input with
// fp32 parameters; CUDA autocast runs them in fp32, which casting the input matches.
inline at::Tensor in_norm_dtype(const at::Tensor& x, const at::Tensor& weight) {
  return x.scalar_type() == weight.scalar_type() ? x : x.to(weight.scalar_type());
}

}  // namespace tzrec::nn
