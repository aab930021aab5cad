#include "embedding/zch_module.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace zch_module_test {

using testing::i64;
using testing::vec;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

torch::Tensor buffer(const ZchModule& m, const std::string& name) {
  for (const auto& [n, t] : m.state()) {
    if (n == name) return t;
  }
  ADD_FAILURE() << "no buffer " << name;
  return torch::Tensor();
}
std::vector<int64_t> raw_ids(const ZchModule& m) { return vec(buffer(m, "_mch_sorted_raw_ids")); }
std::vector<int64_t> counts(const ZchModule& m) { return vec(buffer(m, "_mch_counts")); }
std::vector<int64_t> last_access(const ZchModule& m) {
  return vec(buffer(m, "_mch_last_access_iter"));
}

ZchOptions options(int64_t zch_size, int64_t interval, ZchEvictionKind kind,
                   double decay_exponent = 1.0, const std::string& filter = "") {
  ZchOptions o;
  o.zch_size = zch_size;
  o.eviction_interval = interval;
  o.eviction = kind;
  o.decay_exponent = decay_exponent;
  o.threshold_filtering_func = filter;
  return o;
}

// The expected values of the tests below marked "TorchRec" are those of
// torchrec/modules/tests/test_mc_modules.py (class TestEvictionPolicy), same inputs.

TEST(ZchModule, TorchRecLfuEviction) {  // test_lfu_eviction
  ZchModule m(options(5, 1, ZchEvictionKind::kLfu));
  EXPECT_EQ(raw_ids(m), std::vector<int64_t>(5, kMax));
  EXPECT_EQ(counts(m), std::vector<int64_t>(5, 0));
  buffer(m, "_mch_sorted_raw_ids").index_put_({torch::indexing::Slice(0, 2)}, i64({4, 5}));
  buffer(m, "_mch_counts").index_put_({torch::indexing::Slice(0, 2)}, i64({10, 1}));

  m.profile(i64({3, 4, 5, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 10}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{4, 6, 7, 8, kMax}));
  EXPECT_EQ(counts(m), (std::vector<int64_t>{11, 3, 3, 3, kMax}));

  // Beyond TorchRec's test, by hand: 6, 7, 8 took the places (and slots) of 5 and two empty
  // entries, in score order: entry 1 (id 5, slot 1) → 6, entries 2, 3 → 7, 8.
  EXPECT_EQ(vec(buffer(m, "_mch_remapped_ids_mapping")), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(vec(m.remap(i64({3, 4, 5, 6, 7, 8, 10}))), (std::vector<int64_t>{4, 0, 4, 1, 2, 3, 4}));
  const auto evicted = m.evict();
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(vec(*evicted), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(m.evict().has_value());
  EXPECT_EQ(m.open_slots(), 0);
  EXPECT_EQ(m.current_iter(), 1);
}

TEST(ZchModule, TorchRecLruEviction) {  // test_lru_eviction
  ZchModule m(options(5, 1, ZchEvictionKind::kLru, 1.0));
  EXPECT_EQ(raw_ids(m), std::vector<int64_t>(5, kMax));
  EXPECT_EQ(last_access(m), std::vector<int64_t>(5, 0));
  m.profile(i64({5, 6, 7}));
  EXPECT_EQ(m.open_slots(), 1);
  m.profile(i64({3, 4, 5}));
  EXPECT_EQ(m.open_slots(), 0);
  m.profile(i64({7, 8}));
  EXPECT_EQ(m.open_slots(), 0);
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{3, 4, 7, 8, kMax}));
  EXPECT_EQ(last_access(m), (std::vector<int64_t>{2, 2, 3, 3, 3}));
}

TEST(ZchModule, TorchRecDistanceLfuEviction) {  // test_distance_lfu_eviction
  ZchModule m(options(5, 1, ZchEvictionKind::kDistanceLfu, 1.0));
  m.profile(i64({5, 5, 5, 5, 5, 6}));
  m.profile(i64({3, 4}));
  m.profile(i64({7, 8}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{3, 5, 7, 8, kMax}));
  EXPECT_EQ(counts(m), (std::vector<int64_t>{1, 5, 1, 1, kMax}));
  EXPECT_EQ(last_access(m), (std::vector<int64_t>{2, 1, 3, 3, 3}));
}

TEST(ZchModule, TorchRecDistanceLfuEvictionFastDecay) {  // test_distance_lfu_eviction_fast_decay
  ZchModule m(options(5, 1, ZchEvictionKind::kDistanceLfu, 10.0));
  m.profile(i64({5, 5, 5, 5, 5, 6}));
  m.profile(i64({3, 4}));
  m.profile(i64({7, 8}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{3, 4, 7, 8, kMax}));
  EXPECT_EQ(counts(m), (std::vector<int64_t>{1, 1, 1, 1, kMax}));
  EXPECT_EQ(last_access(m), (std::vector<int64_t>{2, 2, 3, 3, 3}));
}

TEST(ZchModule, TorchRecDynamicThresholdFilter) {  // test_dynamic_threshold_filter
  ZchModule m(
      options(5, 1, ZchEvictionKind::kLfu, 1.0,
              "lambda tensor: dynamic_threshold_filter(tensor, threshold_skew_multiplier=0.75)"));
  m.profile(i64({5, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 2, 2, 1}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{3, 4, 5, kMax, kMax}));
  EXPECT_EQ(counts(m), (std::vector<int64_t>{3, 4, 5, 0, kMax}));
}

TEST(ZchModule, TorchRecAverageThresholdFilter) {  // test_average_threshold_filter
  ZchModule m(options(5, 1, ZchEvictionKind::kLfu, 1.0, "average_threshold_filter"));
  buffer(m, "_mch_sorted_raw_ids").index_put_({torch::indexing::Slice(0, 2)}, i64({4, 5}));
  buffer(m, "_mch_counts").index_put_({torch::indexing::Slice(0, 2)}, i64({10, 1}));
  m.profile(i64({3, 4, 5, 6, 6, 6, 7, 8, 8, 9, 10}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{4, 5, 6, 8, kMax}));
  // 4 and 5 are below the mean, so their counts are not updated either.
  EXPECT_EQ(counts(m), (std::vector<int64_t>{10, 1, 3, 2, kMax}));
}

TEST(ZchModule, TorchRecProbabilisticThresholdFilter) {  // test_probabilistic_threshold_filter
  ZchModule m(
      options(5, 1, ZchEvictionKind::kLfu, 1.0,
              "lambda tensor: probabilistic_threshold_filter(tensor, per_id_probability=0.01)"));
  std::vector<int64_t> ids;
  const std::vector<int64_t> unique_ids = {5, 4, 3, 2, 1};
  const std::vector<int64_t> id_counts = {100, 80, 60, 40, 10};
  for (size_t i = 0; i < unique_ids.size(); ++i) ids.insert(ids.end(), id_counts[i], unique_ids[i]);
  torch::manual_seed(42);  // TorchRec draws from torch's default generator
  for (int step = 0; step < 10; ++step) m.profile(i64(ids));
  std::vector<int64_t> got = raw_ids(m);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int64_t>{2, 3, 4, 5, kMax}));
}

TEST(ZchModule, RemapFollowsSlotsAcrossEvictions) {
  // By hand, LFU, S = 4, eviction every step.
  ZchModule m(options(4, 1, ZchEvictionKind::kLfu));
  // Unknown ids map to the sentinel's slot S - 1 before any eviction. The raw id INT64_MAX is the
  // empty marker: it matches the first empty entry (slot 0 here), as in TorchRec.
  EXPECT_EQ(vec(m.remap(i64({1, 2, kMax}))), (std::vector<int64_t>{3, 3, 0}));

  // Step 1: candidates by count 20 (3), 30 (2), 10 (1) take entries 0, 1, 2 → slots 0, 1, 2.
  EXPECT_EQ(vec(m.forward(i64({30, 30, 10, 20, 20, 20}), /*training=*/true)),
            (std::vector<int64_t>{1, 1, 2, 0, 0, 0}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{10, 20, 30, kMax}));
  EXPECT_EQ(vec(buffer(m, "_mch_remapped_ids_mapping")), (std::vector<int64_t>{2, 0, 1, 3}));
  EXPECT_EQ(counts(m), (std::vector<int64_t>{1, 3, 2, kMax}));
  EXPECT_EQ(m.open_slots(), 0);

  // Step 2: 40 (2) beats 10 (1) and takes its slot 2; 50 (1) ties 10's count and loses.
  EXPECT_EQ(vec(m.forward(i64({40, 40, 50}), true)), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{20, 30, 40, kMax}));
  EXPECT_EQ(vec(buffer(m, "_mch_remapped_ids_mapping")), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(vec(m.remap(i64({10, 20, 30, 40, 50}))), (std::vector<int64_t>{3, 0, 1, 2, 3}));

  // evict() was not called in between: the slots of both evictions, distinct and sorted.
  const auto evicted = m.evict();
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(vec(*evicted), (std::vector<int64_t>{0, 1, 2}));

  // Evaluation neither counts steps nor changes the buffer.
  EXPECT_EQ(vec(m.forward(i64({50, 50, 50, 50}), /*training=*/false)),
            (std::vector<int64_t>{3, 3, 3, 3}));
  EXPECT_EQ(m.current_iter(), 2);
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{20, 30, 40, kMax}));
  EXPECT_FALSE(m.evict().has_value());

  // An eviction that replaces nothing still reports (an empty list), as TorchRec.
  m.profile(i64({20}));
  const auto none = m.evict();
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->numel(), 0);
}

TEST(ZchModule, EvictionIntervalCoalescesSeveralSteps) {
  // By hand, LRU, S = 3, eviction every 2 steps. At step 2 the history holds 1 @1, 2 @1, 2 @2,
  // 3 @2 → ids by count 2 (last 2), 1 (last 1), 3 (last 2). Distances 2 - t + 1: entries 3, 3,
  // sentinel 1 | newcomers 1, 2, 1 → ids 2 and 3 take entries 0 and 1; 1 is left out.
  ZchModule m(options(3, 2, ZchEvictionKind::kLru));
  EXPECT_EQ(vec(m.forward(i64({1, 2}), true)), (std::vector<int64_t>{2, 2}));
  EXPECT_FALSE(m.evict().has_value());
  EXPECT_EQ(vec(m.forward(i64({2, 3}), true)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{2, 3, kMax}));
  EXPECT_EQ(last_access(m), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(vec(m.remap(i64({1, 2, 3}))), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(vec(*m.evict()), (std::vector<int64_t>{0, 1}));
}

TEST(ZchModule, HistoryIsSizedByTheFirstBatch) {
  // int(2 * 1 * 1.25) = 2 ids per interval: of the second batch only 3 and 4 are recorded.
  ZchModule m(options(5, 1, ZchEvictionKind::kLfu));
  m.profile(i64({1, 2}));
  m.profile(i64({3, 4, 5, 6}));
  EXPECT_EQ(raw_ids(m), (std::vector<int64_t>{1, 2, 3, 4, kMax}));
  EXPECT_EQ(vec(m.remap(i64({5, 6}))), (std::vector<int64_t>{4, 4}));
}

TEST(ZchModule, EmptyFirstBatchLeavesNoHistory) {
  // As TorchRec: the history is sized by the first batch, int(0 * 2 * 1.25) = 0, so no id is ever
  // admitted; every eviction runs on no ids (the dynamic filter, which TorchRec would divide by
  // zero on, admits none) and reports no rows.
  ZchModule m(options(4, 2, ZchEvictionKind::kDistanceLfu, 1.0, "dynamic_threshold_filter"));
  m.profile(i64({}));
  m.profile(i64({1, 1, 2}));
  ASSERT_TRUE(m.evict().has_value());
  m.profile(i64({1, 1, 2}));
  m.profile(i64({1, 1, 2}));
  EXPECT_EQ(m.evict()->numel(), 0);
  EXPECT_EQ(raw_ids(m), std::vector<int64_t>(4, kMax));
  EXPECT_EQ(m.open_slots(), 3);
  EXPECT_EQ(m.current_iter(), 4);
}

TEST(ZchModule, OutputOffset) {
  ZchOptions o = options(3, 1, ZchEvictionKind::kLfu);
  o.output_global_offset = 100;
  o.output_segments = {0, 100, 103};
  ZchModule m(o);
  EXPECT_EQ(vec(m.remap(i64({7}))), (std::vector<int64_t>{102}));
  EXPECT_EQ(vec(m.forward(i64({7, 7, 8}), true)), (std::vector<int64_t>{100, 100, 101}));
  EXPECT_EQ(vec(*m.evict()), (std::vector<int64_t>{100, 101}));
  const auto segments = vec(buffer(m, "_output_segments_tensor"));
  ASSERT_EQ(segments.size(), 1025u);
  EXPECT_EQ(std::vector<int64_t>(segments.begin(), segments.begin() + 4),
            (std::vector<int64_t>{0, 100, 103, -1}));
}

TEST(ZchModule, StateNamesAndRestore) {
  ZchModule a(options(4, 2, ZchEvictionKind::kDistanceLfu, 1.0));
  std::vector<std::string> names;
  for (const auto& [n, t] : a.state()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"_output_segments_tensor", "_current_iter_tensor",
                                             "_mch_sorted_raw_ids", "_mch_remapped_ids_mapping",
                                             "_mch_counts", "_mch_last_access_iter"}));
  ZchModule lfu(options(4, 2, ZchEvictionKind::kLfu));
  EXPECT_EQ(lfu.state().size(), 5u);
  EXPECT_EQ(lfu.state().back().first, "_mch_counts");
  ZchModule lru(options(4, 2, ZchEvictionKind::kLru));
  EXPECT_EQ(lru.state().back().first, "_mch_last_access_iter");

  a.profile(i64({5, 5, 6}));
  a.profile(i64({7, 6, 6}));  // eviction at step 2
  std::map<std::string, torch::Tensor> saved;
  for (const auto& [n, t] : a.state()) saved[n] = t.clone();
  EXPECT_EQ(vec(saved["_current_iter_tensor"]), (std::vector<int64_t>{2}));

  ZchModule b(options(4, 2, ZchEvictionKind::kDistanceLfu, 1.0));
  b.load_state(saved, "model.ckpt-2");
  EXPECT_EQ(b.current_iter(), 2);
  const torch::Tensor probe = i64({5, 6, 7, 8});
  EXPECT_TRUE(torch::equal(a.remap(probe), b.remap(probe)));
  // Both continue alike: the next eviction is two steps later.
  for (ZchModule* m : {&a, &b}) {
    m->evict();
    m->profile(i64({8, 8, 8}));
    m->profile(i64({8, 9, 9}));
  }
  EXPECT_EQ(raw_ids(a), raw_ids(b));
  EXPECT_EQ(counts(a), counts(b));
  EXPECT_EQ(last_access(a), last_access(b));
  EXPECT_TRUE(torch::equal(*a.evict(), *b.evict()));

  // Mismatches are checkpoint errors.
  ZchModule c(options(5, 2, ZchEvictionKind::kDistanceLfu, 1.0));
  EXPECT_THROW(c.load_state(saved, "model.ckpt-2"), CheckpointError);
  auto missing = saved;
  missing.erase("_mch_counts");
  ZchModule d(options(4, 2, ZchEvictionKind::kDistanceLfu, 1.0));
  EXPECT_THROW(d.load_state(missing, "model.ckpt-2"), CheckpointError);
  ZchOptions shifted = options(4, 2, ZchEvictionKind::kDistanceLfu, 1.0);
  shifted.output_global_offset = 4;
  ZchModule e(shifted);
  EXPECT_THROW(e.load_state(saved, "model.ckpt-2"), CheckpointError);
}

TEST(ZchModule, RejectsBadOptions) {
  EXPECT_THROW(ZchModule(options(0, 1, ZchEvictionKind::kLfu)), ConfigError);
  EXPECT_THROW(ZchModule(options(4, 0, ZchEvictionKind::kLfu)), ConfigError);
  ZchOptions o = options(4, 1, ZchEvictionKind::kLru, 1.0, "lambda x: x.topk(3)");
  o.field_path = "feature_configs[0].id_feature.zch";
  try {
    ZchModule m(o);
    ADD_FAILURE() << "accepted a bad threshold_filtering_func";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("feature_configs[0].id_feature.zch.threshold_filtering_func: "
                                   "cannot parse threshold_filtering_func 'lambda x: x.topk(3)'"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace zch_module_test
}  // namespace tzrec::embedding
