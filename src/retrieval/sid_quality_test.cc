// SID quality metrics (retrieval/sid_quality.h). Expected values are worked out by hand from the
// definitions in the header (TorchEasyRec's tzrec/utils/sid/quality.py); the two Gini vectors with
// values other than 0 are the ones TorchEasyRec's quality tests use ([3, 2, 1, 1, 1] → 0.25).
#include "retrieval/sid_quality.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::retrieval {
namespace sid_quality_test {

TEST(SidQuality, Gini) {
  EXPECT_DOUBLE_EQ(sid_gini({2, 2, 2, 2}), 0.0);
  // Ascending 1, 1, 1, 2, 3 with ranks 5..1: 6/5 − 2 · 19 / (5 · 8) = 0.25.
  EXPECT_DOUBLE_EQ(sid_gini({3, 2, 1, 1, 1}), 0.25);
  EXPECT_DOUBLE_EQ(sid_gini({}), 0.0);
  EXPECT_DOUBLE_EQ(sid_gini({0, 0}), 0.0);
  // One bucket holding everything of n = 2: 3/2 − 2 · (0 · 2 + 4 · 1) / (2 · 4) = 0.5.
  EXPECT_DOUBLE_EQ(sid_gini({4, 0}), 0.5);
}

TEST(SidQuality, Entropy) {
  EXPECT_EQ(sid_entropy({}), 0.0);
  EXPECT_EQ(sid_entropy({0, 0}), 0.0);
  EXPECT_NEAR(sid_entropy({5, 5, 5, 5}), std::log(4.0), 1e-15);
  EXPECT_NEAR(sid_entropy({7, 0}), 0.0, 1e-15);
}

// Seven items over codebook {4, 3}: (0,0) ×3, (1,2) ×2, (2,0), (3,2).
TEST(SidQuality, MetricsOfSevenItems) {
  SidQualityAccumulator acc({4, 3}, /*top_sids=*/3);
  const int64_t items[][2] = {{0, 0}, {1, 2}, {0, 0}, {3, 2}, {1, 2}, {2, 0}, {0, 0}};
  for (const auto& item : items) acc.add(item);
  EXPECT_EQ(acc.total(), 7);
  const SidQualityResult r = acc.finalize();
  const SidQualityMetrics& m = r.metrics;
  EXPECT_EQ(m.total, 7);
  EXPECT_EQ(m.unique_sid, 4);
  EXPECT_DOUBLE_EQ(m.no_collision_rate, 4.0 / 7);
  EXPECT_DOUBLE_EQ(m.uniquely_identified_item_rate, 2.0 / 7);
  EXPECT_EQ(m.max_collision, 3);
  // Bucket sizes ascending 1, 1, 2, 3 with ranks 4..1: 5/4 − 2 · 14 / (4 · 7) = 0.25.
  EXPECT_DOUBLE_EQ(m.gini, 0.25);
  // Σ (c/7) ln(7/c) = ln 7 − (3 ln 3 + 2 ln 2) / 7.
  const double h = std::log(7.0) - (3 * std::log(3.0) + 2 * std::log(2.0)) / 7;
  EXPECT_NEAR(m.entropy, h, 1e-15);
  EXPECT_NEAR(m.max_entropy, std::log(12.0), 1e-15);
  EXPECT_NEAR(m.entropy_ratio, h / std::log(12.0), 1e-15);
  ASSERT_EQ(r.layer_metrics.size(), 2u);
  // Layer 0: codes 0 ×3, 1 ×2, 2, 3: every code used, the same counts as the buckets.
  EXPECT_EQ(r.layer_metrics[0].layer, 0);
  EXPECT_EQ(r.layer_metrics[0].codebook_size, 4);
  EXPECT_DOUBLE_EQ(r.layer_metrics[0].coverage, 1.0);
  EXPECT_EQ(r.layer_metrics[0].dead_codes, 0);
  EXPECT_NEAR(r.layer_metrics[0].perplexity, std::exp(h), 1e-13);
  // Layer 1: codes 0 ×4, 2 ×3; code 1 unused.
  EXPECT_EQ(r.layer_metrics[1].codebook_size, 3);
  EXPECT_DOUBLE_EQ(r.layer_metrics[1].coverage, 2.0 / 3);
  EXPECT_EQ(r.layer_metrics[1].dead_codes, 1);
  EXPECT_NEAR(r.layer_metrics[1].perplexity, std::exp(std::log(7.0) - (8 * std::log(2.0) + 3 * std::log(3.0)) / 7),
              1e-13);
  // Most frequent first; the two single items in ascending bucket order ((2,0) = 6 before (3,2) = 11).
  ASSERT_TRUE(r.top_sids.has_value());
  EXPECT_EQ(*r.top_sids, (std::vector<std::pair<std::string, int64_t>>{{"0,0", 3}, {"1,2", 2}, {"2,0", 1}}));
  EXPECT_THROW(acc.finalize(), UsageError);
}

TEST(SidQuality, EveryBucketOnceAndCapacityOne) {
  SidQualityAccumulator all({2, 2});
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 2; ++b) {
      const int64_t c[] = {a, b};
      all.add(c);
    }
  }
  const SidQualityResult r = all.finalize();
  EXPECT_EQ(r.metrics.unique_sid, 4);
  EXPECT_EQ(r.metrics.max_collision, 1);
  EXPECT_EQ(r.metrics.no_collision_rate, 1.0);
  EXPECT_DOUBLE_EQ(r.metrics.gini, 0.0);
  EXPECT_NEAR(r.metrics.entropy_ratio, 1.0, 1e-15);
  EXPECT_FALSE(r.top_sids.has_value());

  SidQualityAccumulator one({1});
  const int64_t zero[] = {0};
  one.add(zero);
  one.add(zero);
  const SidQualityResult o = one.finalize();
  EXPECT_EQ(o.metrics.max_entropy, 0.0);
  EXPECT_TRUE(std::isnan(o.metrics.entropy_ratio));
  EXPECT_EQ(o.layer_metrics[0].coverage, 1.0);
  EXPECT_EQ(o.layer_metrics[0].perplexity, 1.0);
}

TEST(SidQuality, Errors) {
  SidQualityAccumulator empty({4});
  EXPECT_THROW(empty.finalize(), DataError);
  EXPECT_THROW(SidQualityAccumulator({}), UsageError);
  EXPECT_THROW(SidQualityAccumulator({4, 0}), UsageError);
  // 2^32 · 2^32 = 2^64 does not fit int64; the message gives the exact product.
  try {
    check_sid_codebook({int64_t{1} << 32, int64_t{1} << 32});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(product = 18446744073709551616) exceeds int64"), std::string::npos)
        << e.what();
  }
  check_sid_codebook({int64_t{1} << 31, int64_t{1} << 31});  // 2^62 fits
}

TEST(SidQuality, CompareSubtractsAfterMinusBefore) {
  SidQualityAccumulator before({4}), after({4});
  const int64_t codes_before[] = {0, 0, 1, 1}, codes_after[] = {0, 1, 2, 3};
  for (int i = 0; i < 4; ++i) {
    before.add(&codes_before[i]);
    after.add(&codes_after[i]);
  }
  const SidQualityResult b = before.finalize(), a = after.finalize();
  const SidQualityResult d = compare_sid_quality(b, a);
  EXPECT_EQ(d.metrics.total, 0);
  EXPECT_EQ(d.metrics.unique_sid, 2);                // 4 − 2
  EXPECT_DOUBLE_EQ(d.metrics.no_collision_rate, 0.5);  // 1 − 1/2
  EXPECT_EQ(d.metrics.max_collision, -1);            // 1 − 2
  EXPECT_NEAR(d.metrics.entropy, std::log(4.0) - std::log(2.0), 1e-15);
  EXPECT_EQ(d.metrics.max_entropy, 0.0);
  ASSERT_EQ(d.layer_metrics.size(), 1u);
  EXPECT_EQ(d.layer_metrics[0].codebook_size, 4);
  EXPECT_EQ(d.layer_metrics[0].dead_codes, -2);
  EXPECT_DOUBLE_EQ(d.layer_metrics[0].coverage, 0.5);
  EXPECT_NEAR(d.layer_metrics[0].perplexity, 2.0, 1e-13);
  EXPECT_FALSE(d.top_sids.has_value());

  SidQualityAccumulator fewer({4});
  fewer.add(codes_after);
  EXPECT_THROW(compare_sid_quality(b, fewer.finalize()), DataError);
}

}  // namespace sid_quality_test
}  // namespace tzrec::retrieval
