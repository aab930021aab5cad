#include "metrics/mean_metric.h"

#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

void MeanMetric::update(double value, double weight) {
  TORCH_CHECK(!synced_, "mean metric: update() after sync(); call reset() before adding values again");
  if (!(weight >= 0.0) || std::isinf(weight)) {
    throw DataError(fmt::format("mean metric: weight must be finite and >= 0, got {}", weight));
  }
  if (std::isnan(value)) {
    log::warning("mean metric: skipping a NaN value");
    return;
  }
  weighted_sum_ += value * weight;
  total_weight_ += weight;
}

void MeanMetric::update(const torch::Tensor& values, const torch::Tensor& weights) {
  torch::Tensor v = values.detach().flatten().to(torch::kCPU, torch::kFloat64).contiguous();
  torch::Tensor w = weights.defined() ? weights.detach().to(torch::kCPU, torch::kFloat64).expand_as(values)
                                            .flatten().contiguous()
                                      : torch::ones_like(v);
  const double* vp = v.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  for (int64_t i = 0; i < v.numel(); ++i) update(vp[i], wp[i]);
}

void MeanMetric::merge(const MeanMetric& other) {
  TORCH_CHECK(!synced_, "mean metric: merge() after sync(); call reset() before adding values again");
  weighted_sum_ += other.weighted_sum_;
  total_weight_ += other.total_weight_;
}

void MeanMetric::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<double> state = {weighted_sum_, total_weight_};
  detail::sum_across_ranks(pg, state, "mean metric state");
  weighted_sum_ = state[0];
  total_weight_ = state[1];
}

double MeanMetric::compute() const {
  if (total_weight_ == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return weighted_sum_ / total_weight_;
}

void MeanMetric::reset() {
  synced_ = false;
  weighted_sum_ = 0.0;
  total_weight_ = 0.0;
}

}  // namespace tzrec::metrics
