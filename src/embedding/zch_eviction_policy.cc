#include "embedding/zch_eviction_policy.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include <torch/torch.h>

namespace tzrec::embedding {
namespace {

using torch::indexing::Slice;

class LfuPolicy final : public ZchEvictionPolicy {
 public:
  explicit LfuPolicy(std::optional<ZchThresholdFilter> filter)
      : ZchEvictionPolicy(1.0, std::move(filter)) {}
  ZchEvictionKind kind() const override { return ZchEvictionKind::kLfu; }
  torch::Tensor scores(int64_t /*current_iter*/, const ZchSlotMetadata& slots,
                       const torch::Tensor& newcomer_counts,
                       const torch::Tensor& /*newcomer_last_access_iter*/) const override {
    return torch::cat({slots.counts, newcomer_counts});  // int64
  }
};

// (current_iter - last_access_iter + 1)^decay_exponent as torch computes it for an int64 tensor
// and a Python float: float32.
torch::Tensor weighted_distance(int64_t current_iter, const torch::Tensor& last_access_iter,
                                double decay_exponent) {
  const torch::Tensor distance = torch::rsub(last_access_iter, current_iter) + 1;  // int64
  return torch::pow(distance, at::Scalar(decay_exponent));
}

class LruPolicy final : public ZchEvictionPolicy {
 public:
  LruPolicy(double decay_exponent, std::optional<ZchThresholdFilter> filter)
      : ZchEvictionPolicy(decay_exponent, std::move(filter)) {}
  ZchEvictionKind kind() const override { return ZchEvictionKind::kLru; }
  torch::Tensor scores(int64_t current_iter, const ZchSlotMetadata& slots,
                       const torch::Tensor& /*newcomer_counts*/,
                       const torch::Tensor& newcomer_last_access_iter) const override {
    const torch::Tensor merged = torch::cat({slots.last_access_iter, newcomer_last_access_iter});
    return torch::neg(weighted_distance(current_iter, merged, decay_exponent()));
  }
};

class DistanceLfuPolicy final : public ZchEvictionPolicy {
 public:
  DistanceLfuPolicy(double decay_exponent, std::optional<ZchThresholdFilter> filter)
      : ZchEvictionPolicy(decay_exponent, std::move(filter)) {}
  ZchEvictionKind kind() const override { return ZchEvictionKind::kDistanceLfu; }
  torch::Tensor scores(int64_t current_iter, const ZchSlotMetadata& slots,
                       const torch::Tensor& newcomer_counts,
                       const torch::Tensor& newcomer_last_access_iter) const override {
    const torch::Tensor counts = torch::cat({slots.counts, newcomer_counts});
    const torch::Tensor access = torch::cat({slots.last_access_iter, newcomer_last_access_iter});
    // int64 / float32 → float32, as torch.div.
    return torch::div(counts, weighted_distance(current_iter, access, decay_exponent()));
  }
};

}  // namespace

const char* zch_eviction_kind_name(ZchEvictionKind kind) {
  switch (kind) {
    case ZchEvictionKind::kLfu:
      return "lfu";
    case ZchEvictionKind::kLru:
      return "lru";
    case ZchEvictionKind::kDistanceLfu:
      return "distance_lfu";
  }
  return "?";
}

ZchEvictionDecision zch_select_by_scores(int64_t num_slots, const torch::Tensor& scores) {
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) >= num_slots,
              "zch_select_by_scores: scores must be [S + N]");
  const torch::Tensor order =
      torch::argsort(scores, /*stable=*/true, /*dim=*/0, /*descending=*/true);
  const torch::Tensor top = order.index({Slice(0, num_slots)});
  const torch::Tensor rest = order.index({Slice(num_slots, torch::indexing::None)});
  ZchEvictionDecision d;
  d.selected_newcomers = top.index({top.ge(num_slots)}) - num_slots;
  d.evicted_positions = rest.index({rest.lt(num_slots)});
  return d;
}

ZchEvictionDecision ZchEvictionPolicy::update_and_select(int64_t current_iter,
                                                         const ZchCandidates& candidates,
                                                         ZchSlotMetadata& slots) const {
  torch::NoGradGuard no_grad;
  const int64_t num_slots = uses_counts() ? slots.counts.size(0) : slots.last_access_iter.size(0);
  const torch::Tensor unmatched = candidates.matched.logical_not();
  const torch::Tensor& pos = candidates.matched_positions;

  // Step 1: matched candidates update their entries.
  torch::Tensor newcomer_counts;
  torch::Tensor newcomer_access;
  if (uses_counts()) {
    const torch::Tensor added = candidates.counts.index({candidates.matched});
    slots.counts.index_put_({pos}, slots.counts.index({pos}) + added);
    newcomer_counts = candidates.counts.index({unmatched});
  }
  if (uses_last_access_iter()) {
    slots.last_access_iter.index_put_({pos},
                                      candidates.last_access_iter.index({candidates.matched}));
    newcomer_access = candidates.last_access_iter.index({unmatched});
  }
  // Step 2: the last entry (the sentinel of unknown ids) always stays.
  if (uses_counts()) slots.counts[num_slots - 1] = std::numeric_limits<int64_t>::max();
  if (uses_last_access_iter()) slots.last_access_iter[num_slots - 1] = current_iter;

  // Steps 3 and 4.
  const ZchEvictionDecision d = zch_select_by_scores(
      num_slots, scores(current_iter, slots, newcomer_counts, newcomer_access));

  // The evicted entries take their newcomers' metadata.
  if (uses_counts()) {
    slots.counts.index_put_({d.evicted_positions}, newcomer_counts.index({d.selected_newcomers}));
  }
  if (uses_last_access_iter()) {
    slots.last_access_iter.index_put_({d.evicted_positions},
                                      newcomer_access.index({d.selected_newcomers}));
  }
  return d;
}

std::unique_ptr<ZchEvictionPolicy> make_zch_eviction_policy(
    ZchEvictionKind kind, double decay_exponent,
    std::optional<ZchThresholdFilter> threshold_filter) {
  switch (kind) {
    case ZchEvictionKind::kLfu:
      return std::make_unique<LfuPolicy>(std::move(threshold_filter));
    case ZchEvictionKind::kLru:
      return std::make_unique<LruPolicy>(decay_exponent, std::move(threshold_filter));
    case ZchEvictionKind::kDistanceLfu:
      return std::make_unique<DistanceLfuPolicy>(decay_exponent, std::move(threshold_filter));
  }
  TORCH_CHECK(false, "make_zch_eviction_policy: unknown kind");
}

}  // namespace tzrec::embedding
