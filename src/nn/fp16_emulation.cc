#include "nn/fp16_emulation.h"

namespace tzrec::nn {
namespace {

thread_local bool fp16_emulation = false;

}  // namespace

bool fp16_emulation_enabled() { return fp16_emulation; }

void set_fp16_emulation(bool enabled) { fp16_emulation = enabled; }

Fp16EmulationGuard::Fp16EmulationGuard(bool enabled) : previous_(fp16_emulation) {
  fp16_emulation = enabled;
}

Fp16EmulationGuard::~Fp16EmulationGuard() { fp16_emulation = previous_; }

torch::Tensor round_to_fp16(const torch::Tensor& t) {
  if (!t.defined()) return t;
  return t.to(torch::kHalf).to(torch::kFloat32);
}

}  // namespace tzrec::nn
