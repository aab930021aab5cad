#include "dist/sharding_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace tzrec::dist {
namespace sharding_plan_test {

// One table of every type over 4 ranks, geometry written out by hand.
ShardingPlan example_plan() {
  ShardingPlan p;
  p.world_size = 4;
  TableSharding dp{"dp_emb", 5, 8, ShardingType::kDataParallel, {}, "small"};
  for (int r = 0; r < 4; ++r) dp.shards.push_back({r, 0, 5, 0, 8});
  p.tables.push_back(dp);
  p.tables.push_back({"tw_emb", 7, 16, ShardingType::kTableWise, {{2, 0, 7, 0, 16}}, "fits"});
  // 10 rows over 4 ranks: blocks of ceil(10 / 4) = 3 → 3, 3, 3, 1.
  p.tables.push_back({"rw_emb",
                      10,
                      4,
                      ShardingType::kRowWise,
                      {{0, 0, 3, 0, 4}, {1, 3, 3, 0, 4}, {2, 6, 3, 0, 4}, {3, 9, 1, 0, 4}},
                      "big"});
  // 2 rows over 4 ranks: 1, 1, then two empty blocks at offset 2.
  p.tables.push_back({"tiny_rw_emb",
                      2,
                      4,
                      ShardingType::kRowWise,
                      {{0, 0, 1, 0, 4}, {1, 1, 1, 0, 4}, {2, 2, 0, 0, 4}, {3, 2, 0, 0, 4}},
                      ""});
  p.tables.push_back({"trw_emb", 10, 8, ShardingType::kTableRowWise, {{2, 0, 5, 0, 8}, {3, 5, 5, 0, 8}}, "node 1"});
  p.tables.push_back({"cw_emb", 6, 20, ShardingType::kColumnWise, {{1, 0, 6, 0, 12}, {3, 0, 6, 12, 8}}, "wide"});
  return p;
}

// from_json of `json` must throw CheckpointError whose message contains every one of `parts`.
void expect_rejected(const nlohmann::json& json, const std::vector<std::string>& parts) {
  try {
    ShardingPlan::from_json(json, "ckpt/plan.json");
    FAIL() << "accepted: " << json.dump();
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ckpt/plan.json"), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

// The JSON of a plan with the single table `name` given as `table` (world_size 4).
nlohmann::json single(const nlohmann::json& table) {
  return {{"world_size", 4}, {"tables", nlohmann::json::array({table})}};
}

nlohmann::json row_table(const std::vector<std::vector<int64_t>>& blocks) {  // {rank, row_offset, rows}
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& b : blocks) {
    shards.push_back({{"rank", b[0]}, {"row_offset", b[1]}, {"rows", b[2]}, {"col_offset", 0}, {"cols", 4}});
  }
  return {{"table", "user_emb"},         {"num_embeddings", 10}, {"embedding_dim", 4},
          {"sharding_type", "row_wise"}, {"reason", ""},         {"shards", shards}};
}

TEST(ShardingPlanTest, TypeNamesRoundTrip) {
  const std::vector<std::pair<ShardingType, std::string>> names = {{ShardingType::kDataParallel, "data_parallel"},
                                                                   {ShardingType::kTableWise, "table_wise"},
                                                                   {ShardingType::kRowWise, "row_wise"},
                                                                   {ShardingType::kTableRowWise, "table_row_wise"},
                                                                   {ShardingType::kColumnWise, "column_wise"}};
  for (const auto& [type, name] : names) {
    EXPECT_EQ(sharding_type_name(type), name);
    EXPECT_EQ(parse_sharding_type(name, "x"), type);
  }
  try {
    parse_sharding_type("grid_shard", "feature_configs[2].id_feature.embedding_constraints.sharding_types[0]");
    FAIL();
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("feature_configs[2].id_feature.embedding_constraints.sharding_types[0]"), std::string::npos);
    EXPECT_NE(msg.find("'grid_shard'"), std::string::npos);
    EXPECT_NE(msg.find("table_row_wise"), std::string::npos) << msg;  // lists the valid names
  }
}

TEST(ShardingPlanTest, JsonRoundTripAllTypes) {
  const ShardingPlan plan = example_plan();
  const nlohmann::json j = plan.to_json();
  EXPECT_EQ(j["world_size"], 4);
  ASSERT_EQ(j["tables"].size(), 6u);
  EXPECT_EQ(j["tables"][0]["sharding_type"], "data_parallel");
  EXPECT_EQ(j["tables"][2]["sharding_type"], "row_wise");
  EXPECT_EQ(j["tables"][4]["sharding_type"], "table_row_wise");
  EXPECT_EQ(j["tables"][5]["shards"][1],
            nlohmann::json({{"rank", 3}, {"row_offset", 0}, {"rows", 6}, {"col_offset", 12}, {"cols", 8}}));
  EXPECT_EQ(j["tables"][1]["reason"], "fits");

  const ShardingPlan back = ShardingPlan::from_json(nlohmann::json::parse(j.dump()), "plan.json");
  EXPECT_EQ(back, plan);
  for (size_t i = 0; i < plan.tables.size(); ++i) EXPECT_EQ(back.tables[i].reason, plan.tables[i].reason);
  EXPECT_EQ(back.table("cw_emb").shards[1].col_offset, 12);
  EXPECT_EQ(back.table("tiny_rw_emb").shards[3], (Shard{3, 2, 0, 0, 4}));
}

TEST(ShardingPlanTest, TableLookupNamesMissingTable) {
  const ShardingPlan plan = example_plan();
  EXPECT_EQ(plan.table("rw_emb").type, ShardingType::kRowWise);
  try {
    plan.table("item_emb");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'item_emb'"), std::string::npos) << e.what();
  }
}

TEST(ShardingPlanTest, RejectsOverlappingShards) {
  expect_rejected(single(row_table({{0, 0, 6}, {1, 5, 5}})), {"table 'user_emb'", "overlaps", "rows [5, 6)"});
}

TEST(ShardingPlanTest, RejectsGaps) {
  expect_rejected(single(row_table({{0, 0, 3}, {1, 4, 6}})), {"table 'user_emb'", "gap", "rows [3, 4)"});
  expect_rejected(single(row_table({{0, 0, 3}, {1, 3, 5}})), {"table 'user_emb'", "gap", "rows [8, 10)"});
  // Column blocks: columns [12, 16) of a 20-wide table held by no one.
  nlohmann::json cw = example_plan().to_json()["tables"][5];
  cw["shards"][1]["col_offset"] = 16;
  cw["shards"][1]["cols"] = 4;
  expect_rejected(single(cw), {"table 'cw_emb'", "gap", "columns [12, 16)"});
}

TEST(ShardingPlanTest, RejectsRankOutOfRange) {
  expect_rejected(single(row_table({{0, 0, 5}, {4, 5, 5}})),
                  {"table 'user_emb' shards[1]", "rank 4 is out of range [0, 4)"});
  expect_rejected(single(row_table({{0, 0, 5}, {-1, 5, 5}})), {"table 'user_emb' shards[1]", "rank -1"});
}

TEST(ShardingPlanTest, RejectsDataParallelMissingRank) {
  nlohmann::json dp = example_plan().to_json()["tables"][0];
  dp["shards"].erase(2);
  expect_rejected(single(dp), {"table 'dp_emb'", "data_parallel", "one full shard per rank", "3 shards"});
  // Four shards, but one is not the full table.
  nlohmann::json partial = example_plan().to_json()["tables"][0];
  partial["shards"][3]["rows"] = 4;
  expect_rejected(single(partial), {"table 'dp_emb' shards[3]", "full table on rank 3"});
}

TEST(ShardingPlanTest, RejectsUnknownTypeName) {
  nlohmann::json t = row_table({{0, 0, 10}});
  t["sharding_type"] = "grid_shard";
  expect_rejected(single(t),
                  {"table 'user_emb'", "'sharding_type'", "unknown sharding type 'grid_shard'", "column_wise"});
}

TEST(ShardingPlanTest, RejectsMissingOrMistypedFields) {
  nlohmann::json t = row_table({{0, 0, 5}, {1, 5, 5}});
  t["shards"][1].erase("cols");
  expect_rejected(single(t), {"table 'user_emb' shards[1]", "missing field 'cols'"});

  nlohmann::json no_dim = row_table({{0, 0, 10}});
  no_dim.erase("embedding_dim");
  expect_rejected(single(no_dim), {"table 'user_emb'", "missing field 'embedding_dim'"});

  expect_rejected({{"tables", nlohmann::json::array()}}, {"missing field 'world_size'"});

  nlohmann::json text_rows = row_table({{0, 0, 10}});
  text_rows["shards"][0]["rows"] = "10";
  expect_rejected(single(text_rows), {"table 'user_emb' shards[0]", "field 'rows' must be an integer"});
}

TEST(ShardingPlanTest, RejectsWrongBlockShapes) {
  // A row_wise block that does not span all columns.
  nlohmann::json t = row_table({{0, 0, 10}});
  t["shards"][0]["cols"] = 2;
  expect_rejected(single(t), {"table 'user_emb' shards[0]", "span all 4 columns"});
  // Two blocks on one rank.
  expect_rejected(single(row_table({{1, 0, 5}, {1, 5, 5}})), {"table 'user_emb' shards[1]", "rank 1 holds two blocks"});
  // Out of order.
  expect_rejected(single(row_table({{1, 5, 5}, {0, 0, 5}})), {"ordered by (col_offset, row_offset)"});
  // The same table twice.
  nlohmann::json twice = {{"world_size", 4}, {"tables", {row_table({{0, 0, 10}}), row_table({{0, 0, 10}})}}};
  expect_rejected(twice, {"table 'user_emb'", "appears twice"});
}

}  // namespace sharding_plan_test
}  // namespace tzrec::dist
