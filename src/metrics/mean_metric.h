// Weighted mean, like torchmetrics.MeanMetric: Σ value·weight / Σ weight.
// tzrec reports every loss as an eval metric this way, weighting each batch loss by the batch size.
#pragma once

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class MeanMetric {
 public:
  // Adds one value with the given weight. NaN values are skipped (torchmetrics nan_strategy="warn":
  // dropped with a warning). Throws tzrec::DataError for a negative or non-finite weight.
  void update(double value, double weight = 1.0);
  // values: any shape; weights: same shape, or undefined (weight 1 each). Elementwise as above.
  void update(const torch::Tensor& values, const torch::Tensor& weights = {});
  void merge(const MeanMetric& other);
  // Replaces (Σ value·weight, Σ weight) by their sums over all ranks (one float64 all_reduce).
  // Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // NaN when no weight was added (0 / 0, as torchmetrics).
  double compute() const;
  void reset();

  double weighted_sum() const { return weighted_sum_; }
  double total_weight() const { return total_weight_; }

 private:
  double weighted_sum_ = 0.0;  // accumulated in double (torchmetrics keeps float32 states)
  double total_weight_ = 0.0;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics
