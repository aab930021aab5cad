// One step of torch.optim.Adam / AdamW (single-tensor path, maximize off) on a contiguous float32
// parameter, element by element in one pass: torch's path runs about seven tensor ops, each a pass
// over the parameter and its state, and for the small parameters of a dense tower the per-op
// overhead dominates. Same operations in the same order, so the results match torch's to float
// rounding (tested against libtorch's optimizers). Plain C++, no torch; the loop compiles for
// AVX-512 / AVX2 / baseline.
#pragma once

#include <cstdint>

namespace tzrec::optim {

// The step's scalars, each rounded to float as torch rounds a double scalar for a float tensor.
struct AdamStepScalars {
  float decay = 1;             // AdamW: p ← p · (1 − lr · weight_decay) first; 1 for Adam
  float l2 = 0;                // Adam: g ← g + weight_decay · p; 0 for AdamW
  float beta1 = 0, one_minus_beta1 = 0;
  float beta2 = 0, one_minus_beta2 = 0;
  float bias_correction2_sqrt = 1;  // sqrt(1 − beta2^step)
  float eps = 0;
  float neg_step_size = 0;     // −lr / (1 − beta1^step)
};

// p, g, exp_avg, exp_avg_sq: [n]; max_exp_avg_sq: [n] with amsgrad, else null. p[i .. i + n) is
// updated for the elements [0, n) given; call it on disjoint ranges from several threads.
void adam_step(const AdamStepScalars& s, int64_t n, float* p, const float* g, float* exp_avg, float* exp_avg_sq,
               float* max_exp_avg_sq);

}  // namespace tzrec::optim
