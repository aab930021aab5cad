#include "dist/planner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/scoped_env.h"
#include "dist/planner_cost.h"

namespace tzrec::dist {
namespace planner_test {

PlannerTopology topo(int world, int local, int64_t memory, double reserve = 0) {
  PlannerTopology t;
  t.world_size = world;
  t.local_world_size = local;
  t.batch_size = 512;
  t.memory_per_rank_bytes = memory;
  t.storage_reserve_percent = reserve;
  t.intra_node_bandwidth = kDefaultIntraNodeBandwidth;
  t.cross_node_bandwidth = kDefaultCrossNodeBandwidth;
  return t;
}

PlannerTable table(const std::string& name, int64_t rows, int64_t dim, std::vector<ShardingType> allowed = {}) {
  PlannerTable t;
  t.name = name;
  t.num_embeddings = rows;
  t.embedding_dim = dim;
  t.allowed = std::move(allowed);
  return t;
}

constexpr int64_t kGiB = int64_t{1} << 30;

// The message of the ConfigError `fn` throws ("" when it throws none).
template <typename Fn>
std::string config_error(Fn fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

TEST(PlannerCostTest, MemoryAndTimeOfShardsByHand) {
  PlannerTable t = table("t", 100, 8);
  t.optimizer_bytes_per_row = 32;         // adagrad: 4 bytes × 8 columns
  t.optimizer_rowwise_bytes_per_row = 4;  // plus a row-wise slot
  t.pooling_factor = 3;
  t.num_features = 2;
  // Column block of 4 columns: weights 100 × 4 × 4; state 100 × (32 × 4 / 8 + 4).
  const ShardMemory cw = shard_memory(t, Shard{1, 0, 100, 4, 4});
  EXPECT_DOUBLE_EQ(cw.weights, 1600);
  EXPECT_DOUBLE_EQ(cw.optimizer, 2000);
  t.trainable = false;
  EXPECT_DOUBLE_EQ(shard_memory(t, Shard{1, 0, 100, 4, 4}).optimizer, 0);
  EXPECT_DOUBLE_EQ(table_bytes(t), 3200);

  PlannerTopology tp = topo(4, 2, kGiB, 0.25);
  tp.batch_size = 10;
  tp.intra_node_bandwidth = 1e9;
  tp.cross_node_bandwidth = 1e8;
  EXPECT_DOUBLE_EQ(rank_budget_bytes(tp), 0.75 * kGiB);
  // Peers of any rank: 1 on its node, 2 on the other node → 1 / 1e9 + 2 / 1e8 = 2.1e-8 s per byte.
  const double per_byte = 2.1e-8;
  // table_wise: lookup 2 × (10 × 4) × 3 × 8 × 4 bytes; per peer 10 × 3 ids × 8 + 10 × 2 lengths × 8 +
  // 2 × 10 × 2 × 8 × 4 pooled = 240 + 160 + 1280.
  EXPECT_NEAR(shard_seconds(t, ShardingType::kTableWise, Shard{0, 0, 100, 0, 8}, tp),
              7680 / kLookupMemoryBandwidth + 1680 * per_byte, 1e-15);
  // A row block of 25 of the 100 rows owns a quarter of the ids: lookup 1920 bytes, ids 60 bytes.
  EXPECT_NEAR(shard_seconds(t, ShardingType::kRowWise, Shard{3, 75, 25, 0, 8}, tp),
              1920 / kLookupMemoryBandwidth + 1500 * per_byte, 1e-15);
  // data_parallel: ids + lengths all-gathered, pooled gradients once (10 × 2 × 8 × 4 = 640).
  EXPECT_NEAR(shard_seconds(t, ShardingType::kDataParallel, Shard{2, 0, 100, 0, 8}, tp),
              7680 / kLookupMemoryBandwidth + 1040 * per_byte, 1e-15);
}

TEST(PlannerTest, SingleProcessPutsEverythingOnRankZero) {
  const auto plan =
      plan_sharding({table("a", 1000000, 64), table("b", 10, 4), table("c", 50, 16, {ShardingType::kColumnWise})},
                    topo(1, 1, 64 * kGiB));
  ASSERT_EQ(plan.tables.size(), 3u);
  EXPECT_EQ(plan.world_size, 1);
  for (const auto& t : plan.tables) {
    ASSERT_EQ(t.shards.size(), 1u);
    EXPECT_EQ(t.shards[0], (Shard{0, 0, t.num_embeddings, 0, t.embedding_dim}));
    EXPECT_NE(t.reason.find("single process"), std::string::npos) << t.reason;
  }
  EXPECT_EQ(plan.tables[0].type, ShardingType::kTableWise);
  EXPECT_EQ(plan.tables[1].type, ShardingType::kTableWise);
  EXPECT_EQ(plan.tables[2].type, ShardingType::kColumnWise);  // the only allowed type, as one block
}

// Equal tables (2.4 MiB each: too big to replicate) go table_wise, the same number on every rank.
void expect_even_spread(int world) {
  std::vector<PlannerTable> tables;
  for (int i = 0; i < 8; ++i) tables.push_back(table("t" + std::to_string(i), 10000, 64));
  const auto plan = plan_sharding(tables, topo(world, world, 64 * kGiB));
  std::map<int, int> per_rank;
  for (const auto& t : plan.tables) {
    EXPECT_EQ(t.type, ShardingType::kTableWise) << t.table << ": " << t.reason;
    ASSERT_EQ(t.shards.size(), 1u);
    ++per_rank[t.shards[0].rank];
    EXPECT_NE(t.reason.find("table_wise on rank " + std::to_string(t.shards[0].rank)), std::string::npos) << t.reason;
  }
  ASSERT_EQ(per_rank.size(), static_cast<size_t>(world));
  for (const auto& [rank, n] : per_rank) EXPECT_EQ(n, 8 / world) << "rank " << rank;
}

TEST(PlannerTest, EqualTablesSpreadEvenlyOverTwoRanks) { expect_even_spread(2); }
TEST(PlannerTest, EqualTablesSpreadEvenlyOverFourRanks) { expect_even_spread(4); }

TEST(PlannerTest, TableTooBigForOneRankIsRowWise) {
  // 10 × 4 fp32 = 160 bytes; each rank has 200 − 50% = 100 bytes: no rank holds it whole (nor a copy
  // per rank), dim 4 cannot be column-sharded, row blocks of ceil(10 / 4) = 3 rows (48 bytes) fit.
  const auto plan = plan_sharding({table("huge", 10, 4)}, topo(4, 4, 200, 0.5));
  const TableSharding& t = plan.table("huge");
  EXPECT_EQ(t.type, ShardingType::kRowWise) << t.reason;
  const std::vector<Shard> expected = {{0, 0, 3, 0, 4}, {1, 3, 3, 0, 4}, {2, 6, 3, 0, 4}, {3, 9, 1, 0, 4}};
  EXPECT_EQ(t.shards, expected);
  expect_contains(t.reason, {"row_wise over ranks 0-3", "160 B does not fit one rank (100 B free)"});
}

TEST(PlannerTest, ForcedTypeGivesItsRuleAsTheReason) {
  // A table the engine restricts to row_wise (zch / dynamicemb) says why; one the config restricts
  // compares the allowed types' step times.
  PlannerTable forced = table("zch_table", 100, 8, {ShardingType::kRowWise});
  forced.forced_reason = "row_wise by rule (zch: each rank owns the ids of its row block)";
  const auto plan = plan_sharding({forced, table("configured", 100, 8, {ShardingType::kRowWise})}, topo(2, 2, kGiB));
  EXPECT_EQ(plan.table("zch_table").type, ShardingType::kRowWise);
  expect_contains(plan.table("zch_table").reason, {"row_wise over ranks 0-1", "row_wise by rule (zch: each rank"});
  expect_contains(plan.table("configured").reason, {"lowest estimated step time of the allowed types (row_wise)"});
}

TEST(PlannerTest, ColumnWiseBlocks) {
  const std::vector<ShardingType> cw = {ShardingType::kColumnWise};
  // dim 16 over 4 ranks: 4 blocks of 4 columns (fewer blocks would leave a rank with 8 columns).
  auto plan = plan_sharding({table("c16", 6, 16, cw)}, topo(4, 4, kGiB));
  EXPECT_EQ(plan.tables[0].type, ShardingType::kColumnWise);
  EXPECT_EQ(plan.tables[0].shards,
            (std::vector<Shard>{{0, 0, 6, 0, 4}, {1, 0, 6, 4, 4}, {2, 0, 6, 8, 4}, {3, 0, 6, 12, 4}}));
  // dim 20 over 2 ranks: 5 units of 4 columns → 3 + 2 units.
  plan = plan_sharding({table("c20", 6, 20, cw)}, topo(2, 2, kGiB));
  EXPECT_EQ(plan.tables[0].shards, (std::vector<Shard>{{0, 0, 6, 0, 12}, {1, 0, 6, 12, 8}}));
  // dim 10 (not a multiple of 4) over 4 ranks: single columns, 3 + 3 + 2 + 2.
  plan = plan_sharding({table("c10", 6, 10, cw)}, topo(4, 4, kGiB));
  EXPECT_EQ(plan.tables[0].shards,
            (std::vector<Shard>{{0, 0, 6, 0, 3}, {1, 0, 6, 3, 3}, {2, 0, 6, 6, 2}, {3, 0, 6, 8, 2}}));
  // dim 4 cannot be split.
  const std::string msg = config_error([&] { plan_sharding({table("narrow_emb", 6, 4, cw)}, topo(2, 2, kGiB)); });
  expect_contains(msg, {"'narrow_emb'", "column_wise", "embedding_dim 4"});
}

TEST(PlannerTest, DataParallelHoldsAFullShardPerRank) {
  // Only data_parallel allowed: replicated although big (8 MiB).
  auto plan = plan_sharding({table("dp", 1 << 18, 8, {ShardingType::kDataParallel})}, topo(3, 3, kGiB));
  const TableSharding& t = plan.tables[0];
  EXPECT_EQ(t.type, ShardingType::kDataParallel);
  EXPECT_EQ(t.shards, (std::vector<Shard>{{0, 0, 1 << 18, 0, 8}, {1, 0, 1 << 18, 0, 8}, {2, 0, 1 << 18, 0, 8}}));
  EXPECT_NE(t.reason.find("only possible allowed sharding type"), std::string::npos) << t.reason;
  // A small table (1000 × 16 × 4 = 62.5 KiB) with every type allowed is replicated; a big one is not.
  plan = plan_sharding({table("small", 1000, 16), table("big", 100000, 16)}, topo(2, 2, kGiB));
  EXPECT_EQ(plan.table("small").type, ShardingType::kDataParallel);
  EXPECT_EQ(plan.table("small").shards.size(), 2u);
  EXPECT_NE(plan.table("small").reason.find("replicated"), std::string::npos);
  EXPECT_EQ(plan.table("big").type, ShardingType::kTableWise);
}

TEST(PlannerTest, TableRowWiseOverOneNodeOfTwo) {
  const std::vector<ShardingType> trw = {ShardingType::kTableRowWise};
  // 2 nodes × 2 ranks: the first table on node 0 (ranks 0, 1), the second on the idle node 1.
  const auto plan = plan_sharding({table("b_emb", 10, 8, trw), table("a_emb", 10, 8, trw)}, topo(4, 2, kGiB));
  const TableSharding& a = plan.table("a_emb");
  const TableSharding& b = plan.table("b_emb");
  EXPECT_EQ(a.type, ShardingType::kTableRowWise);
  EXPECT_EQ(a.shards, (std::vector<Shard>{{0, 0, 5, 0, 8}, {1, 5, 5, 0, 8}}));
  EXPECT_EQ(b.shards, (std::vector<Shard>{{2, 0, 5, 0, 8}, {3, 5, 5, 0, 8}}));
  EXPECT_NE(b.reason.find("node 1 (ranks 2-3)"), std::string::npos) << b.reason;
  // Valid for the consumers: from_json accepts it.
  EXPECT_EQ(ShardingPlan::from_json(plan.to_json(), "test"), plan);
}

TEST(PlannerTest, MemoryExhaustionNamesTableAndBytes) {
  // 100 × 8 fp32 = 3200 bytes + adagrad 100 × 32 = 3200; each rank has 1000 − 10% = 900.
  PlannerTable big = table("big_emb", 100, 8, {ShardingType::kTableWise});
  big.optimizer_bytes_per_row = 32;
  std::string msg = config_error([&] { plan_sharding({big}, topo(2, 2, 1000, 0.1)); });
  expect_contains(
      msg, {"'big_emb'", "needs 6400 bytes (6.2 KiB: weights 3200 + optimizer state 3200)", "as table_wise on rank 0",
            "rank 0 has only 900 bytes (900 B) available", "memory_per_rank 1000 minus reserve 10% minus 0 bytes",
            "add ranks", "allow row_wise", "FP16", "sparse optimizer with less state"});
  // Frozen and row_wise allowed: those hints are left out.
  big.trainable = false;
  big.allowed = {ShardingType::kTableWise, ShardingType::kRowWise};
  msg = config_error([&] { plan_sharding({big}, topo(2, 2, 1000, 0.1)); });
  expect_contains(msg, {"'big_emb'", "needs 1600 bytes (1.6 KiB: weights 1600 + optimizer state 0)",
                        "as row_wise over ranks 0-1", "only 900 bytes"});
  EXPECT_EQ(msg.find("allow row_wise"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("optimizer with"), std::string::npos) << msg;
  // Three tables of 640 bytes, two ranks: the third finds 900 − 640 = 260 bytes.
  const std::vector<ShardingType> tw = {ShardingType::kTableWise};
  msg = config_error([&] {
    plan_sharding({table("a_emb", 20, 8, tw), table("b_emb", 20, 8, tw), table("c_emb", 20, 8, tw)},
                  topo(2, 2, 1000, 0.1));
  });
  expect_contains(msg, {"'c_emb'", "needs 640 bytes", "only 260 bytes (260 B) available",
                        "minus 640 bytes of tables already placed"});
  // Nothing wrong with two of them.
  EXPECT_EQ(config_error([&] {
              plan_sharding({table("a_emb", 20, 8, tw), table("b_emb", 20, 8, tw)}, topo(2, 2, 1000, 0.1));
            }),
            "");
}

TEST(PlannerTest, SameDecisionsForShuffledInput) {
  std::vector<PlannerTable> tables;
  const int64_t dims[] = {8, 16, 32, 64, 128};
  for (int i = 0; i < 20; ++i) {
    // Pairs of equal tables (ties broken by name), a few huge ones, a few small ones.
    PlannerTable t = table(fmt::format("t{:02d}", i), (i % 5 == 0 ? 4000000 : 20000 * (1 + i / 2)), dims[i % 5]);
    t.pooling_factor = 1 + (i / 2) % 3;
    t.optimizer_bytes_per_row = 4.0 * t.embedding_dim;
    tables.push_back(t);
  }
  tables.push_back(table("tiny", 10, 4));
  PlannerTopology tp = topo(4, 2, 4 * kGiB);
  const ShardingPlan plan = plan_sharding(tables, tp);
  std::mt19937 rng(7);
  for (int round = 0; round < 3; ++round) {
    std::vector<PlannerTable> shuffled = tables;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    const ShardingPlan other = plan_sharding(shuffled, tp);
    for (size_t i = 0; i < shuffled.size(); ++i) {
      EXPECT_EQ(other.tables[i].table, shuffled[i].name);  // output follows the input order
      EXPECT_EQ(other.tables[i], plan.table(shuffled[i].name));
      EXPECT_EQ(other.tables[i].reason, plan.table(shuffled[i].name).reason);
    }
  }
  EXPECT_EQ(ShardingPlan::from_json(plan.to_json(), "test"), plan);
}

// Sets an environment variable for one scope and restores it afterwards.
int64_t mem_total_from_proc() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  char key[64];
  long long kib = 0;
  int64_t out = 0;
  while (f && std::fscanf(f, "%63s %lld kB", key, &kib) == 2) {
    if (std::string(key) == "MemTotal:") out = kib * 1024;
  }
  if (f) std::fclose(f);
  return out;
}

TEST(PlannerTopologyTest, DefaultsFromUnsetEnvironment) {
  ScopedEnv a("INTRA_NODE_BANDWIDTH", nullptr), b("CROSS_NODE_BANDWIDTH", nullptr),
      c("STORAGE_RESERVE_PERCENT", nullptr);
  const PlannerTopology t = topology_from_env(8, 4, 256);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.local_world_size, 4);
  EXPECT_EQ(t.batch_size, 256);
  EXPECT_DOUBLE_EQ(t.intra_node_bandwidth, 600.0 * kGiB);
  EXPECT_DOUBLE_EQ(t.cross_node_bandwidth, 12.5 * kGiB);
  EXPECT_DOUBLE_EQ(t.storage_reserve_percent, 0.15);
  const int64_t total = mem_total_from_proc();
  ASSERT_GT(total, 0);
  EXPECT_EQ(t.memory_per_rank_bytes, total / 4);
}

TEST(PlannerTopologyTest, ValuesFromEnvironment) {
  // Bandwidths in bytes per millisecond, as TorchEasyRec passes them to TorchRec.
  ScopedEnv a("INTRA_NODE_BANDWIDTH", "2000"), b("CROSS_NODE_BANDWIDTH", " 1.5e3"), c("STORAGE_RESERVE_PERCENT", "0.3");
  const PlannerTopology t = topology_from_env(2, 1, 8);
  EXPECT_DOUBLE_EQ(t.intra_node_bandwidth, 2e6);
  EXPECT_DOUBLE_EQ(t.cross_node_bandwidth, 1.5e6);
  EXPECT_DOUBLE_EQ(t.storage_reserve_percent, 0.3);
}

TEST(PlannerTopologyTest, BadValuesNameTheVariable) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"INTRA_NODE_BANDWIDTH", "fast"},    {"INTRA_NODE_BANDWIDTH", "-5"},    {"INTRA_NODE_BANDWIDTH", ""},
      {"CROSS_NODE_BANDWIDTH", "0"},       {"CROSS_NODE_BANDWIDTH", "12GB"},  {"STORAGE_RESERVE_PERCENT", "15"},
      {"STORAGE_RESERVE_PERCENT", "-0.1"}, {"STORAGE_RESERVE_PERCENT", "nan"}};
  for (const auto& [name, value] : bad) {
    ScopedEnv a("INTRA_NODE_BANDWIDTH", nullptr), b("CROSS_NODE_BANDWIDTH", nullptr),
        c("STORAGE_RESERVE_PERCENT", nullptr);
    ScopedEnv set(name, value);
    const std::string msg = config_error([] { topology_from_env(2, 2, 8); });
    EXPECT_NE(msg.find(name), std::string::npos) << name << "='" << value << "': " << msg;
  }
}

TEST(PlannerTest, FormatPlanListsEveryTableAndRank) {
  std::vector<PlannerTable> tables = {table("user_id_emb", 10000, 64), table("item_id_emb", 20000, 32),
                                      table("cate_emb", 100, 8), table("huge", 10, 4)};
  tables[0].pooling_factor = 2.5;  // measured; the others keep the estimate of 1
  tables[0].pooling_measured = true;
  const PlannerTopology tp = topo(4, 2, kGiB);
  const ShardingPlan plan = plan_sharding(tables, tp);
  const std::string text = format_plan(plan, tables, tp);
  std::istringstream lines(text);
  std::string line, header;
  std::getline(lines, line);  // title
  std::getline(lines, header);
  expect_contains(header, {"table", "rows x dim", "ids/sample", "sharding", "ranks", "MiB per shard", "reason"});
  std::getline(lines, line);  // ----
  EXPECT_EQ(line.find_first_not_of('-'), std::string::npos);
  // One line per table, the sharding column aligned with the header's.
  for (const TableSharding& t : plan.tables) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line.rfind(t.table, 0), 0u) << line;
    EXPECT_EQ(line.find(sharding_type_name(t.type)), header.find("sharding")) << line;
    EXPECT_NE(line.find(t.reason), std::string::npos);
    EXPECT_NE(line.find(t.table == "user_id_emb" ? " 2.50 " : " 1 (est.) "), std::string::npos) << line;
  }
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(std::getline(lines, line));
    expect_contains(line, {"rank " + std::to_string(r) + ":", "MiB", "ms per step"});
  }
  EXPECT_FALSE(std::getline(lines, line));
  // user_id_emb alone: 10000 × 64 × 4 bytes = 2.4 MiB on its rank.
  expect_contains(text, {"10000 x 64", "2.4"});
}

}  // namespace planner_test
}  // namespace tzrec::dist
