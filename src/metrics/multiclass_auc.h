// Multiclass AUC (tzrec metric "multiclass_auc", docs/tzrec-compatibility.md §7.2): torchmetrics 1.0.3
// AUROC(task="multiclass", num_classes, thresholds, average) — one-vs-rest AUC per class c
// (score = preds[:, c], positive = label == c), then averaged.
//
// num_thresholds > 0: binned per-class AUC exactly as metrics::Auc::compute_binned() (torchmetrics
//   binned form; tzrec always passes MulticlassAUC.thresholds, default 200).
// num_thresholds == 0: exact per-class AUC (ties 1/2), as metrics::Auc::compute() and torchmetrics
//   thresholds=None; equal to sklearn roc_auc_score(label == c, preds[:, c]).
// A batch whose predictions are not all inside [0, 1] is taken as logits and passed through a
// softmax over classes, as torchmetrics does.
//
// Classes without positives or without negatives: torchmetrics warns and scores such a class 0
// (its TPR or FPR curve is all zeros), and the 0 stays in the average. This class does the same
// (with a warning): "macro" = plain mean of all num_classes per-class values; "weighted" = mean
// weighted by each class's number of positive samples (a class without positives weighs 0);
// "none" = per-class values only (compute_per_class()).
// Mergeable: the state is one metrics::Auc per class.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "metrics/auc.h"

namespace tzrec::metrics {

enum class AucAverage { kMacro, kWeighted, kNone };

// "macro" | "weighted" | "none"; throws tzrec::ConfigError naming metrics.multiclass_auc.average.
AucAverage parse_auc_average(const std::string& name);

class MulticlassAuc {
 public:
  // Throws tzrec::ConfigError when num_classes < 2 or num_thresholds == 1 or < 0.
  MulticlassAuc(int64_t num_classes, int64_t num_thresholds = 200, AucAverage average = AucAverage::kMacro);

  // preds: [B, num_classes] floating (probabilities, or logits); labels: [B] integer class ids in
  // [0, num_classes). Throws tzrec::DataError for NaN predictions or out-of-range labels,
  // tzrec::UsageError for shapes that do not match.
  void update(const torch::Tensor& preds, const torch::Tensor& labels);
  void merge(const MulticlassAuc& other);
  // Replaces the state by the state of all ranks: each class's Auc::sync() (one all_gather per
  // class) and the positive / sample counts summed (one int64 all_reduce). Once per evaluation,
  // before compute() (metrics/metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // Averaged AUC (see above); 0 when nothing was seen. Throws tzrec::UsageError for average "none".
  double compute() const;
  // One AUC per class.
  std::vector<double> compute_per_class() const;
  void reset();

  int64_t num_classes() const { return num_classes_; }
  int64_t num_samples() const { return num_samples_; }

 private:
  int64_t num_classes_;
  int64_t num_thresholds_;  // 0 = exact
  AucAverage average_;
  std::vector<Auc> per_class_;           // one-vs-rest state of class c
  std::vector<int64_t> positives_;       // samples with label c
  int64_t num_samples_ = 0;
  bool synced_ = false;  // sync() ran since construction / reset()
};

}  // namespace tzrec::metrics
