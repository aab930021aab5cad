// Train metrics (docs/tzrec-compatibility.md §7.3, TrainMetricConfig): TorchEasyRec's
// TrainMetricWrapper and DecayAUC.
//
// TrainMetricWrapper(decay_rate, decay_step) is updated with every train batch. After every
// decay_step-th update the reported value is refreshed:
//   - "auc" (DecayAuc): the confusion matrices buffered since the last refresh are folded into the
//     decayed ones, conf = rate * conf + (1 - rate) * buffer (the first time, while conf is still all
//     zero, conf = buffer), the buffer is cleared, and value = binned AUC of conf;
//   - any other metric: new = metric computed on the batches buffered since the last refresh, the
//     metric is reset, and value = new while value is still exactly 0 (TorchEasyRec's "first value"
//     test), else value = rate * value + (1 - rate) * new.
// compute() returns the value: 0 until the first refresh. A NaN new value (e.g. recall with no target
// in the buffered batches) is dropped with a warning and the value kept; TorchEasyRec would carry
// the NaN forever.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

namespace tzrec::metrics {

// TorchEasyRec DecayAUC: torchmetrics' binned confusion matrices at num_thresholds thresholds
// (linspace(0, 1, N) in float32, counts of pred >= t by label, logits → sigmoid per batch), a buffer
// filled by update() and a decayed state refreshed by decay(). compute() is the torchmetrics binned
// AUROC of the decayed state (the same formula as metrics::Auc::compute_binned(), in double).
class DecayAuc {
 public:
  // Throws tzrec::ConfigError when num_thresholds < 2.
  explicit DecayAuc(int64_t num_thresholds = 200);

  // preds: [B] floating; labels: [B] values 0 / 1. Throws tzrec::DataError for NaN predictions or
  // labels other than 0 / 1.
  void update(const torch::Tensor& preds, const torch::Tensor& labels);
  // conf = rate * conf + (1 - rate) * buffer (conf = buffer while conf is all zero); clears the buffer.
  void decay(double rate);
  // Binned AUC of the decayed state (0 before the first decay, or without both labels).
  double compute() const;
  // Adds the buffer and decayed state of `other` (same num_thresholds).
  void merge(const DecayAuc& other);
  void reset();

  int64_t num_thresholds() const { return static_cast<int64_t>(thresholds_.size()); }

 private:
  std::vector<float> thresholds_;  // ascending
  // Buffer: samples by label and by k = number of thresholds <= pred (0..N), as metrics::Auc.
  std::vector<int64_t> buffer_pos_by_k_, buffer_neg_by_k_;
  // Decayed confusion matrices per threshold t: [t] of (tp, fn, fp, tn).
  std::vector<double> tp_, fn_, fp_, tn_;
};

// What the wrapper needs from a plain (non-AUC) train metric: add one train batch, compute the
// metric over the batches added since the last reset, and reset.
struct BufferedMetric {
  std::function<void(const torch::Tensor& preds, const torch::Tensor& target)> update;
  std::function<double()> compute;
  std::function<void()> reset;
};

// BufferedMetric over any metric object with update(preds, target), compute() and reset()
// (RegressionError, BinaryAccuracy, RecallAtK, XAuc, ...). Another signature (e.g. RecallAtK with a
// RecallTarget) is adapted with a hand-written BufferedMetric.
template <class Metric>
BufferedMetric make_buffered_metric(std::shared_ptr<Metric> metric) {
  return BufferedMetric{[metric](const torch::Tensor& p, const torch::Tensor& t) { metric->update(p, t); },
                        [metric] { return static_cast<double>(metric->compute()); }, [metric] { metric->reset(); }};
}

class TrainMetricWrapper {
 public:
  // Generic form. Throws tzrec::ConfigError when decay_rate is not in [0, 1] or decay_step < 1.
  TrainMetricWrapper(BufferedMetric metric, double decay_rate = 0.9, int64_t decay_step = 100);
  // "auc" train metric: a DecayAuc with num_thresholds thresholds (AUC.thresholds, default 200).
  static TrainMetricWrapper decay_auc(int64_t num_thresholds = 200, double decay_rate = 0.9,
                                      int64_t decay_step = 100);
  // Movable, not copyable (a copy would share the wrapped metric's state).
  TrainMetricWrapper(TrainMetricWrapper&&) = default;
  TrainMetricWrapper& operator=(TrainMetricWrapper&&) = default;
  TrainMetricWrapper(const TrainMetricWrapper&) = delete;
  TrainMetricWrapper& operator=(const TrainMetricWrapper&) = delete;

  // Adds one train batch; refreshes the value after every decay_step-th call (see above).
  void update(const torch::Tensor& preds, const torch::Tensor& target);
  // The current value; 0 until the first refresh.
  double compute() const { return value_; }
  // Back to the initial state (metric reset, value 0, step count 0).
  void reset();

  int64_t step_count() const { return step_count_; }
  double decay_rate() const { return decay_rate_; }
  int64_t decay_step() const { return decay_step_; }

 private:
  TrainMetricWrapper(double decay_rate, int64_t decay_step);

  double decay_rate_;
  int64_t decay_step_;
  BufferedMetric metric_;               // generic form
  std::shared_ptr<DecayAuc> auc_;       // "auc" form
  double value_ = 0.0;
  int64_t step_count_ = 0;
};

}  // namespace tzrec::metrics
