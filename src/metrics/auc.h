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
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

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
  // Exact AUC. With no positive or no negative samples the ROC curve is undefined; like torchmetrics
  // the result is then 0 (and a warning is logged).
  double compute() const;
  // Binned AUC (see above); 0 in the same degenerate cases.
  double compute_binned() const;
  void reset();

  int64_t num_samples() const { return static_cast<int64_t>(preds_.size()); }
  int64_t num_thresholds() const { return num_thresholds_; }

 private:
  int64_t num_thresholds_;
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
