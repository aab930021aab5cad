#include "embedding/touched_ids.h"

#include <algorithm>

namespace tzrec::embedding {
namespace {
constexpr int64_t kMinPendingBeforeCompaction = int64_t{1} << 22;
}  // namespace

void TouchedIds::add(const torch::Tensor& ids) {
  if (ids.numel() == 0) return;
  pending_.push_back(ids.reshape({-1}).to(torch::kInt64, /*non_blocking=*/false, /*copy=*/true));
  pending_count_ += ids.numel();
  if (pending_count_ >= std::max(kMinPendingBeforeCompaction, distinct_.numel())) compact();
}

void TouchedIds::compact() {
  if (pending_.empty()) return;
  pending_.push_back(distinct_);
  distinct_ = std::get<0>(at::_unique2(torch::cat(pending_), /*sorted=*/true));
  pending_.clear();
  pending_count_ = 0;
}

torch::Tensor TouchedIds::take() {
  compact();
  torch::Tensor out = distinct_;
  distinct_ = torch::empty({0}, torch::kInt64);
  return out;
}

}  // namespace tzrec::embedding
