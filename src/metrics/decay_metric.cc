#include "metrics/decay_metric.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::metrics {

DecayAuc::DecayAuc(int64_t num_thresholds) {
  if (num_thresholds < 2) {
    throw ConfigError(fmt::format("train_metrics.auc.thresholds: must be >= 2, got {}", num_thresholds));
  }
  // torch's own linspace, so the float32 thresholds equal torchmetrics'.
  torch::Tensor t = torch::linspace(0, 1, num_thresholds, torch::kFloat32);
  thresholds_.assign(t.data_ptr<float>(), t.data_ptr<float>() + num_thresholds);
  reset();
}

void DecayAuc::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  if (preds.numel() != labels.numel()) {
    throw UsageError(fmt::format("auc: {} predictions but {} labels", preds.numel(), labels.numel()));
  }
  torch::Tensor p = preds.detach().reshape({-1}).to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor y = labels.detach().reshape({-1}).to(torch::kCPU, torch::kFloat64).contiguous();
  if (p.numel() == 0) return;
  if (torch::isnan(p).any().item<bool>()) {
    throw DataError("auc: got NaN predictions; the model output is not finite (did training diverge?)");
  }
  if (!((y == 0) | (y == 1)).all().item<bool>()) {
    throw DataError("auc: labels must be 0 or 1; binarize the label column");
  }
  if (!((p >= 0) & (p <= 1)).all().item<bool>()) p = torch::sigmoid(p);
  const float* pp = p.data_ptr<float>();
  const double* yy = y.data_ptr<double>();
  for (int64_t i = 0; i < p.numel(); ++i) {
    const int64_t k = std::upper_bound(thresholds_.begin(), thresholds_.end(), pp[i]) - thresholds_.begin();
    (yy[i] == 1.0 ? buffer_pos_by_k_ : buffer_neg_by_k_)[k] += 1;
  }
}

void DecayAuc::decay(double rate) {
  const size_t nt = thresholds_.size();
  const bool started = std::any_of(tp_.begin(), tp_.end(), [](double x) { return x > 0; }) ||
                       std::any_of(fn_.begin(), fn_.end(), [](double x) { return x > 0; }) ||
                       std::any_of(fp_.begin(), fp_.end(), [](double x) { return x > 0; }) ||
                       std::any_of(tn_.begin(), tn_.end(), [](double x) { return x > 0; });
  const double keep = started ? rate : 0.0, add = started ? 1.0 - rate : 1.0;
  int64_t total_pos = 0, total_neg = 0;
  for (size_t k = 0; k <= nt; ++k) {
    total_pos += buffer_pos_by_k_[k];
    total_neg += buffer_neg_by_k_[k];
  }
  // Buffer counts at threshold i: tp = positives with pred >= t_i = Σ_{k > i} pos_by_k[k].
  int64_t pos_tail = 0, neg_tail = 0;
  for (size_t i = nt; i-- > 0;) {
    pos_tail += buffer_pos_by_k_[i + 1];
    neg_tail += buffer_neg_by_k_[i + 1];
    tp_[i] = keep * tp_[i] + add * static_cast<double>(pos_tail);
    fn_[i] = keep * fn_[i] + add * static_cast<double>(total_pos - pos_tail);
    fp_[i] = keep * fp_[i] + add * static_cast<double>(neg_tail);
    tn_[i] = keep * tn_[i] + add * static_cast<double>(total_neg - neg_tail);
  }
  std::fill(buffer_pos_by_k_.begin(), buffer_pos_by_k_.end(), 0);
  std::fill(buffer_neg_by_k_.begin(), buffer_neg_by_k_.end(), 0);
}

double DecayAuc::compute() const {
  // torchmetrics _binary_roc_compute (binned) + _auc_compute_without_check: tpr / fpr with 0/0 → 0,
  // ordered by decreasing threshold, trapezoid rule.
  const size_t nt = thresholds_.size();
  auto safe_div = [](double a, double b) { return b == 0.0 ? 0.0 : a / b; };
  double area = 0.0;
  double prev_x = 0.0, prev_y = 0.0;
  for (size_t step = 0; step < nt; ++step) {
    const size_t i = nt - 1 - step;
    const double x = safe_div(fp_[i], fp_[i] + tn_[i]);
    const double y = safe_div(tp_[i], tp_[i] + fn_[i]);
    if (step > 0) area += (x - prev_x) * (y + prev_y) / 2.0;
    prev_x = x;
    prev_y = y;
  }
  return area;
}

void DecayAuc::merge(const DecayAuc& other) {
  TORCH_CHECK(other.thresholds_.size() == thresholds_.size(), "auc: cannot merge metrics with ",
              other.thresholds_.size(), " and ", thresholds_.size(), " thresholds");
  for (size_t k = 0; k < buffer_pos_by_k_.size(); ++k) {
    buffer_pos_by_k_[k] += other.buffer_pos_by_k_[k];
    buffer_neg_by_k_[k] += other.buffer_neg_by_k_[k];
  }
  for (size_t i = 0; i < tp_.size(); ++i) {
    tp_[i] += other.tp_[i];
    fn_[i] += other.fn_[i];
    fp_[i] += other.fp_[i];
    tn_[i] += other.tn_[i];
  }
}

void DecayAuc::reset() {
  const size_t nt = thresholds_.size();
  buffer_pos_by_k_.assign(nt + 1, 0);
  buffer_neg_by_k_.assign(nt + 1, 0);
  tp_.assign(nt, 0.0);
  fn_.assign(nt, 0.0);
  fp_.assign(nt, 0.0);
  tn_.assign(nt, 0.0);
}

TrainMetricWrapper::TrainMetricWrapper(double decay_rate, int64_t decay_step)
    : decay_rate_(decay_rate), decay_step_(decay_step) {
  if (!(decay_rate >= 0.0 && decay_rate <= 1.0)) {
    throw ConfigError(fmt::format("train_metrics.decay_rate: must be in [0, 1], got {}", decay_rate));
  }
  if (decay_step < 1) {
    throw ConfigError(fmt::format("train_metrics.decay_step: must be >= 1, got {}", decay_step));
  }
}

TrainMetricWrapper::TrainMetricWrapper(BufferedMetric metric, double decay_rate, int64_t decay_step)
    : TrainMetricWrapper(decay_rate, decay_step) {
  if (!metric.update || !metric.compute || !metric.reset) {
    throw UsageError("TrainMetricWrapper: the metric needs update, compute and reset functions");
  }
  metric_ = std::move(metric);
}

TrainMetricWrapper TrainMetricWrapper::decay_auc(int64_t num_thresholds, double decay_rate, int64_t decay_step) {
  TrainMetricWrapper w(decay_rate, decay_step);
  w.auc_ = std::make_shared<DecayAuc>(num_thresholds);
  return w;
}

void TrainMetricWrapper::update(const torch::Tensor& preds, const torch::Tensor& target) {
  if (auc_) {
    auc_->update(preds, target);
  } else {
    metric_.update(preds, target);
  }
  ++step_count_;
  if (step_count_ % decay_step_ != 0) return;
  if (auc_) {
    auc_->decay(decay_rate_);
    value_ = auc_->compute();
    return;
  }
  const double fresh = metric_.compute();
  metric_.reset();
  if (std::isnan(fresh)) {
    log::warning("train metric: NaN over the last {} steps (step {}); keeping the previous value {}", decay_step_,
                 step_count_, value_);
    return;
  }
  value_ = value_ == 0.0 ? fresh : decay_rate_ * value_ + (1.0 - decay_rate_) * fresh;
}

void TrainMetricWrapper::reset() {
  if (auc_) {
    auc_->reset();
  } else {
    metric_.reset();
  }
  value_ = 0.0;
  step_count_ = 0;
}

}  // namespace tzrec::metrics
