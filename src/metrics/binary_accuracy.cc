#include "metrics/binary_accuracy.h"

#include "base/error.h"

namespace tzrec::metrics {

BinaryAccuracy::BinaryAccuracy(double threshold) : threshold_(threshold) {
  if (!(threshold >= 0.0 && threshold <= 1.0)) {
    throw ConfigError(fmt::format("accuracy.threshold: must be in [0, 1], got {}", threshold));
  }
}

void BinaryAccuracy::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  TORCH_CHECK(!state_.synced(), "accuracy: update() after sync(); call reset() before adding samples again");
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
  state_.add((positive == y).sum().item<int64_t>(), p.numel());
}

void BinaryAccuracy::merge(const BinaryAccuracy& other) { state_.merge(other.state_); }

void BinaryAccuracy::sync(dist::ProcessGroup& pg) { state_.sync(pg); }

double BinaryAccuracy::compute() const { return state_.value(); }

void BinaryAccuracy::reset() { state_.reset(); }

}  // namespace tzrec::metrics
