// Where training time goes: waiting for the next batch, the embedding forward, the fused embedding
// backward + sparse update (both from embedding::FusedEmbeddingBags::timing()) and the rest of the
// step (dense forward, losses, dense backward, dense optimizers, logging).
#pragma once

#include <cstdint>
#include <string>

#include "embedding/fused_embedding_bags.h"

namespace tzrec::observe {

class StepTiming {
 public:
  // Seconds the step loop waited for loader.next().
  void add_wait(double seconds) { wait_ += seconds; }
  // One trained step of `seconds` wall time; `before` / `after`: the fused operator's timing
  // around it.
  void add_step(double seconds, const embedding::FusedEmbeddingBags::Timing& before,
                const embedding::FusedEmbeddingBags::Timing& after);
  void reset() { *this = StepTiming(); }

  int64_t steps() const { return steps_; }
  double total_seconds() const { return wait_ + step_; }
  // Fraction of (wait + step) time spent waiting for data; 0 before any step.
  double wait_fraction() const;
  // "data wait 2.1%, embedding forward 8.0%, embedding backward+update 21.5%, dense and other
  // 68.4% of 12.3 s (100 steps)"
  std::string summary() const;

 private:
  double wait_ = 0, step_ = 0, emb_forward_ = 0, emb_backward_ = 0;
  int64_t steps_ = 0;
};

}  // namespace tzrec::observe
