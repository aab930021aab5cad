#include "metrics/auc.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "base/logging.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

Auc::Auc(int64_t num_thresholds) : num_thresholds_(num_thresholds) {
  if (num_thresholds < 2) {
    throw ConfigError(fmt::format("metrics.auc.thresholds: must be >= 2, got {}", num_thresholds));
  }
  // Use torch's own linspace so the float32 threshold values equal torchmetrics' exactly.
  torch::Tensor t = torch::linspace(0, 1, num_thresholds, torch::kFloat32);
  thresholds_.assign(t.data_ptr<float>(), t.data_ptr<float>() + num_thresholds);
  pos_by_k_.assign(num_thresholds + 1, 0);
  neg_by_k_.assign(num_thresholds + 1, 0);
}

void Auc::update(const torch::Tensor& preds, const torch::Tensor& labels, const torch::Tensor& weights) {
  TORCH_CHECK(!synced_, "auc: update() after sync(); call reset() before adding samples again");
  TORCH_CHECK(preds.is_floating_point(), "auc: predictions must be floating point, got ", preds.dtype());
  TORCH_CHECK(preds.numel() == labels.numel(), "auc: ", preds.numel(), " predictions but ", labels.numel(),
              " labels");
  torch::Tensor p = preds.detach().flatten().to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor y = labels.detach().flatten().to(torch::kCPU, torch::kFloat64).contiguous();
  if (p.numel() == 0) return;
  if (torch::isnan(p).any().item<bool>()) {
    throw DataError("auc: got NaN predictions; the model output is not finite (did training diverge?)");
  }
  torch::Tensor bad_label = (y != 0) & (y != 1);
  if (bad_label.any().item<bool>()) {
    double v = y.masked_select(bad_label)[0].item<double>();
    throw DataError(fmt::format("auc: labels must be 0 or 1, got {}; binarize the label column", v));
  }
  // torchmetrics: predictions outside [0, 1] mean logits for the whole batch.
  if (!((p >= 0) & (p <= 1)).all().item<bool>()) p = torch::sigmoid(p);

  const int64_t n = p.numel();
  const float* pp = p.data_ptr<float>();
  const double* yy = y.data_ptr<double>();
  std::vector<double> w;
  if (weights.defined()) {
    TORCH_CHECK(weights.numel() == n, "auc: ", weights.numel(), " weights for ", n, " predictions");
    torch::Tensor wt = weights.detach().flatten().to(torch::kCPU, torch::kFloat64).contiguous();
    w.assign(wt.data_ptr<double>(), wt.data_ptr<double>() + n);
    for (double x : w) {
      if (!(x >= 0.0) || std::isinf(x)) {
        throw DataError(fmt::format("auc: sample weights must be finite and >= 0, got {}", x));
      }
    }
    if (weights_.empty()) weights_.assign(preds_.size(), 1.0);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!w.empty()) {
      weights_.push_back(w[i]);
    } else if (!weights_.empty()) {
      weights_.push_back(1.0);
    }
    append(pp[i], yy[i] == 1.0);
  }
}

void Auc::append(float pred, bool positive) {
  preds_.push_back(pred);
  labels_.push_back(positive ? 1 : 0);
  // k = number of thresholds t with pred >= t (thresholds ascending).
  int64_t k = std::upper_bound(thresholds_.begin(), thresholds_.end(), pred) - thresholds_.begin();
  (positive ? pos_by_k_ : neg_by_k_)[k] += 1;
}

void Auc::merge(const Auc& other) {
  TORCH_CHECK(!synced_, "auc: merge() after sync(); call reset() before adding samples again");
  TORCH_CHECK(other.num_thresholds_ == num_thresholds_, "auc: cannot merge metrics with ",
              other.num_thresholds_, " and ", num_thresholds_, " thresholds");
  if (!other.weights_.empty() && weights_.empty()) weights_.assign(preds_.size(), 1.0);
  const size_t before = preds_.size();
  preds_.insert(preds_.end(), other.preds_.begin(), other.preds_.end());
  labels_.insert(labels_.end(), other.labels_.begin(), other.labels_.end());
  if (!weights_.empty()) {
    if (other.weights_.empty()) {
      weights_.resize(before + other.preds_.size(), 1.0);
    } else {
      weights_.insert(weights_.end(), other.weights_.begin(), other.weights_.end());
    }
  }
  for (int64_t k = 0; k <= num_thresholds_; ++k) {
    pos_by_k_[k] += other.pos_by_k_[k];
    neg_by_k_[k] += other.neg_by_k_[k];
  }
}

void Auc::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  if (pg.world_size() == 1) return;
  // One float64 row per sample: (pred, label, weight); float32 predictions, 0/1 labels and the
  // weights are exact in float64. Header row: (1 if this rank keeps weights else 0, 0, 0).
  const int64_t n = num_samples();
  const bool weighted = !weights_.empty();
  torch::Tensor rows = torch::empty({n, 3}, torch::kFloat64);
  double* r = rows.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    r[3 * i] = preds_[i];
    r[3 * i + 1] = labels_[i];
    r[3 * i + 2] = weighted ? weights_[i] : 1.0;
  }
  torch::Tensor header = torch::tensor({weighted ? 1.0 : 0.0, 0.0, 0.0}, torch::kFloat64)
                             .reshape({1, 3});
  const std::vector<torch::Tensor> blocks = detail::gather_blocks(pg, header, rows, "auc samples");
  bool any_weighted = false;
  for (const torch::Tensor& b : blocks) any_weighted = any_weighted || b[0][0].item<double>() != 0.0;

  preds_.clear();
  labels_.clear();
  weights_.clear();
  std::fill(pos_by_k_.begin(), pos_by_k_.end(), 0);
  std::fill(neg_by_k_.begin(), neg_by_k_.end(), 0);
  for (const torch::Tensor& b : blocks) {
    const torch::Tensor block = b.contiguous();
    const double* d = block.data_ptr<double>();
    const int64_t rows_in_block = block.size(0) - 1;
    for (int64_t i = 1; i <= rows_in_block; ++i) {
      append(static_cast<float>(d[3 * i]), d[3 * i + 1] == 1.0);
      if (any_weighted) weights_.push_back(d[3 * i + 2]);  // 1.0 for an unweighted rank's samples
    }
  }
}

double Auc::compute() const {
  const size_t n = preds_.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return preds_[a] > preds_[b]; });
  // Walk groups of equal prediction from the top: each negative in a group is outranked by every
  // positive above the group and ties with the group's positives (1/2 each).
  double pos_above = 0.0, area = 0.0, total_neg = 0.0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    double pos = 0.0, neg = 0.0;
    while (j < n && preds_[order[j]] == preds_[order[i]]) {
      double w = weights_.empty() ? 1.0 : weights_[order[j]];
      (labels_[order[j]] ? pos : neg) += w;
      ++j;
    }
    area += neg * (pos_above + 0.5 * pos);
    pos_above += pos;
    total_neg += neg;
    i = j;
  }
  if (pos_above <= 0.0 || total_neg <= 0.0) {
    log::warning("auc: {} samples with {} positive and {} negative weight; AUC is undefined, reporting 0",
                 n, pos_above, total_neg);
    return 0.0;
  }
  return area / (pos_above * total_neg);
}

double Auc::compute_binned() const {
  const int64_t nt = num_thresholds_;
  // tp[i] = #positives with pred >= t_i = Σ_{k > i} pos_by_k[k]; same for fp.
  torch::Tensor tps = torch::zeros({nt}, torch::kInt64);
  torch::Tensor fps = torch::zeros({nt}, torch::kInt64);
  int64_t* tp = tps.data_ptr<int64_t>();
  int64_t* fp = fps.data_ptr<int64_t>();
  int64_t pos_tail = 0, neg_tail = 0;
  for (int64_t i = nt - 1; i >= 0; --i) {
    pos_tail += pos_by_k_[i + 1];
    neg_tail += neg_by_k_[i + 1];
    tp[i] = pos_tail;
    fp[i] = neg_tail;
  }
  const int64_t total_pos = pos_tail + pos_by_k_[0];
  const int64_t total_neg = neg_tail + neg_by_k_[0];
  if (total_pos == 0 || total_neg == 0) {
    log::warning("auc: {} positive and {} negative samples; AUC is undefined, reporting 0", total_pos,
                 total_neg);
  }
  // Same tensor ops as torchmetrics' _binary_roc_compute + _auc_compute_without_check (float32).
  auto safe_divide = [](const torch::Tensor& num, torch::Tensor denom) {
    denom = denom.clone();
    denom.masked_fill_(denom == 0, 1);
    return num.to(torch::kFloat32) / denom.to(torch::kFloat32);
  };
  torch::Tensor fns = total_pos - tps;
  torch::Tensor tns = total_neg - fps;
  torch::Tensor tpr = safe_divide(tps, tps + fns).flip(0);
  torch::Tensor fpr = safe_divide(fps, fps + tns).flip(0);
  return torch::trapz(tpr, fpr).item<double>();
}

void Auc::reset() {
  synced_ = false;
  preds_.clear();
  labels_.clear();
  weights_.clear();
  std::fill(pos_by_k_.begin(), pos_by_k_.end(), 0);
  std::fill(neg_by_k_.begin(), neg_by_k_.end(), 0);
}

}  // namespace tzrec::metrics
