// Binary accuracy like torchmetrics Accuracy(task="binary", threshold) as tzrec's metric
// "accuracy" uses it on "probs" for num_class == 1 (docs/tzrec-compatibility.md §7.2): a
// prediction is positive when p > threshold (strict, as torchmetrics); a batch not entirely inside
// [0, 1] is taken as logits and passed through a sigmoid first. Accuracy.top_k only applies to
// multiclass accuracy and is ignored by torchmetrics' binary task. Mergeable: the state is
// (correct, N); sync() sums it over ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "metrics/hit_rate.h"

namespace tzrec::metrics {

class BinaryAccuracy {
 public:
  // Throws tzrec::ConfigError when threshold is outside [0, 1].
  explicit BinaryAccuracy(double threshold = 0.5);

  // preds: [B] floating; labels: [B] values 0 / 1 (else tzrec::DataError).
  void update(const torch::Tensor& preds, const torch::Tensor& labels);
  void merge(const BinaryAccuracy& other);
  // Replaces (correct, N) by their sums over all ranks (one int64 all_reduce). Once per evaluation,
  // before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // correct / N; 0 when no sample was seen (torchmetrics' _safe_divide).
  double compute() const;
  void reset();

 private:
  double threshold_;
  detail::HitRate state_;
};

}  // namespace tzrec::metrics
