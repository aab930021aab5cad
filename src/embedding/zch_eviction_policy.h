// Eviction policies of zero-collision hashing: TorchRec's LFU_EvictionPolicy, LRU_EvictionPolicy
// and DistanceLFU_EvictionPolicy (torchrec/modules/mc_modules.py), as TorchEasyRec configures them
// from ZeroCollisionHash.lfu / lru / distance_lfu (docs/tzrec-compatibility.md §5.12).
//
// At each eviction, ZchModule hands the policy the ids seen since the previous eviction (after the
// threshold filter), as "candidates" sorted by count descending (stable, so ties keep ascending
// id order), and the per-slot metadata of its sorted id buffer of S = zch_size entries. The policy
// 1. adds the candidates that are already in the buffer ("matched") to their entries' metadata:
//    counts += candidate count (lfu, distance_lfu); last_access_iter = candidate's last access
//    (lru, distance_lfu);
// 2. pins the last entry (position S - 1, the sentinel whose slot every unknown id maps to):
//    counts = INT64_MAX, last_access_iter = current_iter;
// 3. scores the S entries followed by the unmatched candidates (merged index S + k for the k-th):
//      lfu:          score = count                                      (int64)
//      lru:          score = -(current_iter - last_access_iter + 1)^decay_exponent   (float32)
//      distance_lfu: score = count / (current_iter - last_access_iter + 1)^decay_exponent
//                                                                       (float32)
//    and orders all of them by score descending (stable: ties favour the lower merged index, so
//    entries in the buffer win ties against newcomers);
// 4. the top S keep or take a place: merged indices >= S in the top S are the admitted newcomers
//    ("selected", as k = index - S, in score order); entries < S outside the top S are evicted
//    ("evicted", positions in the buffer, in score order). Both lists have the same length and
//    pair up: the i-th selected newcomer takes the place of the i-th evicted entry, whose metadata
//    becomes the newcomer's.
// Empty places hold the id INT64_MAX with count 0 / last_access_iter 0 and are evicted like any
// other entry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "embedding/zch_threshold_filter.h"

namespace tzrec::embedding {

enum class ZchEvictionKind { kLfu, kLru, kDistanceLfu };

// "lfu", "lru", "distance_lfu" (the oneof names of ZeroCollisionHash.eviction_policy).
const char* zch_eviction_kind_name(ZchEvictionKind kind);

// The per-entry metadata of the sorted id buffer, [S] int64 each; a tensor the policy does not use
// is undefined.
struct ZchSlotMetadata {
  torch::Tensor counts;            // lfu, distance_lfu
  torch::Tensor last_access_iter;  // lru, distance_lfu
};

// The ids seen since the last eviction, U of them, sorted by count descending.
struct ZchCandidates {
  torch::Tensor counts;             // [U] int64
  torch::Tensor last_access_iter;   // [U] int64, the last step each id was seen (lru, distance_lfu)
  torch::Tensor matched;            // [U] bool: the id is in the buffer
  torch::Tensor matched_positions;  // [sum(matched)] int64: its position in the buffer, in order
};

struct ZchEvictionDecision {
  torch::Tensor evicted_positions;   // [E] int64, positions in the sorted buffer
  torch::Tensor selected_newcomers;  // [E] int64, indices into the unmatched candidates
};

// The common tail of every policy: merged scores [S + N] (S buffer entries, then N newcomers) →
// which entries are evicted and which newcomers take their places (step 4 above).
ZchEvictionDecision zch_select_by_scores(int64_t num_slots, const torch::Tensor& scores);

class ZchEvictionPolicy {
 public:
  virtual ~ZchEvictionPolicy() = default;

  virtual ZchEvictionKind kind() const = 0;
  bool uses_counts() const { return kind() != ZchEvictionKind::kLru; }
  bool uses_last_access_iter() const { return kind() != ZchEvictionKind::kLfu; }
  double decay_exponent() const { return decay_exponent_; }
  const std::optional<ZchThresholdFilter>& threshold_filter() const { return threshold_filter_; }

  // The merged scores of step 3, after steps 1 and 2 have updated `slots`. `newcomers` are the
  // unmatched candidates' counts / last_access_iter ([N] int64 each; undefined when unused).
  virtual torch::Tensor scores(int64_t current_iter, const ZchSlotMetadata& slots,
                               const torch::Tensor& newcomer_counts,
                               const torch::Tensor& newcomer_last_access_iter) const = 0;

  // Steps 1-4: updates `slots` (matched entries, the pinned last entry, evicted entries take the
  // newcomers' metadata) and returns the decision.
  ZchEvictionDecision update_and_select(int64_t current_iter, const ZchCandidates& candidates,
                                        ZchSlotMetadata& slots) const;

 protected:
  ZchEvictionPolicy(double decay_exponent, std::optional<ZchThresholdFilter> filter)
      : decay_exponent_(decay_exponent), threshold_filter_(std::move(filter)) {}

 private:
  double decay_exponent_;
  std::optional<ZchThresholdFilter> threshold_filter_;
};

// decay_exponent is ignored by lfu.
std::unique_ptr<ZchEvictionPolicy> make_zch_eviction_policy(
    ZchEvictionKind kind, double decay_exponent = 1.0,
    std::optional<ZchThresholdFilter> threshold_filter = std::nullopt);

}  // namespace tzrec::embedding
