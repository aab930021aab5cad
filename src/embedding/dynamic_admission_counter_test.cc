#include "embedding/dynamic_admission_counter.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace dynamic_table {

// The counter of dynamicemb's frequency admission (KVCounter): an accumulating map with per-bucket
// eviction of the smallest count (dynamicemb's table insert with the ACCUMULATE score policy: a
// full bucket's minimum score is replaced; ties here: the smaller digest, then the smaller key).
// Expected values are computed by hand from that rule; one bucket of 16 slots (capacity 16) makes
// the bucket of every key known.

uint8_t counter_digest(int64_t key) { return dynamic_hash::digest_of(dynamic_hash::mix64(static_cast<uint64_t>(key))); }

// Of keys of equal count, the one eviction takes first.
int64_t first_evicted(std::vector<int64_t> keys) {
  return *std::min_element(keys.begin(), keys.end(), [](int64_t a, int64_t b) {
    return std::make_pair(counter_digest(a), a) < std::make_pair(counter_digest(b), b);
  });
}

// The digest scans of both hash tables, against a plain loop over the same bytes (the reference):
// every equal digest below `size` is marked or visited, in increasing order, and nothing at or past
// `size` is, whatever those bytes hold.
TEST(DynamicTableDigestScan, MarksEveryEqualDigestBelowSizeOnly) {
  // 256 digests of 0 to 3 (so that most positions match one of them), then padding that matches.
  std::vector<uint8_t> digests(256 + 64);
  uint64_t state = 12345;
  for (size_t i = 0; i < 256; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    digests[i] = static_cast<uint8_t>(state >> 62);
  }
  std::fill(digests.begin() + 256, digests.end(), uint8_t{2});
  for (uint8_t digest = 0; digest < 4; ++digest) {
    for (uint32_t offset : {0u, 3u, 64u, 190u}) {
      for (uint32_t size = 1; size <= 64 && offset + size <= 256; ++size) {
        uint64_t expected = 0;
        for (uint32_t i = 0; i < size; ++i) expected |= uint64_t{digests[offset + i] == digest} << i;
        EXPECT_EQ(dynamic_hash::digest_match_mask(digests.data() + offset, size, digest), expected)
            << "digest " << int{digest} << ", offset " << offset << ", size " << size;
      }
    }
    for (uint32_t size : {0u, 16u, 48u, 64u, 80u, 128u, 256u}) {
      std::vector<uint32_t> expected, visited;
      for (uint32_t i = 0; i < size; ++i) {
        if (digests[i] == digest) expected.push_back(i);
      }
      EXPECT_FALSE(dynamic_hash::for_each_digest_match(digests.data(), size, digest, [&](uint32_t i) {
        visited.push_back(i);
        return false;
      }));
      EXPECT_EQ(visited, expected) << "digest " << int{digest} << ", size " << size;
      // Stopping at the k-th match: visit returns true there and nothing after it is visited.
      if (expected.size() < 3) continue;
      visited.clear();
      EXPECT_TRUE(dynamic_hash::for_each_digest_match(digests.data(), size, digest, [&](uint32_t i) {
        visited.push_back(i);
        return visited.size() == 3;
      }));
      EXPECT_EQ(visited, std::vector<uint32_t>(expected.begin(), expected.begin() + 3));
    }
  }
}

TEST(DynamicTableDigestScan, RangeMaskMarksTheDigestsInTheRangeBelowSizeOnly) {
  // Every byte value, shuffled, then padding that would match; against the plain comparison.
  std::vector<uint8_t> digests(256 + 64, 200);
  for (size_t i = 0; i < 256; ++i) digests[i] = static_cast<uint8_t>(i * 167 + 13);  // 167 odd: a permutation
  for (const auto& [lo, hi] : std::vector<std::pair<uint32_t, uint32_t>>{
           {1, 16}, {16, 32}, {240, 256}, {1, 256}, {100, 101}, {7, 7}, {200, 150}, {128, 129}}) {
    for (uint32_t offset : {0u, 5u, 64u, 192u}) {
      for (uint32_t size = 1; size <= 64 && offset + size <= 256; ++size) {
        uint64_t expected = 0;
        for (uint32_t i = 0; i < size; ++i) {
          const uint32_t d = digests[offset + i];
          expected |= uint64_t{d >= lo && d < hi} << i;
        }
        EXPECT_EQ(dynamic_hash::digest_range_mask(digests.data() + offset, size, lo, hi), expected)
            << "[" << lo << ", " << hi << "), offset " << offset << ", size " << size;
      }
    }
  }
}

TEST(DynamicTableAdmissionCounter, RoundsCapacityToWholeBucketsOfSixteen) {
  // dynamicemb rounds a counter's bucket capacity up to a multiple of 16 and its capacity to whole
  // buckets: bucket 20 → 32; capacity 100 → 4 buckets of 32 = 128.
  DynamicAdmissionCounter counter(100, 20);
  EXPECT_EQ(counter.bucket_capacity(), 32);
  EXPECT_EQ(counter.capacity(), 128);
  EXPECT_EQ(counter.size(), 0);
  EXPECT_THROW(DynamicAdmissionCounter(0, 16), std::invalid_argument);
}

TEST(DynamicTableAdmissionCounter, AccumulatesAndErases) {
  DynamicAdmissionCounter counter(1024, 16);
  EXPECT_EQ(counter.add(7, 1), 1);
  EXPECT_EQ(counter.add(7, 2), 3);  // 1 + 2
  EXPECT_EQ(counter.add(-7, 1), 1);
  EXPECT_EQ(counter.count(7), 3);
  EXPECT_EQ(counter.count(8), 0);
  EXPECT_EQ(counter.size(), 2);
  counter.erase(7);
  counter.erase(12345);  // absent: no-op
  EXPECT_EQ(counter.count(7), 0);
  EXPECT_EQ(counter.count(-7), 1);
  EXPECT_EQ(counter.size(), 1);
  EXPECT_EQ(counter.add(7, 1), 1);  // counting starts again after erase
}

TEST(DynamicTableAdmissionCounter, FullBucketEvictsTheSmallestCount) {
  DynamicAdmissionCounter counter(16, 16);  // one bucket
  // Slots 0..15 hold keys 100..115 with counts 5, 1, 3, 1, 2, 2, ... (slot i: key 100 + i).
  const std::vector<int64_t> counts = {5, 1, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  for (int64_t i = 0; i < 16; ++i) counter.add(100 + i, counts[i]);
  EXPECT_EQ(counter.size(), 16);
  // Key 200: the smallest count is 1, keys 101 and 103: one of them goes (the tie-break).
  const int64_t gone = first_evicted({101, 103});
  const int64_t left = gone == 101 ? 103 : 101;
  EXPECT_EQ(counter.add(200, 4), 4);
  EXPECT_EQ(counter.count(gone), 0);
  EXPECT_EQ(counter.count(left), 1);
  EXPECT_EQ(counter.count(200), 4);
  EXPECT_EQ(counter.size(), 16);
  // Key 201: now the other count-1 key is the smallest.
  counter.add(201, 1);
  EXPECT_EQ(counter.count(left), 0);
  // Key 202: smallest is 1 (key 201 itself, just added; keys of one batch are not protected).
  counter.add(202, 7);
  EXPECT_EQ(counter.count(201), 0);
  EXPECT_EQ(counter.count(202), 7);
}

TEST(DynamicTableAdmissionCounter, SaturatesAtUint32Max) {
  DynamicAdmissionCounter counter(16, 16);
  EXPECT_EQ(counter.add(1, int64_t{1} << 40), 4294967295);
  EXPECT_EQ(counter.add(1, 5), 4294967295);
}

TEST(DynamicTableAdmissionCounter, ExportLoadRoundTrip) {
  DynamicAdmissionCounter counter(4096, 64);
  for (int64_t k = -50; k < 50; ++k) counter.add(k * 7919, 1 + (k & 3));
  const DynamicCounterState state = counter.export_state();
  ASSERT_EQ(state.keys.size(), 100u);
  for (size_t i = 1; i < state.keys.size(); ++i) EXPECT_LT(state.keys[i - 1], state.keys[i]);  // sorted by key
  DynamicAdmissionCounter other(2048, 1024);  // another layout
  EXPECT_EQ(other.load(state, "t"), 0);
  EXPECT_EQ(other.export_state().keys, state.keys);
  EXPECT_EQ(other.export_state().counts, state.counts);
}

TEST(DynamicTableAdmissionCounter, LoadKeepsTheLargestCountsOfAnOverfullBucket) {
  // 20 entries into one bucket of 16, inserted by count descending: counts 20..5 stay, 4..1 drop.
  // Equal counts: the smallest (digest, key) drop, as eviction would take them first.
  DynamicCounterState state;
  for (int64_t i = 1; i <= 20; ++i) {
    state.keys.push_back(1000 - i);
    state.counts.push_back(i);
  }
  DynamicAdmissionCounter counter(16, 16);
  EXPECT_EQ(counter.load(state, "t"), 4);
  for (int64_t i = 1; i <= 20; ++i) EXPECT_EQ(counter.count(1000 - i), i > 4 ? i : 0) << i;
  DynamicCounterState ties;
  for (int64_t k = 0; k < 18; ++k) {
    ties.keys.push_back(k);
    ties.counts.push_back(3);
  }
  EXPECT_EQ(counter.load(ties, "t"), 2);
  std::vector<int64_t> order = ties.keys;
  std::sort(order.begin(), order.end(), [](int64_t a, int64_t b) {
    return std::make_pair(counter_digest(a), a) < std::make_pair(counter_digest(b), b);
  });
  EXPECT_EQ(counter.count(order[0]), 0);
  EXPECT_EQ(counter.count(order[1]), 0);
  EXPECT_EQ(counter.count(order[2]), 3);
}

TEST(DynamicTableAdmissionCounter, BadStateIsOneLineDataError) {
  DynamicAdmissionCounter counter(16, 16);
  counter.add(5, 2);
  const auto message = [&](const DynamicCounterState& state) {
    try {
      counter.load(state, "dynamic embedding table 't'");
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{1, 2}, {1}}), "dynamic embedding table 't': the admission counter state has 2 keys but 1 counts");
  EXPECT_EQ(message({{1, 1}, {1, 2}}), "dynamic embedding table 't': the admission counter state has key 1 twice");
  EXPECT_EQ(message({{1}, {0}}),
            "dynamic embedding table 't': the admission counter state has count 0 for key 1; counts are >= 1");
  EXPECT_EQ(counter.count(5), 2);  // unchanged
}

}  // namespace dynamic_table
}  // namespace tzrec::embedding
