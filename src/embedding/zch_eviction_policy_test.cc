#include "embedding/zch_eviction_policy.h"
#include "embedding/testing_tensors.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace tzrec::embedding {
namespace zch_eviction_policy_test {

using testing::i64;
using testing::vec;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

torch::Tensor flags(const std::vector<bool>& v) {
  std::vector<int64_t> as_int(v.begin(), v.end());
  return torch::tensor(as_int, torch::kInt64).to(torch::kBool);
}
std::vector<float> fvec(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(ZchEvictionPolicy, SelectByScoresPairsEvictedWithNewcomers) {
  // S = 4 entries, then 2 newcomers. Order by score descending, ties to the lower index:
  // 3 (MAX), 5 (7), 0 (5), 4 (3), 1 (0), 2 (0). Top 4 = {3, 5, 0, 4}: newcomers 1 then 0 are
  // admitted; entries 1 then 2 are evicted, newcomer 1 taking entry 1's place.
  const auto d = zch_select_by_scores(4, i64({5, 0, 0, kMax, 3, 7}));
  EXPECT_EQ(vec(d.selected_newcomers), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(vec(d.evicted_positions), (std::vector<int64_t>{1, 2}));

  // A newcomer tying an entry loses: scores 2, 2 | 2 keeps both entries.
  const auto tie = zch_select_by_scores(2, i64({2, 2, 2}));
  EXPECT_EQ(tie.selected_newcomers.numel(), 0);
  EXPECT_EQ(tie.evicted_positions.numel(), 0);
}

TEST(ZchEvictionPolicy, Lfu) {
  auto policy = make_zch_eviction_policy(ZchEvictionKind::kLfu);
  EXPECT_TRUE(policy->uses_counts());
  EXPECT_FALSE(policy->uses_last_access_iter());
  ZchSlotMetadata slots;
  slots.counts = i64({4, 2, 0, 0});
  // Candidates by count: 5 (new), 3 (matches entry 1), 1 (new).
  ZchCandidates c;
  c.counts = i64({5, 3, 1});
  c.matched = flags({false, true, false});
  c.matched_positions = i64({1});
  // Entry counts become 4, 5, 0, MAX; merged scores 4, 5, 0, MAX | 5, 1.
  // Order: 3, 1, 4, 0 | 5, 2 → newcomer 0 (count 5) replaces entry 2.
  const auto d = policy->update_and_select(7, c, slots);
  EXPECT_EQ(vec(d.selected_newcomers), (std::vector<int64_t>{0}));
  EXPECT_EQ(vec(d.evicted_positions), (std::vector<int64_t>{2}));
  EXPECT_EQ(vec(slots.counts), (std::vector<int64_t>{4, 5, 5, kMax}));
}

TEST(ZchEvictionPolicy, LruWithDecayExponent) {
  auto policy = make_zch_eviction_policy(ZchEvictionKind::kLru, 2.0);
  EXPECT_FALSE(policy->uses_counts());
  ZchSlotMetadata slots;
  slots.last_access_iter = i64({9, 3, 0, 0});
  ZchCandidates c;
  c.counts = i64({2, 1});
  c.last_access_iter = i64({10, 8});
  c.matched = flags({false, false});
  c.matched_positions = i64({});
  // current_iter 10; entry 3 pinned to 10. Distances 10 - t + 1: 2, 8, 11, 1 | 1, 3;
  // scores -(d^2): -4, -64, -121, -1 | -1, -9.
  slots.last_access_iter[3] = 10;
  EXPECT_EQ(fvec(policy->scores(10, slots, torch::Tensor(), i64({10, 8}))),
            (std::vector<float>{-4, -64, -121, -1, -1, -9}));
  slots.last_access_iter[3] = 0;
  // Order: 3, 4, 0, 5 | 1, 2 → newcomers 0, 1 take entries 1, 2.
  const auto d = policy->update_and_select(10, c, slots);
  EXPECT_EQ(vec(d.selected_newcomers), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(vec(d.evicted_positions), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(vec(slots.last_access_iter), (std::vector<int64_t>{9, 10, 8, 10}));
}

TEST(ZchEvictionPolicy, DistanceLfu) {
  auto policy = make_zch_eviction_policy(ZchEvictionKind::kDistanceLfu, 1.0);
  ZchSlotMetadata slots;
  slots.counts = i64({6, 1, 3, 0});
  slots.last_access_iter = i64({1, 5, 4, 0});
  // Candidates: count 4 seen last at 5 (matches entry 0), then new ids 2 @ 5 and 1 @ 3.
  ZchCandidates c;
  c.counts = i64({4, 2, 1});
  c.last_access_iter = i64({5, 5, 3});
  c.matched = flags({true, false, false});
  c.matched_positions = i64({0});
  // current_iter 5. Entries: counts 10, 1, 3, MAX; last access 5, 5, 4, 5.
  // Scores count / (5 - t + 1): 10, 1, 1.5, MAX | 2, 1/3.
  // Order: 3, 0, 4, 2 | 1, 5 → newcomer 0 replaces entry 1.
  const auto d = policy->update_and_select(5, c, slots);
  EXPECT_EQ(vec(d.selected_newcomers), (std::vector<int64_t>{0}));
  EXPECT_EQ(vec(d.evicted_positions), (std::vector<int64_t>{1}));
  EXPECT_EQ(vec(slots.counts), (std::vector<int64_t>{10, 2, 3, kMax}));
  EXPECT_EQ(vec(slots.last_access_iter), (std::vector<int64_t>{5, 5, 4, 5}));

  const auto scores = fvec(policy->scores(5, slots, i64({1}), i64({3})));
  EXPECT_FLOAT_EQ(scores[0], 10.0f);
  EXPECT_FLOAT_EQ(scores[2], 1.5f);
  EXPECT_FLOAT_EQ(scores[3], static_cast<float>(kMax));
  EXPECT_FLOAT_EQ(scores[4], 1.0f / 3.0f);
}

TEST(ZchEvictionPolicy, DecayExponentChangesTheOrder) {
  // One entry (count 5, last seen at step 1) and the sentinel; one new id seen once at step 3.
  // Exponent 1: 5 / 3 > 1 / 1, the entry stays. Exponent 10: 5 / 3^10 < 1, it is evicted.
  for (const double exponent : {1.0, 10.0}) {
    auto policy = make_zch_eviction_policy(ZchEvictionKind::kDistanceLfu, exponent);
    ZchSlotMetadata slots;
    slots.counts = i64({5, 0});
    slots.last_access_iter = i64({1, 0});
    ZchCandidates c;
    c.counts = i64({1});
    c.last_access_iter = i64({3});
    c.matched = flags({false});
    c.matched_positions = i64({});
    const auto d = policy->update_and_select(3, c, slots);
    if (exponent == 1.0) {
      EXPECT_EQ(d.evicted_positions.numel(), 0);
      EXPECT_EQ(vec(slots.counts), (std::vector<int64_t>{5, kMax}));
    } else {
      EXPECT_EQ(vec(d.evicted_positions), (std::vector<int64_t>{0}));
      EXPECT_EQ(vec(slots.counts), (std::vector<int64_t>{1, kMax}));
      EXPECT_EQ(vec(slots.last_access_iter), (std::vector<int64_t>{3, 3}));
    }
  }
  // LRU: -(3 - 1 + 1)^e for the entry against -1 for the newcomer: evicted for any exponent > 0.
  auto lru = make_zch_eviction_policy(ZchEvictionKind::kLru, 0.5);
  ZchSlotMetadata slots;
  slots.last_access_iter = i64({1, 0});
  const auto scores = fvec(lru->scores(3, slots, torch::Tensor(), i64({3})));
  EXPECT_FLOAT_EQ(scores[0], -std::sqrt(3.0f));
  EXPECT_FLOAT_EQ(scores[2], -1.0f);
}

TEST(ZchEvictionPolicy, KindNames) {
  EXPECT_STREQ(zch_eviction_kind_name(ZchEvictionKind::kLfu), "lfu");
  EXPECT_STREQ(zch_eviction_kind_name(ZchEvictionKind::kLru), "lru");
  EXPECT_STREQ(zch_eviction_kind_name(ZchEvictionKind::kDistanceLfu), "distance_lfu");
}

}  // namespace zch_eviction_policy_test
}  // namespace tzrec::embedding
