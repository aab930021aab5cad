// Mean absolute error and mean squared error, like torchmetrics MeanAbsoluteError /
// MeanSquaredError (tzrec metrics "mean_absolute_error" / "mean_squared_error", computed on the
// regression prediction "y"; docs/tzrec-compatibility.md §7.2). Mergeable: the state is
// (Σ error, N); sync() sums it over ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class RegressionError {
 public:
  enum class Kind { kAbsolute, kSquared };
  explicit RegressionError(Kind kind) : kind_(kind) {}

  // preds, labels: [B] numeric, same shape. Throws tzrec::DataError for NaN predictions or labels.
  void update(const torch::Tensor& preds, const torch::Tensor& labels);
  void merge(const RegressionError& other);
  // Replaces (Σ error, N) by their sums over all ranks (one float64 all_reduce; N is exact in float64
  // below 2^53 samples). Once per evaluation, before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // Σ|p - y| / N or Σ(p - y)² / N; NaN when no sample was seen (0 / 0, as torchmetrics).
  double compute() const;
  void reset();

  int64_t num_samples() const { return count_; }

 private:
  Kind kind_;
  double sum_error_ = 0.0;  // accumulated in double
  int64_t count_ = 0;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics
