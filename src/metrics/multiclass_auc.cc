#include "metrics/multiclass_auc.h"

#include <algorithm>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

AucAverage parse_auc_average(const std::string& name) {
  if (name == "macro") return AucAverage::kMacro;
  if (name == "weighted") return AucAverage::kWeighted;
  if (name == "none") return AucAverage::kNone;
  throw ConfigError(
      fmt::format("metrics.multiclass_auc.average: unknown value \"{}\"; use \"macro\" or \"weighted\"", name));
}

MulticlassAuc::MulticlassAuc(int64_t num_classes, int64_t num_thresholds, AucAverage average)
    : num_classes_(num_classes), num_thresholds_(num_thresholds), average_(average) {
  if (num_classes < 2) {
    throw ConfigError(fmt::format("multiclass_auc: num_class must be >= 2, got {}", num_classes));
  }
  if (num_thresholds < 0 || num_thresholds == 1) {
    throw ConfigError(fmt::format("metrics.multiclass_auc.thresholds: must be >= 2 (or 0 for the exact AUC), got {}",
                                  num_thresholds));
  }
  // Auc needs >= 2 thresholds even when only its exact state is used.
  per_class_.assign(num_classes, Auc(num_thresholds == 0 ? 2 : num_thresholds));
  positives_.assign(num_classes, 0);
}

void MulticlassAuc::update(const torch::Tensor& preds, const torch::Tensor& labels) {
  TORCH_CHECK(!synced_, "multiclass_auc: update() after sync(); call reset() before adding samples again");
  if (preds.dim() != 2 || preds.size(1) != num_classes_ || labels.numel() != preds.size(0)) {
    throw UsageError(fmt::format("multiclass_auc: expected preds [B, {}] and labels [B], got {} and {}", num_classes_,
                                 c10::str(preds.sizes()), c10::str(labels.sizes())));
  }
  if (preds.size(0) == 0) return;
  torch::Tensor p = preds.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor y = labels.detach().reshape({-1}).to(torch::kCPU, torch::kFloat64).contiguous();
  if (torch::isnan(p).any().item<bool>()) {
    throw DataError("multiclass_auc: got NaN predictions; the model output is not finite (did training diverge?)");
  }
  torch::Tensor bad = (y < 0) | (y >= static_cast<double>(num_classes_)) | (y != torch::floor(y));
  if (bad.any().item<bool>()) {
    throw DataError(fmt::format("multiclass_auc: labels must be class ids in [0, {}), got {}", num_classes_,
                                y.masked_select(bad)[0].item<double>()));
  }
  // torchmetrics: any value outside [0, 1] → the whole batch is logits.
  if (!((p >= 0) & (p <= 1)).all().item<bool>()) p = torch::softmax(p, 1);
  torch::Tensor cls = y.to(torch::kInt64);
  for (int64_t c = 0; c < num_classes_; ++c) {
    torch::Tensor is_c = (cls == c);
    positives_[c] += is_c.sum().item<int64_t>();
    per_class_[c].update(p.select(1, c), is_c);
  }
  num_samples_ += p.size(0);
}

void MulticlassAuc::merge(const MulticlassAuc& other) {
  TORCH_CHECK(!synced_, "multiclass_auc: merge() after sync(); call reset() before adding samples again");
  TORCH_CHECK(other.num_classes_ == num_classes_ && other.num_thresholds_ == num_thresholds_,
              "multiclass_auc: cannot merge metrics with different num_classes or thresholds");
  for (int64_t c = 0; c < num_classes_; ++c) {
    per_class_[c].merge(other.per_class_[c]);
    positives_[c] += other.positives_[c];
  }
  num_samples_ += other.num_samples_;
}

std::vector<double> MulticlassAuc::compute_per_class() const {
  std::vector<double> out(num_classes_);
  for (int64_t c = 0; c < num_classes_; ++c) {
    const int64_t pos = positives_[c], neg = num_samples_ - pos;
    if (pos == 0 || neg == 0) {
      log::warning("multiclass_auc: class {} has {} positive and {} negative samples; scoring it 0", c, pos, neg);
      out[c] = 0.0;
      continue;
    }
    out[c] = num_thresholds_ == 0 ? per_class_[c].compute() : per_class_[c].compute_binned();
  }
  return out;
}

double MulticlassAuc::compute() const {
  if (average_ == AucAverage::kNone) {
    throw UsageError("multiclass_auc: average \"none\" has one value per class; call compute_per_class()");
  }
  const std::vector<double> per_class = compute_per_class();
  double sum = 0.0, weight_sum = 0.0;
  for (int64_t c = 0; c < num_classes_; ++c) {
    const double w = average_ == AucAverage::kMacro ? 1.0 : static_cast<double>(positives_[c]);
    sum += w * per_class[c];
    weight_sum += w;
  }
  return weight_sum == 0.0 ? 0.0 : sum / weight_sum;
}

void MulticlassAuc::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  if (pg.world_size() == 1) return;
  for (Auc& a : per_class_) a.sync(pg);
  std::vector<int64_t> counts(positives_);
  counts.push_back(num_samples_);
  detail::sum_across_ranks(pg, counts, "multiclass_auc counts");
  std::copy(counts.begin(), counts.end() - 1, positives_.begin());
  num_samples_ = counts.back();
}

void MulticlassAuc::reset() {
  synced_ = false;
  for (Auc& a : per_class_) a.reset();
  std::fill(positives_.begin(), positives_.end(), 0);
  num_samples_ = 0;
}

}  // namespace tzrec::metrics
