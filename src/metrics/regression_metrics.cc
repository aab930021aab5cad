#include "metrics/regression_metrics.h"

#include <limits>

#include "base/error.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

void RegressionError::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  TORCH_CHECK(!synced_, "regression metric: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(preds.sizes() == labels.sizes(), "regression metric: preds ", preds.sizes(),
              " do not match labels ", labels.sizes());
  torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat64).reshape({-1});
  torch::Tensor y = labels.detach().to(torch::kCPU, torch::kFloat64).reshape({-1});
  if (torch::isnan(p).any().item<bool>()) throw DataError("regression metric: predictions contain NaN");
  if (torch::isnan(y).any().item<bool>()) throw DataError("regression metric: labels contain NaN");
  torch::Tensor diff = p - y;  // [B]
  torch::Tensor err = kind_ == Kind::kAbsolute ? diff.abs() : diff * diff;
  sum_error_ += err.sum().item<double>();
  count_ += p.numel();
}

void RegressionError::merge(const RegressionError& other) {
  TORCH_CHECK(!synced_, "regression metric: merge() after sync(); call reset() before adding samples again");
  TORCH_CHECK(other.kind_ == kind_, "RegressionError::merge: different kinds");
  sum_error_ += other.sum_error_;
  count_ += other.count_;
}

void RegressionError::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<double> state = {sum_error_, static_cast<double>(count_)};
  detail::sum_across_ranks(pg, state, "regression metric state");
  sum_error_ = state[0];
  count_ = static_cast<int64_t>(state[1]);
}

double RegressionError::compute() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return sum_error_ / static_cast<double>(count_);
}

void RegressionError::reset() {
  synced_ = false;
  sum_error_ = 0.0;
  count_ = 0;
}

}  // namespace tzrec::metrics
