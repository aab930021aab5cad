#include "optim/adam_step.h"

#include <algorithm>

#include "base/simd_clones.h"
#include "base/vector_sqrt.h"

namespace tzrec::optim {

namespace {
constexpr int64_t kBlock = 64;  // elements per pass: the roots go through a block buffer
}  // namespace

TZREC_SIMD_CLONES
void adam_step(const AdamStepScalars& s, int64_t n, float* __restrict p, const float* __restrict g,
               float* __restrict exp_avg, float* __restrict exp_avg_sq, float* __restrict max_exp_avg_sq) {
  float denom[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t len = std::min(kBlock, n - i0);
    float* __restrict pb = p + i0;
    const float* __restrict gb = g + i0;
    float* __restrict mb = exp_avg + i0;
    float* __restrict vb = exp_avg_sq + i0;
    for (int64_t k = 0; k < len; ++k) {
      const float w = pb[k] * s.decay;  // AdamW's decoupled decay (× 1 for Adam)
      pb[k] = w;
      const float gk = s.l2 != 0 ? gb[k] + s.l2 * w : gb[k];  // Adam's L2 term
      mb[k] = mb[k] * s.beta1 + s.one_minus_beta1 * gk;
      const float v = vb[k] * s.beta2 + s.one_minus_beta2 * gk * gk;
      vb[k] = v;
      denom[k] = v;
    }
    if (max_exp_avg_sq != nullptr) {
      float* __restrict vmax = max_exp_avg_sq + i0;
      for (int64_t k = 0; k < len; ++k) {
        vmax[k] = (vmax[k] > denom[k] || vmax[k] != vmax[k]) ? vmax[k] : denom[k];  // NaN wins, as in torch
        denom[k] = vmax[k];
      }
    }
    sqrt_inplace(len, denom);
    for (int64_t k = 0; k < len; ++k) {
      const float d = denom[k] / s.bias_correction2_sqrt + s.eps;
      pb[k] = pb[k] + s.neg_step_size * (mb[k] / d);
    }
  }
}

}  // namespace tzrec::optim
