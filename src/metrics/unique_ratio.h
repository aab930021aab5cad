// Mean per-batch unique-SID ratio, TorchEasyRec's UniqueRatio (tzrec/metrics/unique_ratio.py;
// the SID models' eval metric "unique_sid_ratio", docs/tzrec-compatibility.md §7.2): for each
// batch the number of distinct code rows divided by the batch size, averaged over the batches (a
// diversity proxy, not global codebook coverage; empty batches are skipped). Mergeable: the state
// is (Σ ratios, batch count); sync() sums it over ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class UniqueRatio {
 public:
  // codes: [B, L] (a semantic ID per row).
  void update(const torch::Tensor& codes);
  void merge(const UniqueRatio& other);
  // Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // NaN before any non-empty batch (0 / 0, as TorchEasyRec).
  double compute() const;
  void reset();

 private:
  double ratio_sum_ = 0.0;
  double count_ = 0.0;
  bool synced_ = false;
};

}  // namespace tzrec::metrics
