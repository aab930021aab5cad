#include "metrics/multiclass_accuracy.h"

#include "base/error.h"

namespace tzrec::metrics {

MulticlassAccuracy::MulticlassAccuracy(int64_t num_classes, int64_t top_k) : num_classes_(num_classes), top_k_(top_k) {
  if (num_classes < 2) {
    throw ConfigError(fmt::format("accuracy: multiclass accuracy needs num_class >= 2, got {}", num_classes));
  }
  if (top_k < 1 || top_k > num_classes) {
    throw ConfigError(fmt::format("accuracy.top_k: must be in [1, num_class = {}], got {}", num_classes, top_k));
  }
}

void MulticlassAccuracy::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  TORCH_CHECK(!state_.synced(), "accuracy: update() after sync(); call reset() before adding samples again");
  if (preds.dim() != 2 || preds.size(1) != num_classes_ || labels.numel() != preds.size(0)) {
    throw UsageError(fmt::format("accuracy: expected preds [B, {}] and labels [B], got {} and {}", num_classes_,
                                 c10::str(preds.sizes()), c10::str(labels.sizes())));
  }
  if (preds.size(0) == 0) return;
  torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat32);
  torch::Tensor y = labels.detach().reshape({-1}).to(torch::kCPU, torch::kFloat64);
  if (torch::isnan(p).any().item<bool>()) throw DataError("accuracy: predictions contain NaN");
  torch::Tensor bad = (y < 0) | (y >= static_cast<double>(num_classes_)) | (y != torch::floor(y));
  if (bad.any().item<bool>()) {
    throw DataError(fmt::format("accuracy: labels must be class ids in [0, {}), got {}", num_classes_,
                                y.masked_select(bad)[0].item<double>()));
  }
  torch::Tensor top = std::get<1>(p.topk(top_k_, /*dim=*/1));                  // [B, k]
  torch::Tensor hit = (top == y.to(torch::kInt64).unsqueeze(1)).any(1);       // [B]
  state_.add(hit.sum().item<int64_t>(), p.size(0));
}

void MulticlassAccuracy::merge(const MulticlassAccuracy& other) { state_.merge(other.state_); }

void MulticlassAccuracy::sync(dist::ProcessGroup& pg) { state_.sync(pg); }

double MulticlassAccuracy::compute() const { return state_.value(); }

void MulticlassAccuracy::reset() { state_.reset(); }

}  // namespace tzrec::metrics
