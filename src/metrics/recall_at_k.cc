#include "metrics/recall_at_k.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "metrics/metric_sync.h"

namespace tzrec::metrics {

RecallAtK::RecallAtK(int64_t top_k) : top_k_(top_k) {
  if (top_k < 1) throw ConfigError(fmt::format("metrics.recall_at_k.top_k: must be >= 1, got {}", top_k));
}

void RecallAtK::update(const torch::Tensor& similarity, const torch::Tensor& target) {
  TORCH_CHECK(!synced_, "recall_at_k: update() after sync(); call reset() before adding samples again");
  if (similarity.dim() != 2 || target.sizes() != similarity.sizes()) {
    throw UsageError(fmt::format("recall_at_k: similarity must be [B, N] and target of the same shape; got {} and {}",
                                 c10::str(similarity.sizes()), c10::str(target.sizes())));
  }
  torch::Tensor s = similarity.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor t = target.detach().to(torch::kCPU, torch::kBool).contiguous();
  if (torch::isnan(s).any().item<bool>()) {
    throw DataError("recall_at_k: got NaN similarities; the model output is not finite (did training diverge?)");
  }
  const int64_t rows = s.size(0), cols = s.size(1);
  const int64_t k = std::min(top_k_, cols);
  const float* sp = s.data_ptr<float>();
  const bool* tp = t.data_ptr<bool>();
  std::vector<int64_t> idx(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = sp + r * cols;
    const bool* row_t = tp + r * cols;
    std::iota(idx.begin(), idx.end(), int64_t{0});
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [row](int64_t a, int64_t b) {
      return row[a] > row[b] || (row[a] == row[b] && a < b);
    });
    for (int64_t i = 0; i < k; ++i) num_hits_ += row_t[idx[i]];
    for (int64_t c = 0; c < cols; ++c) num_targets_ += row_t[c];
  }
}

torch::Tensor recall_targets(const torch::Tensor& similarity, RecallTarget mode) {
  if (similarity.dim() != 2) {
    throw UsageError(fmt::format("recall_at_k: similarity must be [B, N], got {}", c10::str(similarity.sizes())));
  }
  const auto opts = torch::TensorOptions().dtype(torch::kBool).device(similarity.device());
  if (mode == RecallTarget::kDiagonal) return torch::eye(similarity.size(0), similarity.size(1), opts);
  torch::Tensor target = torch::zeros(similarity.sizes(), opts);
  if (similarity.size(1) > 0) target.select(1, 0).fill_(true);
  return target;
}

void RecallAtK::update(const torch::Tensor& similarity, RecallTarget mode) {
  update(similarity, recall_targets(similarity, mode));
}

void RecallAtK::merge(const RecallAtK& other) {
  TORCH_CHECK(!synced_, "recall_at_k: merge() after sync(); call reset() before adding samples again");
  num_hits_ += other.num_hits_;
  num_targets_ += other.num_targets_;
}

void RecallAtK::sync(dist::ProcessGroup& pg) {
  if (synced_) return;
  synced_ = true;
  std::vector<int64_t> state = {num_hits_, num_targets_};
  detail::sum_across_ranks(pg, state, "recall_at_k state");
  num_hits_ = state[0];
  num_targets_ = state[1];
}

double RecallAtK::compute() const {
  if (num_targets_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(num_hits_) / static_cast<double>(num_targets_);
}

void RecallAtK::reset() {
  synced_ = false;
  num_hits_ = 0;
  num_targets_ = 0;
}

}  // namespace tzrec::metrics
