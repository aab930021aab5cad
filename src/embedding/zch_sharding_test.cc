// Row-wise sharding of zero-collision hashed tables (zch_sharding.h): the owner of ids, the row
// block check, and a block's state built from a saved table on another world size — expected
// values worked out by hand from the rules in zch_sharding.h and docs/tzrec-compatibility.md §5.12.
#include "embedding/zch_sharding.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/id_exchange.h"
#include "embedding/id_owner.h"
#include "embedding/row_reset.h"

namespace tzrec::embedding {
namespace zch_sharding_test {

constexpr int64_t kEmpty = std::numeric_limits<int64_t>::max();

std::vector<int64_t> values(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

torch::Tensor i64(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kInt64); }

// The first `n` non-negative ids that `rank` of `world` owns, ascending.
std::vector<int64_t> owned_ids(int rank, int world, size_t n) {
  std::vector<int64_t> out;
  for (int64_t id = 0; out.size() < n; ++id) {
    if (id_owner_rank(id, world) == rank) out.push_back(id);
  }
  return out;
}

TEST(ZchSharding, OwnersAreTheSharedIdOwnerRule) {
  const std::vector<int64_t> ids = {0, 1, -1, kEmpty, 123456789, -987654321};
  const std::vector<int64_t> owners = values(owner_ranks(i64(ids), 8));
  // Pinned by dynamic_table_test against the documented formula: 0 → 7, 1 → 4, -1 → 6, 2^63-1 → 2.
  EXPECT_EQ(std::vector<int64_t>(owners.begin(), owners.begin() + 4), (std::vector<int64_t>{7, 4, 6, 2}));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(owners[i], id_owner_rank(ids[i], 8));
  EXPECT_EQ(values(owner_ranks(i64({5, -5}), 1)), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(owner_ranks(i64({}), 2).numel(), 0);
}

TEST(ZchSharding, RowBlockMessageNamesTheFieldAndRank) {
  try {
    check_zch_row_blocks({0, 2, 4, 5}, "feature_configs[2].id_feature.zch");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "feature_configs[2].id_feature.zch.zch_size: 5 rows split row-wise over 3 ranks leave rank 2 1 row(s); "
              "every rank needs at least 2 (one for its ids, one for the ids it does not hold): raise zch_size or use "
              "fewer ranks");
  }
  check_zch_row_blocks({0, 3, 6, 8}, "f.zch");
  check_zch_row_blocks({0, 2}, "f.zch");
}

// A table of 8 places saved by one process (sentinel row 7), restored on 2 ranks (blocks [0, 4)
// and [4, 8)): a, b, d are owned by rank 0, c by rank 1.
struct SavedTable {
  int64_t a, b, c, d;
  std::map<std::string, torch::Tensor> saved;
  std::vector<std::string> names = {"_mch_sorted_raw_ids", "_mch_remapped_ids_mapping", "_mch_counts"};
};

SavedTable saved_table() {
  const std::vector<int64_t> zero = owned_ids(0, 2, 3), one = owned_ids(1, 2, 1);
  SavedTable t{zero[0], zero[1], one[0], zero[2], {}};
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> held = {
      {t.a, {3, 10}}, {t.b, {0, 20}}, {t.c, {5, 30}}, {t.d, {6, 40}}};  // id → (slot, count)
  std::sort(held.begin(), held.end());
  std::vector<int64_t> ids, slots, counts;
  for (const auto& [id, sc] : held) {
    ids.push_back(id);
    slots.push_back(sc.first);
    counts.push_back(sc.second);
  }
  for (int64_t slot : {1, 2, 4, 7}) {  // empty places, the sentinel (row 7) last
    ids.push_back(kEmpty);
    slots.push_back(slot);
    counts.push_back(0);
  }
  t.saved = {{"_mch_sorted_raw_ids", i64(ids)}, {"_mch_remapped_ids_mapping", i64(slots)}, {"_mch_counts", i64(counts)}};
  return t;
}

TEST(ZchSharding, ABlockKeepsItsIdsRowsAndMovesTheOthersIntoFreeRows) {
  const SavedTable t = saved_table();
  // Rank 0, rows [0, 4), sentinel row 3. b keeps row 0; a (row 3 is now the sentinel's) and d
  // (row 6, outside the block) move, in id order, to the free rows 1 and 2.
  const ZchShardState zero = zch_shard_state(t.saved, t.names, 0, 4, 0, 2, "test");
  EXPECT_EQ(values(zero.places.at("_mch_sorted_raw_ids")), (std::vector<int64_t>{t.a, t.b, t.d, kEmpty}));
  EXPECT_EQ(values(zero.places.at("_mch_remapped_ids_mapping")), (std::vector<int64_t>{1, 0, 2, 3}));
  EXPECT_EQ(values(zero.places.at("_mch_counts")), (std::vector<int64_t>{10, 20, 40, 0}));
  EXPECT_EQ(values(zero.moved_from), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(values(zero.moved_to), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(zero.dropped, 0);
  // Rank 1, rows [4, 8), sentinel row 7: c keeps row 5; rows 4 and 6 are empty places.
  const ZchShardState one = zch_shard_state(t.saved, t.names, 4, 4, 1, 2, "test");
  EXPECT_EQ(values(one.places.at("_mch_sorted_raw_ids")), (std::vector<int64_t>{t.c, kEmpty, kEmpty, kEmpty}));
  EXPECT_EQ(values(one.places.at("_mch_remapped_ids_mapping")), (std::vector<int64_t>{5, 4, 6, 7}));
  EXPECT_EQ(values(one.places.at("_mch_counts")), (std::vector<int64_t>{30, 0, 0, 0}));
  EXPECT_EQ(one.moved_from.numel(), 0);
  // Back on one process: every id keeps its row, nothing moves.
  const ZchShardState all = zch_shard_state(t.saved, t.names, 0, 8, 0, 1, "test");
  EXPECT_EQ(values(all.places.at("_mch_sorted_raw_ids")), values(t.saved.at("_mch_sorted_raw_ids")));
  EXPECT_EQ(values(all.places.at("_mch_remapped_ids_mapping")), values(t.saved.at("_mch_remapped_ids_mapping")));
  EXPECT_EQ(all.moved_from.numel(), 0);
}

TEST(ZchSharding, ABlockTooSmallKeepsTheMostFrequentIds) {
  const SavedTable t = saved_table();
  // Rank 0 of 2 with rows [0, 3): two places for a (count 10), b (20), d (40): a is dropped; b
  // keeps row 0, d moves from row 6 to row 1; row 2 is the sentinel's.
  const ZchShardState s = zch_shard_state(t.saved, t.names, 0, 3, 0, 2, "test");
  EXPECT_EQ(s.dropped, 1);
  EXPECT_EQ(values(s.places.at("_mch_sorted_raw_ids")), (std::vector<int64_t>{t.b, t.d, kEmpty}));
  EXPECT_EQ(values(s.places.at("_mch_remapped_ids_mapping")), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(values(s.moved_from), (std::vector<int64_t>{6}));
  EXPECT_EQ(values(s.moved_to), (std::vector<int64_t>{1}));
}

TEST(ZchSharding, CorruptSavedStateIsACheckpointError) {
  SavedTable t = saved_table();
  auto message = [&](const std::map<std::string, torch::Tensor>& saved) {
    try {
      zch_shard_state(saved, t.names, 0, 4, 0, 2, "zero-collision hash of table 't'");
    } catch (const CheckpointError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto missing = t.saved;
  missing.erase("_mch_counts");
  EXPECT_EQ(message(missing), "zero-collision hash of table 't': zero-collision hash state '_mch_counts' is missing");
  auto short_counts = t.saved;
  short_counts["_mch_counts"] = i64({1, 2});
  EXPECT_EQ(message(short_counts),
            "zero-collision hash of table 't': zero-collision hash state '_mch_counts' has shape [2], expected [8]");
  auto twice = t.saved;
  twice["_mch_remapped_ids_mapping"] = i64({3, 3, 5, 6, 1, 2, 4, 7});
  EXPECT_EQ(message(twice),
            "zero-collision hash of table 't': zero-collision hash state gives one row to several ids (a corrupt "
            "checkpoint)");
}

// The rows a rank resets in its block draw from a stream named after the table and the block's
// offset; the first block (and one process) keeps the table's own stream (row_reset.h).
TEST(ZchSharding, BlocksDrawFromStreamsOfTheirOwn) {
  EXPECT_EQ(block_step_seed("t", 0, 7), table_step_seed("t", 7));
  EXPECT_EQ(block_step_seed("t", 1024, 7), table_step_seed("t@1024", 7));
  EXPECT_NE(block_step_seed("t", 1024, 7), block_step_seed("t", 0, 7));
  EXPECT_NE(block_step_seed("t", 1024, 7), block_step_seed("t", 2048, 7));
}

}  // namespace zch_sharding_test
}  // namespace tzrec::embedding
