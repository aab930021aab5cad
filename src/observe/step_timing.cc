#include "observe/step_timing.h"

#include <algorithm>

#include <fmt/format.h>

namespace tzrec::observe {

void StepTiming::add_step(double seconds, const embedding::FusedEmbeddingBags::Timing& before,
                          const embedding::FusedEmbeddingBags::Timing& after) {
  step_ += seconds;
  emb_forward_ += after.forward_seconds - before.forward_seconds;
  emb_backward_ += after.backward_seconds - before.backward_seconds;
  ++steps_;
}

double StepTiming::wait_fraction() const {
  const double total = total_seconds();
  return total > 0 ? wait_ / total : 0.0;
}

std::string StepTiming::summary() const {
  const double total = total_seconds();
  auto pct = [&](double s) { return total > 0 ? 100.0 * s / total : 0.0; };
  const double dense = std::max(0.0, step_ - emb_forward_ - emb_backward_);
  return fmt::format(
      "data wait {:.1f}%, embedding forward {:.1f}%, embedding backward+update {:.1f}%, dense and "
      "other {:.1f}% of {:.1f} s ({} steps)",
      pct(wait_), pct(emb_forward_), pct(emb_backward_), pct(dense), total, steps_);
}

}  // namespace tzrec::observe
