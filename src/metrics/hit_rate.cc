#include "metrics/hit_rate.h"

#include <vector>

#include <torch/torch.h>

#include "metrics/metric_sync.h"

namespace tzrec::metrics::detail {

void HitRate::add(int64_t hits, int64_t samples) {
  TORCH_CHECK(!synced_, "accuracy: update() after sync(); call reset() before adding samples again");
  hits_ += hits;
  samples_ += samples;
}

void HitRate::merge(const HitRate& other) {
  TORCH_CHECK(!synced_, "accuracy: merge() after sync(); call reset() before adding samples again");
  hits_ += other.hits_;
  samples_ += other.samples_;
}

void HitRate::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<int64_t> state = {hits_, samples_};
  sum_across_ranks(pg, state, "accuracy state");
  hits_ = state[0];
  samples_ = state[1];
}

double HitRate::value() const {
  return samples_ == 0 ? 0.0 : static_cast<double>(hits_) / static_cast<double>(samples_);
}

void HitRate::reset() {
  hits_ = 0;
  samples_ = 0;
  synced_ = false;
}

}  // namespace tzrec::metrics::detail
