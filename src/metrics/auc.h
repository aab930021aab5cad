// Binary AUC, mergeable across batches and workers.
//
// compute():        exact ROC AUC over every sample seen (ties between a positive and a negative
//                   count 1/2, optional sample weights) — equal to sklearn roc_auc_score and to
//                   torchmetrics BinaryAUROC(thresholds=None).
// compute_binned(): torchmetrics 1.0.3 BinaryAUROC(thresholds=N), which tzrec uses for metric "auc"
//                   (N = AUC.thresholds, default 200): thresholds t = linspace(0, 1, N) in float32,
//                   per threshold counts of pred >= t by label, TPR/FPR with 0/0 → 0, ordered by
//                   decreasing threshold, area by the trapezoid rule. Sample weights are ignored,
//                   as in torchmetrics.
// As in torchmetrics, a batch whose predictions are not all inside [0, 1] is taken as logits and
// passed through a sigmoid; labels must be 0 or 1.
// Across ranks: sync() gathers every rank's samples (see metrics/metric_sync.h for the contract).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"

namespace tzrec::metrics {

class Auc {
 public:
  // Throws tzrec::ConfigError when num_thresholds < 2.
  explicit Auc(int64_t num_thresholds = 200);

  // preds: [B] floating; labels: [B] any dtype with values 0 / 1; weights: [B] (exact AUC only) or
  // undefined (weight 1). Throws tzrec::DataError for labels other than 0 / 1, NaN predictions or
  // negative weights.
  void update(const torch::Tensor& preds, const torch::Tensor& labels, const torch::Tensor& weights = {});
  // Adds the samples and bin counts of `other` (same num_thresholds) to this metric.
  void merge(const Auc& other);
  // Replaces the state by every rank's samples, concatenated in rank order (one all_gather); the
  // bin counts are rebuilt from them. Ranks may differ in whether they saw sample weights: samples
  // of an unweighted rank get weight 1. Once per evaluation, before compute() (metric_sync.h).
  void sync(dist::ProcessGroup& pg);
  // Exact AUC. With no positive or no negative samples the ROC curve is undefined; like torchmetrics
  // the result is then 0 (and a warning is logged).
  double compute() const;
  // Binned AUC (see above); 0 in the same degenerate cases.
  double compute_binned() const;
  void reset();

  int64_t num_samples() const { return static_cast<int64_t>(preds_.size()); }
  int64_t num_thresholds() const { return num_thresholds_; }

 private:
  // Appends one sample (prediction after the logit check) to the exact and the binned state.
  void append(float pred, bool positive);

  int64_t num_thresholds_;
  bool synced_ = false;  // sync() ran since construction / reset()
  std::vector<float> thresholds_;  // [N] ascending, torch::linspace(0, 1, N) float32
  // Exact-AUC state: every sample.
  std::vector<float> preds_;
  std::vector<uint8_t> labels_;
  std::vector<double> weights_;  // empty while every weight so far is 1
  // Binned state: samples by label and by k = number of thresholds <= pred (0..N).
  std::vector<int64_t> pos_by_k_;  // [N + 1]
  std::vector<int64_t> neg_by_k_;  // [N + 1]
};

}  // namespace tzrec::metrics
