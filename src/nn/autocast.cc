#include "nn/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace tzrec::nn {
namespace {

// libtorch renamed the per-device autocast switches in 2.4 (device-type arguments).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cpu_enabled() { return at::autocast::is_autocast_enabled(at::kCPU); }
void set_cpu_enabled(bool on) { at::autocast::set_autocast_enabled(at::kCPU, on); }
c10::ScalarType cpu_dtype() { return at::autocast::get_autocast_dtype(at::kCPU); }
void set_cpu_dtype(c10::ScalarType t) { at::autocast::set_autocast_dtype(at::kCPU, t); }
#else
bool cpu_enabled() { return at::autocast::is_cpu_enabled(); }
void set_cpu_enabled(bool on) { at::autocast::set_cpu_enabled(on); }
c10::ScalarType cpu_dtype() { return at::autocast::get_autocast_cpu_dtype(); }
void set_cpu_dtype(c10::ScalarType t) { at::autocast::set_autocast_cpu_dtype(t); }
#endif

}  // namespace

AutocastGuard::AutocastGuard(std::optional<c10::ScalarType> dtype) {
  if (!dtype) return;
  active_ = true;
  prev_enabled_ = cpu_enabled();
  prev_dtype_ = cpu_dtype();
  set_cpu_enabled(true);
  set_cpu_dtype(*dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // Casted weight copies are cached while autocast is nested; drop them when the outermost scope
  // ends (the weights change at the next optimizer step).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_cpu_enabled(prev_enabled_);
  set_cpu_dtype(prev_dtype_);
}

}  // namespace tzrec::nn
