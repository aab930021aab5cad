// train_config.gradient_accumulation_steps as TorchEasyRec implements it (TZRecOptimizer in
// tzrec/optim/optimizer.py, _pipeline_backward in tzrec/utils/dist_util.py). With N > 1:
//   * the summed loss is divided by N before backward (the logged losses are not);
//   * the dense optimizer (and grad_clipping, which wraps it) only acts every N steps: its
//     zero_grad() runs before micro step i when i % N == 0 and its step() after micro step i when
//     (i + 1) % N == 0, so one dense update applies the sum of N gradients of loss / N;
//   * the sparse (fused, applied-in-backward) optimizer cannot accumulate: it updates the
//     embedding rows in every backward with the gradient of loss / N. Its learning rate is only
//     pushed into the fused kernel by the forwarded zero_grad() / step(), so within a window it
//     uses the scheduler's lr of the window's first micro step;
//   * learning-rate schedulers keep stepping after every micro step (warmup/decay sizes count
//     micro steps).
// N = 0 (the default) or 1 turns accumulation off: no loss scaling, zero_grad/step every step.
// `step` below is the 0-based count of training steps this optimizer has run (TZRecOptimizer's
// `_step` before the call), i.e. the global step of a run that started from step 0.
#pragma once

#include <cstdint>

namespace tzrec::optim {

class GradientAccumulation {
 public:
  explicit GradientAccumulation(int64_t steps) : steps_(steps < 0 ? 0 : steps) {}

  bool enabled() const { return steps_ > 1; }
  int64_t steps() const { return steps_; }
  // The total loss is divided (not multiplied by the reciprocal, which can differ in the last
  // bit) by this before backward: N when enabled, else 1.
  int64_t loss_divisor() const { return enabled() ? steps_ : 1; }
  // Zero the dense gradients before training step `step`.
  bool zero_grad_before(int64_t step) const { return !enabled() || step % steps_ == 0; }
  // Clip and apply the dense gradients after training step `step`.
  bool step_after(int64_t step) const { return !enabled() || (step + 1) % steps_ == 0; }
  // The step whose scheduled learning rate the sparse optimizer uses during `step`.
  int64_t window_start(int64_t step) const { return enabled() ? step - step % steps_ : step; }

 private:
  int64_t steps_;
};

}  // namespace tzrec::optim
