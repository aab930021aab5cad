#include "nn/autocast.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include "nn/fp16_emulation.h"

namespace tzrec::nn {
namespace {

// libtorch renamed the per-device autocast switches in 2.4 (device-type arguments).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cpu_enabled() { return at::autocast::is_autocast_enabled(at::kCPU); }
void set_cpu_enabled(bool on) { at::autocast::set_autocast_enabled(at::kCPU, on); }
c10::ScalarType cpu_dtype() { return at::autocast::get_autocast_dtype(at::kCPU); }
void set_cpu_dtype(c10::ScalarType t) { at::autocast::set_autocast_dtype(at::kCPU, t); }
bool cuda_enabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
void set_cuda_enabled(bool on) { at::autocast::set_autocast_enabled(at::kCUDA, on); }
c10::ScalarType cuda_dtype() { return at::autocast::get_autocast_dtype(at::kCUDA); }
void set_cuda_dtype(c10::ScalarType t) { at::autocast::set_autocast_dtype(at::kCUDA, t); }
#else
bool cpu_enabled() { return at::autocast::is_cpu_enabled(); }
void set_cpu_enabled(bool on) { at::autocast::set_cpu_enabled(on); }
c10::ScalarType cpu_dtype() { return at::autocast::get_autocast_cpu_dtype(); }
void set_cpu_dtype(c10::ScalarType t) { at::autocast::set_autocast_cpu_dtype(t); }
bool cuda_enabled() { return at::autocast::is_enabled(); }
void set_cuda_enabled(bool on) { at::autocast::set_enabled(on); }
c10::ScalarType cuda_dtype() { return at::autocast::get_autocast_gpu_dtype(); }
void set_cuda_dtype(c10::ScalarType t) { at::autocast::set_autocast_gpu_dtype(t); }
#endif

}  // namespace

AutocastGuard::AutocastGuard(std::optional<c10::ScalarType> dtype) {
  if (!dtype) return;
  TORCH_CHECK(*dtype == c10::ScalarType::BFloat16 || *dtype == c10::ScalarType::Half,
              "AutocastGuard: mixed precision dtype must be bfloat16 or half, got ", *dtype);
  active_ = true;
  prev_enabled_ = cpu_enabled();
  prev_dtype_ = cpu_dtype();
  prev_fp16_emulation_ = fp16_emulation_enabled();
  if (*dtype == c10::ScalarType::Half) {
    // CPU: emulation only (the emulated GEMMs must not be recast to bf16 by an outer scope).
    set_cpu_enabled(false);
    set_fp16_emulation(true);
    // CUDA build: CUDA tensors compute in real fp16 under CUDA autocast.
    if (at::hasCUDA()) {
      cuda_ = true;
      prev_cuda_enabled_ = cuda_enabled();
      prev_cuda_dtype_ = cuda_dtype();
      set_cuda_enabled(true);
      set_cuda_dtype(c10::ScalarType::Half);
    }
  } else {
    set_fp16_emulation(false);
    set_cpu_enabled(true);
    set_cpu_dtype(*dtype);
  }
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // Casted weight copies are cached while autocast is nested; drop them when the outermost scope
  // ends (the weights change at the next optimizer step).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_cpu_enabled(prev_enabled_);
  set_cpu_dtype(prev_dtype_);
  set_fp16_emulation(prev_fp16_emulation_);
  if (cuda_) {
    set_cuda_enabled(prev_cuda_enabled_);
    set_cuda_dtype(prev_cuda_dtype_);
  }
}

}  // namespace tzrec::nn
