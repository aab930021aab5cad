// Symmetric relative L1 error, TorchEasyRec's RelativeL1 (tzrec/metrics/relative_l1.py; the SID
// models' eval metric "rel_loss", docs/tzrec-compatibility.md §7.2): the mean over every element
// seen of |t − p| / (max(|t|, |p|) + epsilon), epsilon 1e-4 — 0 for an exact reconstruction,
// towards 1 for an unrelated one. Mergeable: the state is (Σ, element count); sync() sums it over
// ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class RelativeL1 {
 public:
  explicit RelativeL1(double epsilon = 1e-4) : epsilon_(epsilon) {}
  // preds, target: the same shape (e.g. [B, D]).
  void update(const torch::Tensor& preds, const torch::Tensor& target);
  void merge(const RelativeL1& other);
  // Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // NaN before any element (0 / 0, as TorchEasyRec).
  double compute() const;
  void reset();

 private:
  double epsilon_;
  double sum_ = 0.0;
  int64_t count_ = 0;
  bool synced_ = false;
};

}  // namespace tzrec::metrics
