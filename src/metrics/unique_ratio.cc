#include "metrics/unique_ratio.h"

#include <limits>

#include "metrics/metric_sync.h"

namespace tzrec::metrics {

void UniqueRatio::update(const torch::Tensor& codes) {
  TORCH_CHECK(!synced_, "unique ratio: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(codes.dim() == 2, "unique ratio: codes must be [B, L], got ", codes.sizes());
  const int64_t batch = codes.size(0);
  if (batch == 0) return;
  const torch::Tensor c = codes.detach().to(torch::kCPU);
  const int64_t unique = std::get<0>(torch::unique_dim(c, 0)).size(0);
  ratio_sum_ += static_cast<double>(unique) / static_cast<double>(batch);
  count_ += 1;
}

void UniqueRatio::merge(const UniqueRatio& other) {
  TORCH_CHECK(!synced_, "unique ratio: merge() after sync()");
  ratio_sum_ += other.ratio_sum_;
  count_ += other.count_;
}

void UniqueRatio::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<double> state = {ratio_sum_, count_};
  detail::sum_across_ranks(pg, state, "unique ratio state");
  ratio_sum_ = state[0];
  count_ = state[1];
}

double UniqueRatio::compute() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return ratio_sum_ / count_;
}

void UniqueRatio::reset() {
  ratio_sum_ = 0.0;
  count_ = 0.0;
  synced_ = false;
}

}  // namespace tzrec::metrics
