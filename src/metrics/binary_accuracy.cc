#include "metrics/binary_accuracy.h"

#include "base/error.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

BinaryAccuracy::BinaryAccuracy(double threshold) : threshold_(threshold) {
  if (!(threshold >= 0.0 && threshold <= 1.0)) {
    throw ConfigError(fmt::format("accuracy.threshold: must be in [0, 1], got {}", threshold));
  }
}

void BinaryAccuracy::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  TORCH_CHECK(!synced_, "accuracy: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(preds.sizes() == labels.sizes(), "accuracy: preds ", preds.sizes(), " do not match labels ",
              labels.sizes());
  torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat32).reshape({-1});
  torch::Tensor y = labels.detach().to(torch::kCPU, torch::kFloat64).reshape({-1});
  if (p.numel() == 0) return;
  if (torch::isnan(p).any().item<bool>()) throw DataError("accuracy: predictions contain NaN");
  if (!((y == 0) | (y == 1)).all().item<bool>()) throw DataError("accuracy: labels must be 0 or 1");
  // torchmetrics: any value outside [0, 1] → the whole batch is logits.
  if (((p < 0) | (p > 1)).any().item<bool>()) p = torch::sigmoid(p);
  torch::Tensor positive = (p > threshold_).to(torch::kFloat64);  // [B]
  correct_ += (positive == y).sum().item<int64_t>();
  count_ += p.numel();
}

void BinaryAccuracy::merge(const BinaryAccuracy& other) {
  TORCH_CHECK(!synced_, "accuracy: merge() after sync(); call reset() before adding samples again");
  correct_ += other.correct_;
  count_ += other.count_;
}

void BinaryAccuracy::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<int64_t> state = {correct_, count_};
  detail::sum_across_ranks(pg, state, "accuracy state");
  correct_ = state[0];
  count_ = state[1];
}

double BinaryAccuracy::compute() const {
  return count_ == 0 ? 0.0 : static_cast<double>(correct_) / static_cast<double>(count_);
}

void BinaryAccuracy::reset() {
  synced_ = false;
  correct_ = 0;
  count_ = 0;
}

}  // namespace tzrec::metrics
