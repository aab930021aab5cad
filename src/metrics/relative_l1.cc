#include "metrics/relative_l1.h"

#include <limits>

#include "metrics/metric_sync.h"

namespace tzrec::metrics {

void RelativeL1::update(const torch::Tensor& preds, const torch::Tensor& target) {
  TORCH_CHECK(!synced_, "relative L1: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(preds.sizes() == target.sizes(), "relative L1: preds ", preds.sizes(), " do not match ", target.sizes());
  const torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat32);
  const torch::Tensor t = target.detach().to(torch::kCPU, torch::kFloat32);
  const torch::Tensor rel = (t - p).abs() / (torch::maximum(t.abs(), p.abs()) + epsilon_);
  sum_ += rel.sum().to(torch::kFloat64).item<double>();
  count_ += rel.numel();
}

void RelativeL1::merge(const RelativeL1& other) {
  TORCH_CHECK(!synced_, "relative L1: merge() after sync()");
  sum_ += other.sum_;
  count_ += other.count_;
}

void RelativeL1::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<double> state = {sum_, static_cast<double>(count_)};
  detail::sum_across_ranks(pg, state, "relative L1 state");
  sum_ = state[0];
  count_ = static_cast<int64_t>(state[1]);
}

double RelativeL1::compute() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return sum_ / static_cast<double>(count_);
}

void RelativeL1::reset() {
  sum_ = 0.0;
  count_ = 0;
  synced_ = false;
}

}  // namespace tzrec::metrics
