#include "models/mixed_precision.h"

#include <atomic>

#include <ATen/Context.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::models {
namespace {

void warn_fp16_emulated_once(const std::string& field) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  log::warning(
      "{}: FP16 on the CPU is emulated: the dense layers' GEMM inputs, "
      "outputs and gradients are rounded to fp16 (overflow to inf like a GPU, handled by "
      "train_config.grad_scaler) while the arithmetic stays fp32, so it is slower than fp32; "
      "\"BF16\" is the fast mixed precision on CPUs", field);
}

// Whether libtorch's CPU bf16 matrix products have a fast kernel here: libtorch sends them to oneDNN
// only on CPUs with AVX-512 (BW, VL, DQ); elsewhere its portable fallback runs at a few GFLOP/s.
bool cpu_has_fast_bf16_gemm() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
#else
  return true;
#endif
}

void warn_bf16_slow_once(const std::string& field) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  log::warning(
      "{}: \"BF16\" on this CPU (no AVX-512) runs libtorch's bf16 matrix products without oneDNN, "
      "about 20x slower than fp32; leave mixed_precision empty to train in fp32 here", field);
}

}  // namespace

std::optional<c10::ScalarType> mixed_precision_dtype(const protos::EasyRecConfig& config) {
  return mixed_precision_dtype(config.train_config().mixed_precision(), "train_config.mixed_precision");
}

std::optional<c10::ScalarType> mixed_precision_dtype(const std::string& value, const std::string& field) {
  if (value.empty()) return std::nullopt;
  if (value == "BF16") {
    if (!at::hasCUDA() && !cpu_has_fast_bf16_gemm()) warn_bf16_slow_once(field);
    return c10::ScalarType::BFloat16;
  }
  if (value == "FP16") {
    if (!at::hasCUDA()) warn_fp16_emulated_once(field);
    return c10::ScalarType::Half;
  }
  throw ConfigError(fmt::format(
      "{}: '{}' is not a precision; use \"BF16\" or \"FP16\", or leave it empty for fp32",
      field, value));
}

}  // namespace tzrec::models
