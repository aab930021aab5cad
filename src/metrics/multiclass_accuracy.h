// Multiclass accuracy like torchmetrics Accuracy(task="multiclass", num_classes, top_k) with its
// default average="micro", as tzrec's metric "accuracy" uses it on "probs" [B, C] when
// num_class > 1 (docs/tzrec-compatibility.md §7.2): a row is correct when its label is among the
// top_k classes by prediction (torch::topk, as torchmetrics); result = correct rows / rows.
// Accuracy.threshold does not apply (torchmetrics ignores it for multiclass). Mergeable: the state
// is (correct, N); sync() sums it over ranks.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "metrics/hit_rate.h"

namespace tzrec::metrics {

class MulticlassAccuracy {
 public:
  // Throws tzrec::ConfigError when num_classes < 2 or top_k is not in [1, num_classes].
  MulticlassAccuracy(int64_t num_classes, int64_t top_k = 1);

  // preds: [B, num_classes] floating (probabilities or logits: the order is what counts);
  // labels: [B] integer class ids in [0, num_classes) (any dtype). Throws tzrec::DataError for NaN
  // predictions or bad labels, tzrec::UsageError for shapes that do not match.
  void update(const torch::Tensor& preds, const torch::Tensor& labels);
  void merge(const MulticlassAccuracy& other);
  // Replaces (correct, N) by their sums over all ranks (one int64 all_reduce). Once per evaluation,
  // before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // correct / N; 0 when no sample was seen (torchmetrics' _safe_divide).
  double compute() const;
  void reset();

  int64_t num_samples() const { return state_.samples(); }

 private:
  int64_t num_classes_;
  int64_t top_k_;
  detail::HitRate state_;
};

}  // namespace tzrec::metrics
