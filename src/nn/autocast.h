// Scoped CPU autocast (mixed precision): inside the scope, autocast-eligible ops (linear, matmul,
// conv, ...) run in the given low-precision dtype on casted copies of their fp32 inputs and
// weights; parameters stay fp32 (the master weights) and autograd casts gradients back. Ops
// outside autocast's lists (our fused embedding bags, element-wise ops) are unaffected.
#pragma once

#include <optional>

#include <c10/core/ScalarType.h>

namespace tzrec::nn {

class AutocastGuard {
 public:
  // nullopt: no-op. Otherwise enables CPU autocast to *dtype (kBFloat16 on CPU) until destruction,
  // restoring the previous state (guards nest).
  explicit AutocastGuard(std::optional<c10::ScalarType> dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool active_ = false;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::BFloat16;
};

}  // namespace tzrec::nn
