#include "embedding/dynamic_table.h"
#include "embedding/id_owner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace dynamic_table {

// Expected values are hand-computed from the rules in dynamic_table.h, which follow dynamicemb
// (NVIDIA recsys-examples corelib/dynamicemb): a full bucket evicts its minimum score, the first
// slot on ties (the table kernels' reduction keeps the first strictly smaller score); STEP and
// TIMESTAMP assign the step / time on every lookup and insert, LFU accumulates the occurrences
// (dynamicemb's segmented unique counts duplicates) and a new key starts at its occurrences in the
// batch; keys of the batch in flight are pinned (their reference counter) and never evicted by it;
// frequency admission admits a key once its accumulated count reaches the threshold and erases it
// from the counter. Ties of the minimum evict the smallest row (dynamic_table.h: dynamicemb's tie
// order is its slot order). Tables of one bucket of 16 slots make every key's bucket known.

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

DynamicTableOptions options(int64_t max_capacity, DynamicScoreStrategy strategy = DynamicScoreStrategy::kStep,
                            int64_t bucket_capacity = 16) {
  DynamicTableOptions o;
  o.max_capacity = max_capacity;
  o.bucket_capacity = bucket_capacity;
  o.score_strategy = strategy;
  o.field_path = "feature_configs[3].id_feature.dynamicemb";
  o.table_name = "t";
  return o;
}

DynamicTableLookup call(DynamicTable& table, const std::vector<int64_t>& ids, int64_t step, int64_t time_ms = 0) {
  return table.find_or_insert(ids.data(), ids.size(), step, time_ms);
}

std::vector<int64_t> find(const DynamicTable& table, const std::vector<int64_t>& ids) {
  std::vector<int64_t> rows(ids.size());
  table.find(ids.data(), ids.size(), rows.data());
  return rows;
}

// key → score, from export_state().
std::map<int64_t, int64_t> scores(const DynamicTable& table) {
  const DynamicTableState s = table.export_state();
  std::map<int64_t, int64_t> out;
  for (size_t i = 0; i < s.keys.size(); ++i) out[s.keys[i]] = s.scores[i];
  return out;
}

using V = std::vector<int64_t>;

// The digest of a key (the low byte of its hash): the admission counter's first tie-break.
uint8_t key_digest(int64_t key) { return dynamic_hash::digest_of(dynamic_hash::mix64(static_cast<uint64_t>(key))); }

TEST(DynamicTable, InsertLookupDuplicatesAnyInt64) {
  DynamicTable table(options(1000));
  // Rows are handed out 0, 1, 2, ... in first-occurrence order; duplicates share the row.
  auto r = call(table, {5, 7, 5, -3, kMin, kMax}, 1);
  EXPECT_EQ(r.rows, (V{0, 1, 0, 2, 3, 4}));
  EXPECT_EQ(r.new_keys, (V{5, 7, -3, kMin, kMax}));
  EXPECT_EQ(r.new_rows, (V{0, 1, 2, 3, 4}));
  EXPECT_TRUE(r.evicted_keys.empty());
  EXPECT_EQ(r.num_rows, 5);
  EXPECT_EQ(r.capacity, 1008);  // 1000 rounded up to whole buckets of 16
  r = call(table, {7, 8}, 2);
  EXPECT_EQ(r.rows, (V{1, 5}));
  EXPECT_EQ(r.new_keys, (V{8}));
  EXPECT_EQ(table.size(), 6);
  // find: existing rows, -1 otherwise, and no state change (scores stay).
  const auto before = scores(table);
  EXPECT_EQ(find(table, {5, 8, 9, kMax}), (V{0, 5, -1, 4}));
  EXPECT_EQ(scores(table), before);
  EXPECT_EQ(table.size(), 6);
  // Empty batch.
  r = call(table, {}, 3);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.num_rows, 6);
}

TEST(DynamicTable, EmptySlotsMatchNoKeyWhateverItsDigest) {
  // The probe scans a whole bucket's digests (dynamic_table.h: empty slots are digest 0, which no
  // key has). Keys whose hash's low byte is 0 (digest 1 in the table, as the keys with low byte 1)
  // and key 0 (an empty slot's key) must be found exactly when inserted: the empty slots of a
  // partly filled bucket (one bucket of 16 slots here) hold key 0 and digest 0.
  std::vector<int64_t> zero_digest, one_digest;
  for (int64_t k = 1; zero_digest.size() < 3 || one_digest.size() < 3; ++k) {
    if (key_digest(k) == 0 && zero_digest.size() < 3) zero_digest.push_back(k);
    if (key_digest(k) == 1 && one_digest.size() < 3) one_digest.push_back(k);
  }
  DynamicTable table(options(16));
  call(table, {zero_digest[0], one_digest[0], zero_digest[1]}, 1);
  EXPECT_EQ(find(table, {zero_digest[0], one_digest[0], zero_digest[1]}), (V{0, 1, 2}));
  EXPECT_EQ(find(table, {0, zero_digest[2], one_digest[1], one_digest[2]}), (V{-1, -1, -1, -1}));
  table.set_probe_threads(2);
  EXPECT_EQ(call(table, {0, zero_digest[2], one_digest[0], 0}, 2).rows, (V{3, 4, 1, 3}));
  EXPECT_EQ(find(table, {0, zero_digest[2], one_digest[1]}), (V{3, 4, -1}));
}

TEST(DynamicTable, KeysSharingADigestAreToldApart) {
  // Five keys of one digest in one bucket (16 slots): a probe meets 0 to 4 false digest matches
  // before its key (the probe fetches the first match's key, then scans the bucket again), and an
  // absent key of that digest meets all of them.
  std::vector<int64_t> same;
  for (int64_t k = 1; same.size() < 6; ++k) {
    if (key_digest(k) == 77) same.push_back(k);
  }
  DynamicTable table(options(16));
  call(table, {same[0], same[1], same[2], 5, same[3], same[4]}, 1);
  EXPECT_EQ(find(table, {same[4], same[3], same[2], same[1], same[0], same[5], 5}), (V{5, 4, 2, 1, 0, -1, 3}));
  EXPECT_EQ(call(table, {same[5], same[3], same[0]}, 2).rows, (V{6, 4, 0}));
}

TEST(DynamicTable, KeysEqualInHalfTheirBitsAreToldApart) {
  // A probe compares a home line's four 64-bit keys at once, 32 bits at a time (both halves must
  // match). Keys equal in their low 32 bits, keys equal in their high 32 bits, and -1 next to
  // 0xffffffff and its complement, in one bucket of 16 slots (two home lines a half): each is
  // found at its own row (rows in insertion order), and absent keys sharing a half with them are
  // not found.
  const int64_t high = int64_t{1} << 32;
  const V keys = {7,        7 + high,  7 + 2 * high, 7 - high, 5 * high, 5 * high + 1, 5 * high + 2,
                  5 * high - 1, -1,        0xffffffffLL, ~0xffffffffLL};
  DynamicTable table(options(16));
  EXPECT_EQ(call(table, keys, 1).rows, (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(find(table, keys), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(find(table, {7 + 3 * high, 5 * high + 3, 6 * high, 7 + 5 * high, -2, 0xfffffffeLL}),
            (V{-1, -1, -1, -1, -1, -1}));
}

// The home half of a key (dynamic_table.h: a bucket is two halves, the hash picks a key's home
// half; here bit 8 of the hash, as the table takes it).
uint32_t key_home(int64_t key) { return static_cast<uint32_t>(dynamic_hash::mix64(static_cast<uint64_t>(key)) >> 8) & 1u; }

// The first `count` keys from `from` up whose home half is `home`.
V keys_of_home(uint32_t home, size_t count, int64_t from) {
  V keys;
  for (int64_t k = from; keys.size() < count; ++k) {
    if (key_home(k) == home) keys.push_back(k);
  }
  return keys;
}

TEST(DynamicTable, KeysAwayFromTheirHomeHalfAreFound) {
  // One bucket of 16: halves of 8. Twelve keys of home half 0 — eight at home, four displaced
  // into half 1 — then four of home half 1 fill the bucket. Rows, scores and eviction are the
  // bucket's (hand-computed as in the other tests); every key is found wherever it sits.
  const V home0 = keys_of_home(0, 13, 1000);
  const V home1 = keys_of_home(1, 6, 1000);
  DynamicTable table(options(16));
  V first(home0.begin(), home0.begin() + 12);
  EXPECT_EQ(call(table, first, 1).rows, (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(find(table, first), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  // Absent keys of either home: not found (home 0 has keys away: its probe scans both halves).
  EXPECT_EQ(find(table, {home0[12], home1[0], home1[5]}), (V{-1, -1, -1}));
  EXPECT_EQ(call(table, {home1[0], home1[1], home1[2], home1[3]}, 2).rows, (V{12, 13, 14, 15}));
  table.set_probe_threads(2);
  EXPECT_EQ(find(table, {home0[11], home1[3], home0[0], home0[8]}), (V{11, 15, 0, 8}));
  // Step 3, a new key of home 1: the bucket is full; the smallest score is 1, its smallest row 0
  // (home0[0], in half 0, not the new key's home). A key of home 0 living in half 1 goes home to
  // that slot and the new key takes its place in half 1; the new key gets row 0.
  auto r = call(table, {home1[4]}, 3);
  EXPECT_EQ(r.evicted_keys, (V{home0[0]}));
  EXPECT_EQ(r.rows, (V{0}));
  V all = {home1[4], home0[1], home0[2], home0[3], home0[4], home0[5], home0[6], home0[7],
           home0[8], home0[9], home0[10], home0[11], home1[0], home1[1], home1[2], home1[3]};
  EXPECT_EQ(find(table, all), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(find(table, {home0[0]}), (V{-1}));
  // Step 4, a new key of home 0: the smallest score is still 1, row 1 (home0[1], at home).
  r = call(table, {home0[12]}, 4);
  EXPECT_EQ(r.evicted_keys, (V{home0[1]}));
  EXPECT_EQ(r.rows, (V{1}));
  all[1] = home0[12];
  EXPECT_EQ(find(table, all), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  // Export and load (another table rebuilds the halves from the keys alone): the same lookups.
  DynamicTable copy(options(16));
  copy.load(table.export_state(), DynamicRowMode::kKeep);
  EXPECT_EQ(find(copy, all), find(table, all));
  EXPECT_EQ(copy.export_state().scores, table.export_state().scores);
}

// The home line of a key among the `lines` lines of its home half (dynamic_table.h: lines of 4
// slots, the line (d · lines) >> 8 of its digest d, the hash's low byte with 0 taken as 1).
uint32_t key_home_line(int64_t key, uint32_t lines) {
  const uint32_t d = std::max<uint32_t>(key_digest(key), 1);
  return d * lines >> 8;
}

// The first `count` keys from `from` up of home half `home` and home line `line` of `lines`.
V keys_of_line(uint32_t home, uint32_t line, uint32_t lines, size_t count, int64_t from) {
  V keys;
  for (int64_t k = from; keys.size() < count; ++k) {
    if (key_home(k) == home && key_home_line(k, lines) == line) keys.push_back(k);
  }
  return keys;
}

TEST(DynamicTable, KeysAwayFromTheirHomeLineAreFound) {
  // One bucket of 32: halves of 16, four lines of 4 each. Five keys of line 0 of half 0: four at
  // home, the fifth in the first empty slot of the half (line 1). Rows are the bucket's.
  const V a = keys_of_line(0, 0, 4, 6, 1);
  const V b = keys_of_line(0, 1, 4, 5, 1);
  DynamicTable table(options(32, DynamicScoreStrategy::kStep, 32));
  ASSERT_EQ(table.num_buckets(), 1);
  const V a5(a.begin(), a.begin() + 5);
  EXPECT_EQ(call(table, a5, 1).rows, (V{0, 1, 2, 3, 4}));
  DynamicIndexStats stats = table.index_stats();
  EXPECT_EQ(stats.keys, 5);
  EXPECT_EQ(stats.at_home_line, 4);
  EXPECT_EQ(find(table, a5), (V{0, 1, 2, 3, 4}));
  // Absent: a key of line 1, which has empty slots (so no key of it lives elsewhere), and one of
  // the full line 0, whose probe scans the half.
  EXPECT_EQ(find(table, {b[0], a[5]}), (V{-1, -1}));
  // Three keys of line 1 go home next to a[4].
  EXPECT_EQ(call(table, {b[0], b[1], b[2]}, 2).rows, (V{5, 6, 7}));
  EXPECT_EQ(table.index_stats().at_home_line, 7);
  // The fourth finds line 1 full: a[4], not at home there, moves to the next empty slot of the
  // half (line 2) and b[3] takes its slot — eight of nine keys at home (seven without the move).
  EXPECT_EQ(call(table, {b[3]}, 3).rows, (V{8}));
  stats = table.index_stats();
  EXPECT_EQ(stats.keys, 9);
  EXPECT_EQ(stats.at_home_line, 8);
  EXPECT_EQ(stats.displaced, 0);
  const V all = {a[0], a[1], a[2], a[3], a[4], b[0], b[1], b[2], b[3]};
  table.set_probe_threads(2);
  EXPECT_EQ(find(table, all), (V{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(find(table, {b[4], a[5]}), (V{-1, -1}));
  // Rebuilt from its entries, another table places them as inserts would.
  DynamicTable copy(options(32, DynamicScoreStrategy::kStep, 32));
  copy.load(table.export_state(), DynamicRowMode::kKeep);
  EXPECT_EQ(find(copy, all), find(table, all));
  EXPECT_EQ(copy.index_stats().at_home_line, 8);
}

TEST(DynamicTable, EvictionsBringKeysHome) {
  // One bucket of 16: lines (half, line) of 4 slots, two per half. Step 1: five keys of (0, 0),
  // the fifth in (0, 1); step 2: three keys of (0, 1) and the four of (1, 0) and (1, 1) each.
  // The bucket is full, 15 keys at home. The oldest score is 1, its smallest row 0: a[0], in
  // (0, 0).
  const V a = keys_of_line(0, 0, 2, 5, 1);
  const V b = keys_of_line(0, 1, 2, 4, 1);
  const V c = keys_of_line(1, 0, 2, 4, 1);
  const V d = keys_of_line(1, 1, 2, 5, 1);
  const auto filled = [&] {
    DynamicTable table(options(16));
    call(table, a, 1);
    call(table, {b[0], b[1], b[2], c[0], c[1], c[2], c[3], d[0], d[1], d[2], d[3]}, 2);
    EXPECT_EQ(table.size(), 16);
    EXPECT_EQ(table.index_stats().at_home_line, 15);
    return table;
  };
  const V rest = {a[1], a[2], a[3], a[4], b[0], b[1], b[2], c[0], c[1], c[2], c[3], d[0], d[1], d[2], d[3]};
  const V rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  {
    // b[3] evicts a[0]: a[4], in b[3]'s home line but not its own, goes home to a[0]'s slot and
    // b[3] takes its place — all 16 at home.
    DynamicTable table = filled();
    auto r = call(table, {b[3]}, 3);
    EXPECT_EQ(r.evicted_keys, (V{a[0]}));
    EXPECT_EQ(r.rows, (V{0}));
    const DynamicIndexStats stats = table.index_stats();
    EXPECT_EQ(stats.at_home_line, 16);
    EXPECT_EQ(stats.displaced, 0);
    EXPECT_EQ(find(table, rest), rows);
    EXPECT_EQ(find(table, {b[3], a[0]}), (V{0, -1}));
  }
  {
    // d[4] evicts a[0]: its home line (1, 1) holds only its own keys, so it cannot live at home;
    // a[4] goes home to a[0]'s slot and d[4] takes a[4]'s, displaced into half 0 — 15 at home
    // (14 with d[4] in a[0]'s slot).
    DynamicTable table = filled();
    auto r = call(table, {d[4]}, 3);
    EXPECT_EQ(r.evicted_keys, (V{a[0]}));
    const DynamicIndexStats stats = table.index_stats();
    EXPECT_EQ(stats.at_home_line, 15);
    EXPECT_EQ(stats.displaced, 1);
    EXPECT_EQ(find(table, rest), rows);
    EXPECT_EQ(find(table, {d[4], a[0]}), (V{0, -1}));
    // The displaced key is found (its home half counts it away) and stays found after a reload.
    DynamicTable copy(options(16));
    copy.load(table.export_state(), DynamicRowMode::kKeep);
    EXPECT_EQ(find(copy, rest), rows);
    EXPECT_EQ(find(copy, {d[4]}), (V{0}));
  }
}

TEST(DynamicTable, KeysMetTwiceInACallMoveIntoTheirHomeLine) {
  // One bucket of 16: lines (half, line) of 4 slots, two per half. Step 1: five keys of (0, 0),
  // the fifth (a[4]) in (0, 1); step 2: four keys of (0, 1), three at home next to a[4] and the
  // fourth (b[3]) displaced into half 1 (half 0 is full, and a[4] may not leave its home half).
  // Seven of nine keys at home, one displaced.
  const V a = keys_of_line(0, 0, 2, 5, 1);
  const V b = keys_of_line(0, 1, 2, 4, 1);
  const V all = {a[0], a[1], a[2], a[3], a[4], b[0], b[1], b[2], b[3]};
  const V rows = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto filled = [&](DynamicScoreStrategy strategy) {
    DynamicTable table(options(16, strategy));
    call(table, {a[0], a[1], a[2], a[3], a[4]}, 1);
    call(table, b, 2);
    const DynamicIndexStats stats = table.index_stats();
    EXPECT_EQ(stats.keys, 9);
    EXPECT_EQ(stats.at_home_line, 7);
    EXPECT_EQ(stats.displaced, 1);
    return table;
  };
  {
    // Met once in a call: it stays away.
    DynamicTable table = filled(DynamicScoreStrategy::kStep);
    EXPECT_EQ(call(table, {b[3], b[0]}, 3).rows, (V{8, 5}));
    EXPECT_EQ(table.index_stats().at_home_line, 7);
    // Met twice: b[3] trades places with a[4], which lives in (0, 1) away from its own line; a[4]
    // is now displaced into half 1 (b[3] no longer is), and every key keeps its row.
    EXPECT_EQ(call(table, {b[3], b[1], b[3]}, 4).rows, (V{8, 6, 8}));
    DynamicIndexStats stats = table.index_stats();
    EXPECT_EQ(stats.at_home_line, 8);
    EXPECT_EQ(stats.displaced, 1);
    EXPECT_EQ(find(table, all), rows);
    // a[4] met twice: its home line (0, 0) holds only its own keys; it trades places with the one
    // not met in this call of the oldest score, then the smallest row: a[0] (score 1, row 0).
    EXPECT_EQ(call(table, {a[4], a[1], a[4]}, 5).rows, (V{4, 1, 4}));
    stats = table.index_stats();
    EXPECT_EQ(stats.at_home_line, 8);
    EXPECT_EQ(stats.displaced, 1);
    EXPECT_EQ(find(table, all), rows);
    // a[0], now displaced into half 1, is the next one out when a line of (0, 0)'s keys is full of
    // this call's keys: met twice with a[1..4], it stays away.
    EXPECT_EQ(call(table, {a[0], a[1], a[2], a[3], a[4], a[0]}, 6).rows, (V{0, 1, 2, 3, 4, 0}));
    EXPECT_EQ(table.index_stats().at_home_line, 8);
    EXPECT_EQ(find(table, all), rows);
    // Rebuilt from its entries, the table finds every key at its row.
    DynamicTable copy(options(16));
    copy.load(table.export_state(), DynamicRowMode::kKeep);
    EXPECT_EQ(find(copy, all), rows);
  }
  {
    // LFU scores count occurrences, not calls: no key moves.
    DynamicTable table = filled(DynamicScoreStrategy::kLfu);
    EXPECT_EQ(call(table, {b[3], b[3], b[3]}, 3).rows, (V{8, 8, 8}));
    EXPECT_EQ(table.index_stats().at_home_line, 7);
    EXPECT_EQ(find(table, all), rows);
  }
}

TEST(DynamicTable, HomeLinesHoldMostKeysOfAFullTable) {
  // A table of 2^16 rows offered 1.5 times as many random keys (evicting once buckets fill):
  // a key's home line receives a Poisson number of keys with mean 4 at full buckets, so at most
  // about 80% can live at home. Measured 76% with the moves on insert and eviction; 55% without
  // any, 71% without the moves that bring keys home on eviction.
  DynamicTable table(options(1 << 16, DynamicScoreStrategy::kStep, 128));
  std::mt19937_64 rng(5);
  V fresh(4096);
  for (int step = 1; step <= 24; ++step) {
    for (auto& id : fresh) id = static_cast<int64_t>(rng() >> 1);
    call(table, fresh, step);
  }
  const DynamicIndexStats stats = table.index_stats();
  EXPECT_EQ(stats.keys, table.size());
  EXPECT_GT(table.size(), (1 << 16) * 99 / 100);
  EXPECT_GT(static_cast<double>(stats.at_home_line) / static_cast<double>(stats.keys), 0.74)
      << stats.at_home_line << " of " << stats.keys;
  EXPECT_LT(static_cast<double>(stats.displaced) / static_cast<double>(stats.keys), 0.08);
  V keys = table.export_state().keys;
  V rows(keys.size());
  table.find(keys.data(), keys.size(), rows.data());
  EXPECT_EQ(std::count(rows.begin(), rows.end(), -1), 0);
}

TEST(DynamicTable, ChurnOnCrowdedHomeHalvesMatchesItsReports) {
  // Eviction keeps moving keys between the halves of tiny buckets (16 slots, keys mostly of one
  // home half): every call's rows and the table's contents match the evictions it reports, after
  // growth (from one bucket) and after an export / load into a table of another capacity.
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kLfu, DynamicScoreStrategy::kTimestamp}) {
    DynamicTableOptions o = options(64, strategy, 16);
    o.init_capacity = 16;
    DynamicTable table(o);
    const V home0 = keys_of_home(0, 300, 1);
    const V home1 = keys_of_home(1, 60, 1);
    std::map<int64_t, int64_t> reference;
    std::mt19937_64 rng(11);
    for (int step = 1; step <= 80; ++step) {
      V ids(24);
      for (auto& id : ids) id = rng() % 5 == 0 ? home1[rng() % home1.size()] : home0[rng() % home0.size()];
      const auto r = call(table, ids, step, 10 * step);
      for (size_t i = 0; i < r.evicted_keys.size(); ++i) {
        ASSERT_EQ(reference.at(r.evicted_keys[i]), r.evicted_rows[i]);
        reference.erase(r.evicted_keys[i]);
      }
      for (size_t i = 0; i < r.new_keys.size(); ++i) reference[r.new_keys[i]] = r.new_rows[i];
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto it = reference.find(ids[i]);
        ASSERT_EQ(r.rows[i], it == reference.end() ? -1 : it->second) << step << " " << i;
      }
      V keys;
      V rows;
      for (const auto& [k, row] : reference) {
        keys.push_back(k);
        rows.push_back(row);
      }
      ASSERT_EQ(find(table, keys), rows) << step;
    }
    ASSERT_EQ(table.size(), static_cast<int64_t>(reference.size()));
    DynamicTable other(options(256, strategy, 16));
    const auto loaded = other.load(table.export_state(), DynamicRowMode::kCompact);
    EXPECT_EQ(loaded.dropped, 0);
    const DynamicTableState s = table.export_state();
    EXPECT_EQ(find(other, s.keys), loaded.rows);
  }
}

TEST(DynamicTable, EvictionsTakeTheSmallestScoreThenRowOfTheirBucket) {
  // Every eviction of a long STEP / TIMESTAMP stream is checked against a plain model of the
  // buckets kept from the calls' reports and the rule in dynamic_table.h: the key the new key evicts
  // is, in the new key's bucket, the one of smallest (score, row) among those not holding the
  // call's score. Between evictions lookups raise the oldest keys' scores, keys met twice in a call
  // move inside their buckets, one step repeats and one goes back, and halfway the table is
  // restored from its exported state into a new one — the cases the victim lists must follow.
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kTimestamp}) {
    SCOPED_TRACE(dynamic_score_strategy_name(strategy));
    const DynamicTableOptions o = options(512, strategy, 32);
    auto table = std::make_unique<DynamicTable>(o);
    const uint64_t buckets = static_cast<uint64_t>(table->capacity()) / 32;
    ASSERT_EQ(buckets, 16u);
    const auto bucket_of = [&](int64_t key) {
      return dynamic_hash::bucket_of(dynamic_hash::mix64(static_cast<uint64_t>(key)), buckets);
    };
    struct Entry {
      int64_t row;
      int64_t score;  // STEP: the step; TIMESTAMP: the time in ms
    };
    std::map<int64_t, Entry> model;
    std::mt19937_64 rng(5);
    int64_t next_key = 1000;
    int64_t evictions = 0;
    for (int c = 1; c <= 160; ++c) {
      const int64_t step = c == 41 ? 40 : c == 91 ? 5 : c;  // a repeated step, then one going back
      const int64_t now = strategy == DynamicScoreStrategy::kStep ? step : 1000 * step;
      if (c == 100) {  // restored into a new table, the model unchanged
        auto restored = std::make_unique<DynamicTable>(o);
        restored->load(table->export_state(), DynamicRowMode::kKeep);
        table = std::move(restored);
      }
      std::vector<std::pair<Entry, int64_t>> oldest;
      for (const auto& [key, e] : model) oldest.push_back({e, key});
      std::sort(oldest.begin(), oldest.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first.score, a.first.row) < std::tie(b.first.score, b.first.row);
      });
      V ids;
      for (int i = 0; i < 12 && !oldest.empty(); ++i) {  // lookups of old keys, some twice
        const int64_t key = oldest[rng() % std::min<size_t>(oldest.size(), 48)].second;
        ids.push_back(key);
        if (i % 3 == 0) ids.push_back(key);
      }
      for (int i = 0; i < 12 && !oldest.empty(); ++i) ids.push_back(oldest[rng() % oldest.size()].second);
      for (int i = 0; i < 30; ++i) ids.push_back(next_key++ * 7919);
      std::shuffle(ids.begin(), ids.end(), rng);
      const auto r = call(*table, ids, step, 1000 * step);
      for (const int64_t id : ids) {
        if (model.count(id)) model[id].score = now;
      }
      size_t e = 0;
      for (size_t i = 0; i < r.new_keys.size(); ++i) {
        const uint64_t b = bucket_of(r.new_keys[i]);
        int64_t held = 0, victim = 0;
        for (const auto& [key, entry] : model) {
          if (bucket_of(key) != b) continue;
          ++held;
          if (entry.score == now) continue;
          if (victim == 0 || std::tie(entry.score, entry.row) < std::tie(model[victim].score, model[victim].row)) {
            victim = key;
          }
        }
        if (held == 32) {
          ASSERT_NE(victim, 0) << "call " << c << ": a full bucket of pinned keys took a new key";
          ASSERT_LT(e, r.evicted_keys.size()) << "call " << c;
          ASSERT_EQ(r.evicted_keys[e], victim) << "call " << c << ", eviction " << e;
          ASSERT_EQ(r.evicted_rows[e], model[victim].row);
          ASSERT_EQ(r.new_rows[i], model[victim].row);
          model.erase(victim);
          ++e;
          ++evictions;
        }
        model[r.new_keys[i]] = Entry{r.new_rows[i], now};
      }
      ASSERT_EQ(e, r.evicted_keys.size()) << "call " << c;
    }
    EXPECT_GT(evictions, 3000);
    const DynamicTableState s = table->export_state();
    ASSERT_EQ(s.keys.size(), model.size());
    for (size_t i = 0; i < s.keys.size(); ++i) {
      EXPECT_EQ(model.at(s.keys[i]).row, s.rows[i]);
      EXPECT_EQ(model.at(s.keys[i]).score, s.scores[i]);
    }
  }
}

TEST(DynamicTable, StepEvictsTheOldestStep) {
  DynamicTable table(options(16));  // one bucket of 16
  ASSERT_EQ(table.num_buckets(), 1);
  for (int64_t s = 1; s <= 16; ++s) call(table, {100 + s}, s);  // key 100+s: row s-1, score s
  call(table, {101}, 17);                                       // 101's score 1 → 17
  // New key 200 at step 18: the minimum score is 2 (key 102, row 1).
  auto r = call(table, {200}, 18);
  EXPECT_EQ(r.rows, (V{1}));
  EXPECT_EQ(r.evicted_keys, (V{102}));
  EXPECT_EQ(r.evicted_rows, (V{1}));
  EXPECT_EQ(r.new_keys, (V{200}));
  EXPECT_EQ(r.new_rows, (V{1}));
  EXPECT_EQ(r.num_rows, 16);
  // Then 103 (score 3, row 2).
  r = call(table, {201}, 19);
  EXPECT_EQ(r.evicted_keys, (V{103}));
  EXPECT_EQ(r.rows, (V{2}));
  EXPECT_EQ(find(table, {101, 102, 103, 200, 201}), (V{0, -1, -1, 1, 2}));
  const auto s = scores(table);
  EXPECT_EQ(s.at(101), 17);
  EXPECT_EQ(s.at(200), 18);
  EXPECT_EQ(s.at(104), 4);
}

TEST(DynamicTable, StepTiesEvictTheSmallestRow) {
  DynamicTable table(options(16));
  V keys;
  for (int64_t k = 0; k < 16; ++k) keys.push_back(50 - k);
  call(table, keys, 1);  // all score 1; key 50 - k has row k
  auto r = call(table, {7, 8}, 2);
  EXPECT_EQ(r.evicted_keys, (V{50, 49}));
  EXPECT_EQ(r.rows, (V{0, 1}));
}

TEST(DynamicTable, TimestampEvictsTheOldestTimeAndExportsMilliseconds) {
  DynamicTable table(options(16, DynamicScoreStrategy::kTimestamp));
  const int64_t t0 = 1'700'000'000'000;
  for (int64_t i = 0; i < 16; ++i) call(table, {i}, /*step=*/0, t0 + 1000 * (16 - i));  // key 0 newest
  auto r = call(table, {99}, 0, t0 + 60'000);
  EXPECT_EQ(r.evicted_keys, (V{15}));  // the oldest time, t0 + 1000
  EXPECT_EQ(scores(table).at(99), t0 + 60'000);
  EXPECT_EQ(scores(table).at(0), t0 + 16'000);
  // A time 5e9 ms (> 2^32 - 1) later: the base moves so that it scores 2^31 (base = t1 - 2^31 +
  // 1); every older time is before the base and ties at the bottom (exported as base - 1), where
  // the smallest row goes first: key 0 (row 0).
  const int64_t t1 = t0 + 5'000'000'000;
  r = call(table, {98}, 0, t1);
  EXPECT_EQ(r.evicted_keys, (V{0}));
  const int64_t bottom = t1 - (int64_t{1} << 31);
  const auto s = scores(table);
  EXPECT_EQ(s.at(98), t1);
  EXPECT_EQ(s.at(99), bottom);
  EXPECT_EQ(s.at(1), bottom);
}

TEST(DynamicTable, LfuCountsOccurrencesAndEvictsTheLeastFrequent) {
  DynamicTable table(options(16, DynamicScoreStrategy::kLfu));
  V first;
  for (int64_t k = 1; k <= 16; ++k) first.push_back(k);
  first.insert(first.end(), {1, 1, 1, 2});  // key 1: 4 occurrences, key 2: 2, others 1
  call(table, first, 1);
  auto s = scores(table);
  EXPECT_EQ(s.at(1), 4);
  EXPECT_EQ(s.at(2), 2);
  EXPECT_EQ(s.at(3), 1);
  // Key 3 found (1 → 2) and pinned; new key 99 (twice) evicts the score-1 key of the smallest
  // row: key 4 (row 3).
  auto r = call(table, {3, 99, 99}, 2);
  EXPECT_EQ(r.evicted_keys, (V{4}));
  EXPECT_EQ(r.rows, (V{2, 3, 3}));
  s = scores(table);
  EXPECT_EQ(s.at(3), 2);
  EXPECT_EQ(s.at(99), 2);  // a new key starts at its occurrences in the call
  EXPECT_EQ(s.count(4), 0u);
}

TEST(DynamicTable, KeysOfTheCallArePinnedAndAFullyPinnedBucketRejects) {
  DynamicTable table(options(16));
  V old_keys;
  for (int64_t k = 0; k < 16; ++k) old_keys.push_back(1000 + k);
  call(table, old_keys, 1);
  // Old key 1000 found (pinned) + 16 new keys: 15 evict 1001..1015 (score 1, smallest row first),
  // the 16th finds only pinned keys and gets no row (dynamicemb: the insert fails, no slot).
  V batch = {1000};
  for (int64_t k = 0; k < 16; ++k) batch.push_back(2000 + k);
  auto r = call(table, batch, 2);
  EXPECT_EQ(r.rows[0], 0);
  EXPECT_EQ(r.rejected, 1);
  EXPECT_EQ(r.rows[16], -1);
  EXPECT_EQ(r.evicted_keys.size(), 15u);
  EXPECT_EQ(r.evicted_keys.front(), 1001);
  EXPECT_EQ(r.new_keys.size(), 15u);
  // Rows handed out in this call are all distinct and none belongs to another key of the call.
  std::set<int64_t> rows(r.rows.begin(), r.rows.end() - 1);
  EXPECT_EQ(rows.size(), 16u);
  // Pins last for one call only: the next call can evict them.
  r = call(table, {3000}, 3);
  EXPECT_EQ(r.evicted_keys, (V{1000}));  // score 2 like the others, the smallest row (0)
}

TEST(DynamicTable, LfuNewKeysOfTheCallArePinnedToo) {
  DynamicTable table(options(16, DynamicScoreStrategy::kLfu));
  V keys;
  for (int64_t k = 1; k <= 16; ++k) keys.push_back(k);
  call(table, keys, 1);  // all count 1, key k at row k - 1
  // 100 evicts key 1 (count 1, row 0) and takes row 0 with count 1: the bucket's minimum is now
  // 100 itself, pinned, so 101 evicts the next one, key 2 (row 1).
  const auto r = call(table, {100, 101}, 2);
  EXPECT_EQ(r.evicted_keys, (V{1, 2}));
  EXPECT_EQ(r.rows, (V{0, 1}));
}

TEST(DynamicTable, StepPinsEveryKeyOfTheSameStep) {
  DynamicTable table(options(16));
  V keys;
  for (int64_t k = 0; k < 16; ++k) keys.push_back(k);
  call(table, keys, 1);
  // Two calls at step 2: the second cannot evict what the first inserted (score 2 = the step).
  auto r = call(table, {100, 101}, 2);
  EXPECT_EQ(r.evicted_keys, (V{0, 1}));
  r = call(table, {102}, 2);
  EXPECT_EQ(r.evicted_keys, (V{2}));
  EXPECT_EQ(find(table, {100, 101, 102}), (V{0, 1, 2}));
}

TEST(DynamicTable, NoEvictionGrows) {
  DynamicTableOptions o = options(64, DynamicScoreStrategy::kNoEviction);
  o.init_capacity = 16;
  DynamicTable table(o);
  EXPECT_EQ(table.capacity(), 16);  // 2 buckets of 16: two slots per row
  V keys;
  for (int64_t k = 0; k < 64; ++k) keys.push_back(k * 7);
  auto r = call(table, keys, 1);
  EXPECT_EQ(r.capacity, 64);
  EXPECT_EQ(r.num_rows, 64);
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(call(table, {-5}, 2).rows, (V{-1}));
}

TEST(DynamicTable, NoEvictionRejectsWhenFull) {
  DynamicTable table(options(16, DynamicScoreStrategy::kNoEviction));
  EXPECT_EQ(table.max_capacity(), 16);
  EXPECT_EQ(table.num_buckets(), 2);  // two slots per row
  EXPECT_EQ(table.capacity(), 16);
  V keys;
  for (int64_t k = 0; k < 16; ++k) keys.push_back(k * 31);
  auto r = call(table, keys, 1);
  EXPECT_EQ(r.new_rows.size(), 16u);
  r = call(table, {7777, 0}, 2);
  EXPECT_EQ(r.rows, (V{-1, 0}));
  EXPECT_EQ(r.rejected, 1);
  EXPECT_TRUE(r.evicted_keys.empty());
  EXPECT_EQ(table.size(), 16);
  EXPECT_EQ(scores(table).at(0), 0);  // NO_EVICTION has no score
}

TEST(DynamicTable, FrequencyAdmissionCountsAcrossCalls) {
  DynamicTableOptions o = options(1000);
  o.admission = DynamicAdmissionOptions{};
  o.admission->threshold = 3;
  DynamicTable table(o);
  // Call 1: a twice, b once → counts 2, 1; neither admitted.
  auto r = call(table, {11, 11, 22}, 1);
  EXPECT_EQ(r.rows, (V{-1, -1, -1}));
  EXPECT_EQ(r.not_admitted, 2);
  EXPECT_EQ(table.admission_counter()->count(11), 2);
  // Call 2: a reaches 3 (admitted on its third appearance, erased from the counter); b at 2.
  r = call(table, {22, 11}, 2);
  EXPECT_EQ(r.rows, (V{-1, 0}));
  EXPECT_EQ(r.new_keys, (V{11}));
  EXPECT_EQ(table.admission_counter()->count(11), 0);
  EXPECT_EQ(table.admission_counter()->count(22), 2);
  // Call 3: a is in the table (not counted any more); b admitted.
  r = call(table, {11, 22}, 3);
  EXPECT_EQ(r.rows, (V{0, 1}));
  EXPECT_EQ(r.not_admitted, 0);
  EXPECT_EQ(table.admission_counter()->size(), 0);
  // find never counts.
  EXPECT_EQ(find(table, {33}), (V{-1}));
  EXPECT_EQ(table.admission_counter()->count(33), 0);
}

TEST(DynamicTable, AdmissionThresholdsZeroAndOneAdmitAtOnce) {
  for (const int64_t threshold : {0, 1}) {
    DynamicTableOptions o = options(100);
    o.admission = DynamicAdmissionOptions{};
    o.admission->threshold = threshold;
    DynamicTable table(o);
    EXPECT_EQ(call(table, {4, 5}, 1).rows, (V{0, 1}));
    EXPECT_EQ(table.admission_counter()->size(), 0);
  }
}

TEST(DynamicTable, AdmissionCounterEvictsItsSmallestCount) {
  // Counter of one bucket of 16: 17 distinct keys seen once each (threshold 5) → the 17th evicts
  // the count-1 key with the smallest (digest, key); a key that stayed then counts on.
  DynamicTableOptions o = options(1000);
  o.admission = DynamicAdmissionOptions{};
  o.admission->threshold = 5;
  o.admission->counter_capacity = 16;
  o.admission->counter_bucket_capacity = 16;
  DynamicTable table(o);
  V keys;
  for (int64_t k = 0; k <= 16; ++k) keys.push_back(k);
  call(table, keys, 1);
  int64_t victim = 0;
  for (int64_t k = 1; k < 16; ++k) {
    if (std::make_pair(key_digest(k), k) < std::make_pair(key_digest(victim), victim)) victim = k;
  }
  EXPECT_EQ(table.admission_counter()->size(), 16);
  EXPECT_EQ(table.admission_counter()->count(victim), 0);
  EXPECT_EQ(table.admission_counter()->count(16), 1);
  const int64_t kept = victim == 0 ? 1 : 0;
  call(table, {kept}, 2);
  EXPECT_EQ(table.admission_counter()->count(kept), 2);
}

TEST(DynamicTable, LfuAdmittedKeyStartsAtItsOccurrencesInTheAdmittingCall) {
  DynamicTableOptions o = options(100, DynamicScoreStrategy::kLfu);
  o.admission = DynamicAdmissionOptions{};
  o.admission->threshold = 2;
  DynamicTable table(o);
  call(table, {9}, 1);
  call(table, {9, 9, 9}, 2);  // counter 1 + 3 = 4 ≥ 2: admitted with score 3 (dynamicemb: batch frequency)
  EXPECT_EQ(scores(table).at(9), 3);
}

TEST(DynamicTable, GrowthKeepsRows) {
  DynamicTableOptions o = options(64);
  o.init_capacity = 16;
  DynamicTable table(o);
  EXPECT_EQ(table.capacity(), 16);
  EXPECT_EQ(table.max_capacity(), 64);
  V keys;
  for (int64_t k = 0; k < 12; ++k) keys.push_back(k * 1000003);
  auto r = call(table, keys, 1);
  EXPECT_EQ(r.capacity, 16);  // 12 ≤ 3/4 of 16: no growth
  // One more key takes the load past 3/4: the index doubles first; rows stay.
  r = call(table, {-1}, 2);
  EXPECT_EQ(r.capacity, 32);
  EXPECT_EQ(r.rows, (V{12}));
  V expected;
  for (int64_t i = 0; i < 12; ++i) expected.push_back(i);
  EXPECT_EQ(find(table, keys), expected);
  // Up to the top: 64 rows, then evictions, never more rows.
  V more;
  for (int64_t k = 0; k < 200; ++k) more.push_back(5'000'000 + k);
  r = call(table, more, 3);
  EXPECT_EQ(r.capacity, 64);
  EXPECT_EQ(r.num_rows, 64);
  EXPECT_LE(table.size(), 64);
  for (const int64_t row : r.rows) EXPECT_LT(row, 64);
  // Only keys of earlier calls were evicted (those of this call are pinned).
  const std::set<int64_t> earlier(keys.begin(), keys.end());
  for (const int64_t key : r.evicted_keys) EXPECT_TRUE(key == -1 || earlier.count(key) == 1) << key;
  EXPECT_FALSE(r.evicted_keys.empty());
}

TEST(DynamicTable, FullBucketGrowsBeforeEvicting) {
  DynamicTableOptions o = options(128);
  o.init_capacity = 32;  // 2 buckets of 16 → 8 at the top
  DynamicTable table(o);
  ASSERT_EQ(table.num_buckets(), 2);
  // 17 keys of bucket 0 (load 17/32 < 3/4): the 17th finds its bucket full and the index doubles
  // instead of evicting.
  V keys;
  for (int64_t k = 0; keys.size() < 17; ++k) {
    if (dynamic_hash::bucket_of(dynamic_hash::mix64(static_cast<uint64_t>(k)), 2) == 0) keys.push_back(k);
  }
  auto r = call(table, keys, 1);
  EXPECT_TRUE(r.evicted_keys.empty());
  EXPECT_EQ(r.rejected, 0);
  EXPECT_GE(table.num_buckets(), 4);  // 4, or 8 if the split left 17 keys in one bucket again
  EXPECT_EQ(r.capacity, table.num_buckets() * 16);
  EXPECT_EQ(find(table, keys).size(), 17u);
  for (const int64_t row : find(table, keys)) EXPECT_GE(row, 0);
}

TEST(DynamicTable, CapacityRounding) {
  // dynamicemb's per-rank capacity: whole buckets.
  EXPECT_EQ(DynamicTable(options(1000, DynamicScoreStrategy::kStep, 128)).max_capacity(), 1024);
  EXPECT_EQ(DynamicTable(options(10, DynamicScoreStrategy::kStep, 128)).max_capacity(), 128);
  DynamicTable no_eviction(options(10, DynamicScoreStrategy::kNoEviction, 128));
  EXPECT_EQ(no_eviction.max_capacity(), 128);
  EXPECT_EQ(no_eviction.num_buckets(), 2);
  // 17 buckets from 1: doubling cannot reach 17 within 1/64, so the index starts at the top.
  DynamicTableOptions o = options(17 * 16);
  o.init_capacity = 16;
  DynamicTable odd(o);
  EXPECT_EQ(odd.num_buckets(), 17);
  EXPECT_EQ(odd.max_capacity(), 272);
  // 1000 buckets from 1: 2^9 .. 2^5 would round 1000 up to 1024 (+24 > 1000 / 64); 2^4 rounds it
  // to 1008 (+8): the index starts at 63 buckets and doubles four times.
  o = options(1000 * 16);
  o.init_capacity = 16;
  DynamicTable chain(o);
  EXPECT_EQ(chain.num_buckets(), 63);
  EXPECT_EQ(chain.max_capacity(), 1008 * 16);
}

TEST(DynamicTable, PerRankOptions) {
  DynamicTableOptions o = options(1000);
  o.init_capacity = 64;
  o.admission = DynamicAdmissionOptions{};
  const DynamicTableOptions r = o.per_rank(3);
  EXPECT_EQ(r.max_capacity, 334);                    // ceil(1000 / 3)
  EXPECT_EQ(r.init_capacity, 64);                    // already per rank
  EXPECT_EQ(r.admission->counter_capacity, 336);     // floor(1000 / 3) = 333 → multiple of 16
  o.admission->counter_capacity = 10;
  EXPECT_EQ(o.per_rank(4).admission->counter_capacity, 16);  // floor(10 / 4) = 2 → 16
  EXPECT_EQ(options(0).per_rank(2).max_capacity, 0);          // left for validation to report
}

TEST(DynamicTable, OwnerRankIsStableAndBalanced) {
  EXPECT_EQ(id_owner_rank(123, 1), 0);
  // Pinned values, part of the checkpoint contract (a change would move ids between ranks),
  // computed from the documented formula floor(mix64(id ^ 0x5851f42d4c957f2d) * 8 / 2^64) by an
  // independent Python one-liner.
  const std::vector<int> pinned = {id_owner_rank(0, 8), id_owner_rank(1, 8),
                                   id_owner_rank(-1, 8), id_owner_rank(kMax, 8)};
  EXPECT_EQ(pinned, (std::vector<int>{7, 4, 6, 2}));
  // Patterned ids (multiples of 4) spread evenly over 4 ranks.
  std::vector<int> counts(4, 0);
  for (int64_t i = 0; i < 100000; ++i) ++counts[id_owner_rank(i * 4, 4)];
  for (const int c : counts) EXPECT_NEAR(c, 25000, 1000);
}

TEST(DynamicTable, OptionValidation) {
  const auto message = [](const DynamicTableOptions& o) {
    try {
      DynamicTable table(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string p = "feature_configs[3].id_feature.dynamicemb";
  DynamicTableOptions o = options(0);
  EXPECT_EQ(message(o), p + ".max_capacity: 0 is outside [1, 1073741824] (rows of one table on one rank)");
  o = options(100);
  o.init_capacity = 0;
  EXPECT_EQ(message(o), p + ".init_capacity_per_rank: 0 must be at least 1");
  o = options(100, DynamicScoreStrategy::kStep, 100);
  EXPECT_EQ(message(o), p + ".bucket_capacity: 100 must be a multiple of 16 (dynamicemb's bucket alignment) in "
                            "[16, 1048576], e.g. 128");
  o = options(100);
  o.admission = DynamicAdmissionOptions{};
  o.admission->threshold = -1;
  EXPECT_EQ(message(o), p + ".frequency_admission_strategy.threshold: -1 is outside [0, 4294967295]");
  o.admission->threshold = 2;
  o.admission->counter_capacity = 0;
  EXPECT_EQ(message(o), p + ".frequency_admission_strategy.counter_capacity: 0 must be at least 1");
  o.admission->counter_capacity.reset();
  o.admission->counter_bucket_capacity = 0;
  EXPECT_EQ(message(o), p + ".frequency_admission_strategy.counter_bucket_capacity: 0 is outside [1, 1048576]");

  EXPECT_EQ(parse_dynamic_score_strategy("LFU", p + ".score_strategy"), DynamicScoreStrategy::kLfu);
  EXPECT_EQ(parse_dynamic_score_strategy("NO_EVICTION", "x"), DynamicScoreStrategy::kNoEviction);
  try {
    parse_dynamic_score_strategy("FOO", p + ".score_strategy");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), p + ".score_strategy: unknown 'FOO'; use TIMESTAMP, STEP, LFU or NO_EVICTION");
  }
  try {
    parse_dynamic_score_strategy("CUSTOMIZED", p + ".score_strategy");
    ADD_FAILURE();
  } catch (const NotSupportedError& e) {
    EXPECT_EQ(std::string(e.what()), "not supported yet: " + p +
                                         ".score_strategy: CUSTOMIZED (scores set through dynamicemb's set_score); "
                                         "use TIMESTAMP, STEP, LFU or NO_EVICTION");
  }
}

// A table driven by a random workload, checked against a plain map maintained only from what the
// calls report (new keys and rows, evicted keys): the reporting contract the caller relies on.
// Buckets of 32 slots (halves of 16: one digest compare each) and of 272 (halves of 136: the
// probe scans two groups of 64 digests and a last group of 8).
TEST(DynamicTable, RandomWorkloadMatchesItsReports) {
  for (const int64_t bucket : {32, 272}) {
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kTimestamp,
                              DynamicScoreStrategy::kLfu, DynamicScoreStrategy::kNoEviction}) {
    SCOPED_TRACE(::testing::Message() << "buckets of " << bucket << ", " << dynamic_score_strategy_name(strategy));
    DynamicTableOptions o = options(2000, strategy, bucket);
    o.init_capacity = 64;
    o.admission = DynamicAdmissionOptions{};
    o.admission->threshold = 2;
    DynamicTable table(o);
    std::map<int64_t, int64_t> reference;  // key → row
    std::mt19937_64 rng(2024);
    for (int step = 0; step < 60; ++step) {
      V ids(500);
      for (auto& id : ids) id = static_cast<int64_t>(rng() % 6000) * 7919 - 20'000'000;
      const auto r = call(table, ids, step, 1'000 * step);
      for (size_t i = 0; i < r.evicted_keys.size(); ++i) {
        ASSERT_EQ(reference.at(r.evicted_keys[i]), r.evicted_rows[i]);
        reference.erase(r.evicted_keys[i]);
      }
      for (size_t i = 0; i < r.new_keys.size(); ++i) {
        ASSERT_EQ(reference.count(r.new_keys[i]), 0u);
        reference[r.new_keys[i]] = r.new_rows[i];
      }
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto it = reference.find(ids[i]);
        ASSERT_EQ(r.rows[i], it == reference.end() ? -1 : it->second) << step << " " << i;
        ASSERT_LT(r.rows[i], r.num_rows);
      }
      ASSERT_LE(static_cast<int64_t>(reference.size()), r.capacity);
    }
    const DynamicTableState s = table.export_state();
    ASSERT_EQ(s.keys.size(), reference.size());
    std::set<int64_t> rows;
    for (size_t i = 0; i < s.keys.size(); ++i) {
      ASSERT_EQ(reference.at(s.keys[i]), s.rows[i]);
      rows.insert(s.rows[i]);
    }
    EXPECT_EQ(rows.size(), s.keys.size());  // distinct
    EXPECT_EQ(table.num_rows(), static_cast<int64_t>(s.keys.size()));  // compact: no row was freed
    V keys(s.keys);
    EXPECT_EQ(find(table, keys), s.rows);
  }
  }
}

// Rows in the caller's numbering (DynamicRowsOut: offset + row, `absent` for ids without one) are
// the rows the table's reports give: checked against a key → row map kept from the reports, as
// above, with evictions at max capacity (LFU's pins, which map the written rows back to the table's,
// included), admission leaving ids without a row, and probes on two threads; find() the same.
TEST(DynamicTable, RowsInTheCallersNumberingMatchTheReports) {
  constexpr int64_t kOffset = 5000, kAbsent = 77;
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kLfu,
                              DynamicScoreStrategy::kNoEviction}) {
    SCOPED_TRACE(dynamic_score_strategy_name(strategy));
    DynamicTableOptions o = options(2000, strategy, 32);
    o.admission = DynamicAdmissionOptions{};
    o.admission->threshold = 2;
    DynamicTable table(o);
    table.set_probe_threads(2);
    std::map<int64_t, int64_t> reference;  // key → row
    std::mt19937_64 rng(11);
    DynamicTableLookup r;
    for (int step = 1; step <= 30; ++step) {
      V ids(DynamicTable::kParallelProbeIds + 300);
      for (auto& id : ids) id = static_cast<int64_t>(rng() % 6000) * 131 - 9'000;
      V rows(ids.size(), -1);
      table.find_or_insert(ids.data(), ids.size(), step, step, r, DynamicRowsOut{rows.data(), kOffset, kAbsent});
      EXPECT_TRUE(r.rows.empty());
      for (size_t i = 0; i < r.evicted_keys.size(); ++i) reference.erase(r.evicted_keys[i]);
      for (size_t i = 0; i < r.new_keys.size(); ++i) reference[r.new_keys[i]] = r.new_rows[i];
      V found(ids.size(), -1);
      table.find(ids.data(), ids.size(), DynamicRowsOut{found.data(), kOffset, kAbsent});
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto it = reference.find(ids[i]);
        const int64_t expected = it == reference.end() ? kAbsent : kOffset + it->second;
        ASSERT_EQ(rows[i], expected) << step << " " << i;
        ASSERT_EQ(found[i], expected) << step << " " << i;
      }
    }
    EXPECT_GT(r.evicted_keys.size() + static_cast<size_t>(r.rejected), 0u);  // the table was full
  }
}

// The index probed by 3 threads (calls of >= kParallelProbeIds ids) gives exactly what one thread
// gives: rows, new and evicted keys, and the scores (LFU counts of keys that occur in several
// parts of a call are added by several threads), for every strategy.
TEST(DynamicTable, ParallelProbeMatchesTheSerialOne) {
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kLfu,
                              DynamicScoreStrategy::kNoEviction}) {
    DynamicTableOptions o = options(30000, strategy, 64);
    o.init_capacity = 4096;
    DynamicTable serial(o), parallel(o);
    parallel.set_probe_threads(3);
    std::mt19937_64 rng(7);
    for (int step = 1; step <= 6; ++step) {
      V ids(DynamicTable::kParallelProbeIds + 5000);
      for (auto& id : ids) id = static_cast<int64_t>(rng() % 40000) - 1000;  // repeats across parts
      const auto a = call(serial, ids, step, step);
      const auto b = call(parallel, ids, step, step);
      ASSERT_EQ(a.rows, b.rows) << step;
      ASSERT_EQ(a.new_keys, b.new_keys) << step;
      ASSERT_EQ(a.evicted_keys, b.evicted_keys) << step;
      EXPECT_EQ(find(serial, ids), find(parallel, ids));
    }
    const DynamicTableState sa = serial.export_state(), sb = parallel.export_state();
    EXPECT_EQ(sa.keys, sb.keys);
    EXPECT_EQ(sa.rows, sb.rows);
    EXPECT_EQ(sa.scores, sb.scores);
  }
}

// The same workload on two tables: `a` throughout, `b` restored from a's exported state midway.
void expect_same_future(DynamicTable& a, DynamicTable& b, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int step = 100; step < 120; ++step) {
    V ids(300);
    for (auto& id : ids) id = static_cast<int64_t>(rng() % 3000);
    const auto ra = call(a, ids, step, step);
    const auto rb = call(b, ids, step, step);
    ASSERT_EQ(ra.rows, rb.rows) << step;
    ASSERT_EQ(ra.evicted_keys, rb.evicted_keys) << step;
  }
}

// A doubling into arrays a background thread prepared (once the load passes 5/8 of the slots)
// builds the index a doubling without them builds: a table filled 8 keys per call (doublings
// prepared, the buckets split by two threads) and one filled in one call (no preparation: it
// grows before inserting) hold the same rows and then evict the same keys.
TEST(DynamicTable, PreparedGrowthMatchesUnpreparedGrowth) {
  DynamicTableOptions o = options(8192, DynamicScoreStrategy::kStep, 16);
  o.init_capacity = 64;
  DynamicTable small_calls(o), one_call(o);
  small_calls.set_probe_threads(2);
  V keys;
  for (int64_t k = 0; k < 3000; ++k) keys.push_back(k * 7919 - 100000);
  for (size_t at = 0; at < keys.size(); at += 8) {
    call(small_calls, V(keys.begin() + static_cast<std::ptrdiff_t>(at),
                        keys.begin() + static_cast<std::ptrdiff_t>(std::min(at + 8, keys.size()))), 1);
  }
  call(one_call, keys, 1);
  EXPECT_GT(small_calls.prepared_growths(), 0);
  EXPECT_EQ(one_call.prepared_growths(), 0);
  EXPECT_EQ(small_calls.num_buckets(), one_call.num_buckets());
  EXPECT_EQ(small_calls.size(), one_call.size());
  EXPECT_EQ(find(small_calls, keys), find(one_call, keys));
  expect_same_future(small_calls, one_call, 3);
}

TEST(DynamicTable, ExportLoadRoundTripSameLayoutKeepsRowsAndBehaviour) {
  for (const auto strategy : {DynamicScoreStrategy::kStep, DynamicScoreStrategy::kTimestamp,
                              DynamicScoreStrategy::kLfu, DynamicScoreStrategy::kNoEviction}) {
    DynamicTableOptions o = options(512, strategy, 32);
    o.admission = DynamicAdmissionOptions{};
    o.admission->threshold = 2;
    DynamicTable a(o);
    std::mt19937_64 rng(7);
    for (int step = 0; step < 30; ++step) {
      V ids(200);
      for (auto& id : ids) id = static_cast<int64_t>(rng() % 3000);
      call(a, ids, step, step);
    }
    const DynamicTableState state = a.export_state();
    for (size_t i = 1; i < state.keys.size(); ++i) ASSERT_LT(state.keys[i - 1], state.keys[i]);
    DynamicTable b(o);
    const auto result = b.load(state, DynamicRowMode::kKeep);
    EXPECT_EQ(result.dropped, 0);
    EXPECT_EQ(result.rows, state.rows);
    EXPECT_EQ(result.num_rows, a.num_rows());
    const DynamicTableState again = b.export_state();
    EXPECT_EQ(again.keys, state.keys);
    EXPECT_EQ(again.rows, state.rows);
    EXPECT_EQ(again.scores, state.scores);
    EXPECT_EQ(again.counter.keys, state.counter.keys);
    EXPECT_EQ(again.counter.counts, state.counter.counts);
    // Slot order inside a bucket differs (load inserts by score) but eviction depends on keys and
    // scores only: the restored table behaves exactly as the original.
    expect_same_future(a, b, 99);
  }
}

TEST(DynamicTable, LoadIntoAnotherCapacityRenumbersCompactly) {
  DynamicTable a(options(1000, DynamicScoreStrategy::kLfu, 64));
  V ids;
  for (int64_t k = 0; k < 700; ++k) ids.push_back(k * 13);
  call(a, ids, 1);
  const DynamicTableState state = a.export_state();
  DynamicTableOptions o = options(4000, DynamicScoreStrategy::kLfu, 128);
  o.init_capacity = 128;
  DynamicTable b(o);
  const auto result = b.load(state, DynamicRowMode::kCompact);
  EXPECT_EQ(result.dropped, 0);
  EXPECT_EQ(result.num_rows, 700);
  std::set<int64_t> rows(result.rows.begin(), result.rows.end());
  EXPECT_EQ(rows.size(), 700u);
  EXPECT_EQ(*rows.rbegin(), 699);
  EXPECT_EQ(find(b, state.keys), result.rows);  // the mapping the caller moves weights by
  EXPECT_GE(b.capacity(), 700);
}

TEST(DynamicTable, LoadIntoASmallerTableKeepsTheHighestScores) {
  // 20 entries with distinct scores 1..20 into one bucket of 16: by score descending, 20..5 stay.
  DynamicTableState state;
  for (int64_t i = 1; i <= 20; ++i) {
    state.keys.push_back(i * 100);  // (20 entries, one bucket: all collide)
    state.rows.push_back(20 - i);
    state.scores.push_back(i);
  }
  DynamicTable table(options(16));
  const auto result = table.load(state, DynamicRowMode::kCompact);
  EXPECT_EQ(result.dropped, 4);
  for (int64_t i = 1; i <= 20; ++i) {
    // Compact rows in insertion order: score 20 → row 0, ..., score 5 → row 15.
    EXPECT_EQ(result.rows[i - 1], i > 4 ? 20 - i : -1) << i;
  }
  EXPECT_EQ(find(table, {2000, 500, 400}), (V{0, 15, -1}));
}

TEST(DynamicTable, LoadKeepModeReusesHolesFirst) {
  DynamicTableState state;
  state.keys = {1, 2};
  state.rows = {5, 2};
  state.scores = {1, 1};
  DynamicTable table(options(100));
  const auto result = table.load(state, DynamicRowMode::kKeep);
  EXPECT_EQ(result.rows, (V{5, 2}));
  EXPECT_EQ(result.num_rows, 6);
  // Rows 0, 1, 3, 4 are free: handed out lowest first, then 6.
  EXPECT_EQ(call(table, {10, 11, 12, 13, 14}, 2).rows, (V{0, 1, 3, 4, 6}));
}

TEST(DynamicTable, ReshardByOwnerRank) {
  DynamicTable whole(options(4096, DynamicScoreStrategy::kStep, 128));
  V ids;
  for (int64_t k = 0; k < 3000; ++k) ids.push_back(k * k);
  call(whole, ids, 5);
  const DynamicTableState state = whole.export_state();
  DynamicTableOptions o = options(4096, DynamicScoreStrategy::kStep, 128).per_rank(3);
  size_t total = 0;
  for (int rank = 0; rank < 3; ++rank) {
    DynamicTableState part;
    for (size_t i = 0; i < state.keys.size(); ++i) {
      if (id_owner_rank(state.keys[i], 3) != rank) continue;
      part.keys.push_back(state.keys[i]);
      part.rows.push_back(state.rows[i]);
      part.scores.push_back(state.scores[i]);
    }
    DynamicTable shard(o);
    const auto result = shard.load(part, DynamicRowMode::kCompact);
    EXPECT_EQ(result.dropped, 0);
    EXPECT_EQ(find(shard, part.keys), result.rows);
    total += part.keys.size();
  }
  EXPECT_EQ(total, state.keys.size());
}

TEST(DynamicTable, BadStateIsOneLineDataErrorAndLeavesTheTable) {
  DynamicTableOptions o = options(64);
  o.admission = DynamicAdmissionOptions{};
  o.admission->threshold = 2;
  DynamicTable table(o);
  call(table, {1, 1, 2}, 1);
  const auto before = table.export_state();
  const auto message = [&](const DynamicTableState& state, DynamicRowMode mode = DynamicRowMode::kKeep) {
    try {
      table.load(state, mode);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string t = "dynamic embedding table 't': ";
  EXPECT_EQ(message({{1, 2}, {0}, {1, 1}, {}}), t + "the checkpoint state has 2 keys, 1 rows and 2 scores");
  EXPECT_EQ(message({{1, 1}, {0, 1}, {1, 1}, {}}), t + "the checkpoint state has key 1 twice");
  EXPECT_EQ(message({{1}, {-1}, {1}, {}}), t + "key 1 has row -1, outside the table's 64 rows");
  EXPECT_EQ(message({{1}, {64}, {1}, {}}), t + "key 1 has row 64, outside the table's 64 rows");
  EXPECT_EQ(message({{1}, {64}, {1}, {}}, DynamicRowMode::kCompact), "no error");
  EXPECT_EQ(message({{1, 2}, {3, 3}, {1, 1}, {}}), t + "row 3 is held by two keys (one is 2)");
  EXPECT_EQ(message({{1}, {0}, {-5}, {}}), t + "key 1 has score -5; STEP scores are >= 0");
  EXPECT_EQ(message({{1}, {0}, {1}, {{7, 7}, {1, 1}}}), t + "the admission counter state has key 7 twice");
  // The compact load above succeeded; the failed ones changed nothing before it. Reload the state.
  table.load(before, DynamicRowMode::kKeep);
  const auto after = table.export_state();
  EXPECT_EQ(after.keys, before.keys);
  EXPECT_EQ(after.counter.keys, before.counter.keys);
  EXPECT_EQ(after.counter.counts, before.counter.counts);
}

TEST(DynamicTable, FailedLoadChangesNothing) {
  DynamicTable table(options(64));
  call(table, {1, 2, 3}, 1);
  DynamicTableState bad{{9, 9}, {0, 1}, {1, 1}, {}};
  EXPECT_THROW(table.load(bad, DynamicRowMode::kKeep), DataError);
  EXPECT_EQ(table.size(), 3);
  EXPECT_EQ(find(table, {1, 2, 3}), (V{0, 1, 2}));
}

}  // namespace dynamic_table
}  // namespace tzrec::embedding
