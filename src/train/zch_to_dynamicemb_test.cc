// zch → dynamicemb checkpoint conversion (TorchEasyRec's tools/dynamicemb/zch_to_dynamicemb_convert,
// docs/tzrec-compatibility.md §5.13). The source states are built by hand in the layout of §5.12:
// place i of `_mch_sorted_raw_ids` holds an id (INT64_MAX: empty; the last place is the sentinel)
// and owns row `_mch_remapped_ids_mapping[i]` of the weight; the expected ids, rows and scores
// below follow from that layout and from the file comment of zch_to_dynamicemb.h (LFU ←
// `_mch_counts`, STEP ← `_mch_last_access_iter`, else 0), as TorchEasyRec's `_derive_scores` does.
#include "train/zch_to_dynamicemb.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/checkpoint.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "models/testing.h"

namespace tzrec::train {
namespace zch_to_dynamicemb_test {

using models::testing::error_of;

namespace fs = std::filesystem;
constexpr int64_t kEmpty = std::numeric_limits<int64_t>::max();

torch::Tensor ids_tensor(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kInt64); }
// S = 8 places holding `ids` first, then empty places (the last one the sentinel).
torch::Tensor places_of(std::vector<int64_t> ids) {
  ids.resize(8, kEmpty);
  return ids_tensor(ids);
}

// Weight [rows, 2] whose row r is (10 r, 10 r + 1): a copied row tells where it came from.
torch::Tensor numbered_weight(int64_t rows) {
  return torch::arange(rows * 2, torch::kFloat32).reshape({rows, 2}) +
         torch::arange(rows, torch::kFloat32).unsqueeze(1) * 8;
}

embedding::DynamicTable make_table(int64_t max_capacity, embedding::DynamicScoreStrategy strategy,
                                   int64_t bucket_capacity = 16) {
  embedding::DynamicTableOptions o;
  o.max_capacity = max_capacity;
  o.bucket_capacity = bucket_capacity;
  o.score_strategy = strategy;
  o.table_name = "t";
  return embedding::DynamicTable(o);
}

// The row the table gives `id` (-1: not in the table).
int64_t row_of(const embedding::DynamicTable& table, int64_t id) {
  int64_t row = -1;
  table.find(&id, 1, &row);
  return row;
}

// id → score of the table's exported state.
std::map<int64_t, int64_t> scores_of(const embedding::DynamicTable& table) {
  const embedding::DynamicTableState s = table.export_state();
  std::map<int64_t, int64_t> out;
  for (size_t i = 0; i < s.keys.size(); ++i) out[s.keys[i]] = s.scores[i];
  return out;
}

// S = 8: four ids held, three empty places, the sentinel last.
ZchTableState small_lfu_state() {
  ZchTableState s;
  s.sorted_raw_ids = ids_tensor({-5, 3, 42, 1000, kEmpty, kEmpty, kEmpty, kEmpty});
  s.remapped_ids_mapping = ids_tensor({5, 0, 2, 6, 1, 3, 4, 7});
  s.counts = ids_tensor({4, 9, 1, 2, 0, 0, 0, kEmpty});
  s.weight = numbered_weight(8);
  return s;
}

TEST(ConvertZchTable, HeldIdsGetTheirRowsAndLfuScores) {
  const ZchTableState source = small_lfu_state();
  embedding::DynamicTable table = make_table(32, embedding::DynamicScoreStrategy::kLfu);
  torch::Tensor weight = torch::full({table.max_capacity() + 2, 2}, -1.0f);
  const ZchTableConversion r = convert_zch_table(source, table, weight, "src");
  EXPECT_EQ(r.held, 4);
  EXPECT_EQ(r.loaded, 4);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_EQ(r.score_source, "_mch_counts");
  EXPECT_EQ(table.size(), 4);
  // id → (its zch row, its count).
  const std::map<int64_t, std::pair<int64_t, int64_t>> expected = {
      {-5, {5, 4}}, {3, {0, 9}}, {42, {2, 1}}, {1000, {6, 2}}};
  EXPECT_EQ(scores_of(table), (std::map<int64_t, int64_t>{{-5, 4}, {3, 9}, {42, 1}, {1000, 2}}));
  std::vector<int64_t> rows;
  for (const auto& [id, zch] : expected) {
    const int64_t row = row_of(table, id);
    ASSERT_GE(row, 0) << id;
    rows.push_back(row);
    EXPECT_TRUE(weight[row].equal(source.weight[zch.first])) << "id " << id;
  }
  // kCompact: rows 0..3; every other row of the weight is untouched.
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(weight.slice(0, 4).eq(-1.0f).all().item<bool>());
  // Empty places (INT64_MAX) are no ids.
  EXPECT_EQ(row_of(table, kEmpty), -1);
}

TEST(ConvertZchTable, StepScoresFromLastAccessAndTheSentinelIsNeverTaken) {
  ZchTableState source;
  // The last place is the sentinel whatever it holds: its row (S - 1) is read by every id not in
  // the table, so it belongs to no id.
  source.sorted_raw_ids = ids_tensor({7, 8, kEmpty, 77});
  source.remapped_ids_mapping = ids_tensor({1, 0, 2, 3});
  source.last_access_iter = ids_tensor({11, 12, 0, 12});
  source.weight = numbered_weight(4);
  embedding::DynamicTable table = make_table(16, embedding::DynamicScoreStrategy::kStep);
  torch::Tensor weight = torch::zeros({table.max_capacity() + 2, 2});
  const ZchTableConversion r = convert_zch_table(source, table, weight, "src");
  EXPECT_EQ(r.held, 2);
  EXPECT_EQ(r.score_source, "_mch_last_access_iter");
  EXPECT_EQ(scores_of(table), (std::map<int64_t, int64_t>{{7, 11}, {8, 12}}));
  EXPECT_EQ(row_of(table, 77), -1);
  EXPECT_TRUE(weight[row_of(table, 7)].equal(source.weight[1]));
  EXPECT_TRUE(weight[row_of(table, 8)].equal(source.weight[0]));
}

TEST(ConvertZchTable, ScoresStartAtZeroWithoutACounterpart) {
  // An lfu source has no _mch_last_access_iter: a STEP target starts every score at 0; a
  // TIMESTAMP target has no counterpart at all.
  for (auto strategy : {embedding::DynamicScoreStrategy::kStep, embedding::DynamicScoreStrategy::kTimestamp,
                        embedding::DynamicScoreStrategy::kNoEviction}) {
    embedding::DynamicTable table = make_table(16, strategy);
    torch::Tensor weight = torch::zeros({table.max_capacity() + 2, 2});
    const ZchTableConversion r = convert_zch_table(small_lfu_state(), table, weight, "src");
    EXPECT_EQ(r.score_source, "");
    EXPECT_EQ(r.loaded, 4);
    if (strategy != embedding::DynamicScoreStrategy::kTimestamp) {
      EXPECT_EQ(scores_of(table), (std::map<int64_t, int64_t>{{-5, 0}, {3, 0}, {42, 0}, {1000, 0}}));
    }
  }
  // An lru source into an LFU target: no counts either.
  ZchTableState lru = small_lfu_state();
  lru.last_access_iter = lru.counts;
  lru.counts = torch::Tensor();
  embedding::DynamicTable table = make_table(16, embedding::DynamicScoreStrategy::kLfu);
  torch::Tensor weight = torch::zeros({table.max_capacity() + 2, 2});
  EXPECT_EQ(convert_zch_table(lru, table, weight, "src").score_source, "");
  EXPECT_EQ(scores_of(table).at(3), 0);
}

TEST(ConvertZchTable, IdsPastTheCapacityAreDroppedLowestScoresFirst) {
  // 21 ids into a table of one 16-slot bucket (max_capacity 16): the 16 highest counts stay
  // (DynamicTable::load keeps the highest scores of a full bucket), 5 are dropped.
  const int64_t places = 22;
  std::vector<int64_t> ids, mapping, counts;
  for (int64_t i = 0; i < places - 1; ++i) {
    ids.push_back(100 + i);
    mapping.push_back(places - 2 - i);  // rows reversed
    counts.push_back(1 + (i * 5) % 21);  // a permutation of 1..21
  }
  ids.push_back(kEmpty);
  mapping.push_back(places - 1);
  counts.push_back(kEmpty);
  ZchTableState source;
  source.sorted_raw_ids = ids_tensor(ids);
  source.remapped_ids_mapping = ids_tensor(mapping);
  source.counts = ids_tensor(counts);
  source.weight = numbered_weight(places);
  embedding::DynamicTable table = make_table(16, embedding::DynamicScoreStrategy::kLfu);
  ASSERT_EQ(table.max_capacity(), 16);
  torch::Tensor weight = torch::zeros({table.max_capacity() + 2, 2});
  const ZchTableConversion r = convert_zch_table(source, table, weight, "src");
  EXPECT_EQ(r.held, 21);
  EXPECT_EQ(r.loaded, 16);
  EXPECT_EQ(r.dropped, 5);
  for (int64_t i = 0; i < places - 1; ++i) {
    const int64_t row = row_of(table, ids[i]);
    if (counts[i] <= 5) {
      EXPECT_EQ(row, -1) << "id " << ids[i] << " count " << counts[i];
    } else {
      ASSERT_GE(row, 0) << "id " << ids[i] << " count " << counts[i];
      EXPECT_TRUE(weight[row].equal(source.weight[mapping[i]])) << ids[i];
    }
  }
}

TEST(ConvertZchTable, MalformedStateIsACheckpointError) {
  embedding::DynamicTable table = make_table(16, embedding::DynamicScoreStrategy::kLfu);
  torch::Tensor weight = torch::zeros({table.max_capacity() + 2, 2});
  ZchTableState short_mapping = small_lfu_state();
  short_mapping.remapped_ids_mapping = ids_tensor({0, 1});
  EXPECT_THROW(convert_zch_table(short_mapping, table, weight, "src"), CheckpointError);
  ZchTableState wide = small_lfu_state();
  wide.weight = torch::zeros({8, 3});
  try {
    convert_zch_table(wide, table, weight, "ckpt: t");
    ADD_FAILURE() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("ckpt: t: the zch table's weight is [8, 3]"), std::string::npos) << e.what();
  }
  ZchTableState far_row = small_lfu_state();
  far_row.remapped_ids_mapping = ids_tensor({5, 0, 9, 6, 1, 3, 4, 7});
  EXPECT_THROW(convert_zch_table(far_row, table, weight, "src"), CheckpointError);
  EXPECT_EQ(table.size(), 0);  // nothing loaded by the failed calls
}

// A MultiTowerDIN over c0 (zch lfu ↔ dynamicemb LFU, in the DEEP group and in the SEQUENCE group
// as query and history), c1 (zch lru ↔ dynamicemb STEP) and c2 (a plain table).
std::string din_config(const std::string& c0_table, const std::string& c1_table, int64_t c1_dim = 4) {
  return std::string(config::testing::kTrainAndData) +
         "feature_configs { id_feature { feature_name: \"c0\" embedding_dim: 4 " + c0_table + " } }\n" +
         "feature_configs { id_feature { feature_name: \"c1\" embedding_dim: " + std::to_string(c1_dim) + " " +
         c1_table + " } }\n" + R"(
feature_configs { id_feature { feature_name: "c2" num_buckets: 10 embedding_dim: 4 } }
feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: "|"
  features { id_feature { feature_name: "c0" embedding_dim: 4 )" +
         c0_table + R"( } } } }
model_config {
  feature_groups { group_name: "deep" feature_names: ["c0", "c1", "c2"] group_type: DEEP }
  feature_groups { group_name: "seq" feature_names: ["c0", "s__c0"] group_type: SEQUENCE }
  multi_tower_din {
    towers { input: "deep" mlp { hidden_units: [4] } }
    din_towers { input: "seq" attn_mlp { hidden_units: [4] } }
    final { hidden_units: [2] }
  }
  losses { binary_cross_entropy {} }
}
)";
}
const char kZchLfu[] = "zch { zch_size: 8 lfu {} }";
const char kZchLru[] = "zch { zch_size: 8 lru {} }";
const char kDynLfu[] = "dynamicemb { max_capacity: 32 bucket_capacity: 16 score_strategy: \"LFU\" }";
const char kDynStep[] = "dynamicemb { max_capacity: 32 bucket_capacity: 16 score_strategy: \"STEP\" }";

const std::string kDeep = "embedding_group.emb_impls.__BASE__.";
const std::string kSeq = "embedding_group.seq_emb_impls.__BASE__.";
std::string mch(const std::string& collection, const std::string& table, const std::string& buffer) {
  return collection + "._managed_collision_collection._managed_collision_modules." + table + "." + buffer;
}

// The source model's tensors (cloned) with hand-built zch states: DEEP c0_emb holds -5, 3, 42,
// 1000 (small_lfu_state); DEEP c1_emb (lru) holds 7 and 8; the sequence group's query table c0_emb
// holds 3 and 42, its history table s__c0_emb (the grouped sequence's sub-feature s__c0) 7 and 42.
// Steps: 12 for the DEEP tables, 9 for the sequence tables.
std::map<std::string, torch::Tensor> source_tensors() {
  TrainingSession source(config::parse_pipeline_config_text(din_config(kZchLfu, kZchLru), "src.config"), false);
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, tensor] : source.model_tensors()) out.emplace(name, tensor.detach().clone());
  const ZchTableState lfu = small_lfu_state();
  const std::string deep = kDeep + "mc_ebc";
  out.at(mch(deep, "c0_emb", "_mch_sorted_raw_ids")).copy_(lfu.sorted_raw_ids);
  out.at(mch(deep, "c0_emb", "_mch_remapped_ids_mapping")).copy_(lfu.remapped_ids_mapping);
  out.at(mch(deep, "c0_emb", "_mch_counts")).copy_(lfu.counts);
  out.at(mch(deep, "c0_emb", "_current_iter_tensor")).fill_(12);
  out.at(mch(deep, "c1_emb", "_mch_sorted_raw_ids")).copy_(places_of({7, 8}));
  out.at(mch(deep, "c1_emb", "_mch_remapped_ids_mapping")).copy_(ids_tensor({3, 1, 0, 2, 4, 5, 6, 7}));
  out.at(mch(deep, "c1_emb", "_mch_last_access_iter")).copy_(ids_tensor({10, 12, 0, 0, 0, 0, 0, 12}));
  out.at(mch(deep, "c1_emb", "_current_iter_tensor")).fill_(12);
  const std::string seq = kSeq + "mc_ec_dict.4";
  out.at(mch(seq, "c0_emb", "_mch_sorted_raw_ids")).copy_(places_of({3, 42}));
  out.at(mch(seq, "c0_emb", "_mch_remapped_ids_mapping")).copy_(ids_tensor({6, 2, 0, 1, 3, 4, 5, 7}));
  out.at(mch(seq, "c0_emb", "_mch_counts")).copy_(ids_tensor({3, 5, 0, 0, 0, 0, 0, kEmpty}));
  out.at(mch(seq, "c0_emb", "_current_iter_tensor")).fill_(9);
  out.at(mch(seq, "s__c0_emb", "_mch_sorted_raw_ids")).copy_(places_of({7, 42}));
  out.at(mch(seq, "s__c0_emb", "_mch_remapped_ids_mapping")).copy_(ids_tensor({4, 1, 0, 2, 3, 5, 6, 7}));
  out.at(mch(seq, "s__c0_emb", "_mch_counts")).copy_(ids_tensor({2, 6, 0, 0, 0, 0, 0, kEmpty}));
  out.at(mch(seq, "s__c0_emb", "_current_iter_tensor")).fill_(9);
  return out;
}

// Checks a target (dynamic) model against source_tensors(): ids, weights, scores, steps, and every
// other tensor equal to the source's.
void expect_converted(TrainingSession& target, const std::map<std::string, torch::Tensor>& source) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [name, tensor] : target.model_tensors()) tensors.emplace(name, tensor);
  struct Case {
    std::string collection, zch_collection, tables;
    std::string table;
    std::map<int64_t, std::pair<int64_t, int64_t>> ids;  // id → (zch row, score)
    int64_t step;
  };
  const std::vector<Case> cases = {
      {kDeep + "dynamicemb_ebc", kDeep + "mc_ebc", "embedding_bags", "c0_emb",
       {{-5, {5, 4}}, {3, {0, 9}}, {42, {2, 1}}, {1000, {6, 2}}}, 12},
      {kDeep + "dynamicemb_ebc", kDeep + "mc_ebc", "embedding_bags", "c1_emb", {{7, {3, 10}}, {8, {1, 12}}}, 12},
      {kSeq + "dynamicemb_ec_dict.4", kSeq + "mc_ec_dict.4", "embeddings", "c0_emb", {{3, {6, 3}}, {42, {2, 5}}}, 9},
      {kSeq + "dynamicemb_ec_dict.4", kSeq + "mc_ec_dict.4", "embeddings", "s__c0_emb", {{7, {4, 2}}, {42, {1, 6}}}, 9},
  };
  std::set<std::string> checked;
  for (const Case& c : cases) {
    const std::string state = c.collection + ".dynamic_tables." + c.table + ".";
    const std::string weight = c.collection + "._embedding_module." + c.tables + "." + c.table + ".weight";
    const std::string zch_weight = c.zch_collection + "._embedding_module." + c.tables + "." + c.table + ".weight";
    ASSERT_TRUE(tensors.count(weight)) << weight;
    EXPECT_EQ(tensors.at(state + "step").item<int64_t>(), c.step) << state;
    const torch::Tensor live = tensors.at(state + "row_live");
    const torch::Tensor keys = tensors.at(state + "row_keys");
    const torch::Tensor scores = tensors.at(state + "row_scores");
    EXPECT_EQ(live.sum().item<int64_t>(), static_cast<int64_t>(c.ids.size())) << state;
    for (int64_t row = 0; row < live.size(0); ++row) {
      if (live[row].item<int64_t>() == 0) continue;
      const int64_t id = keys[row].item<int64_t>();
      ASSERT_TRUE(c.ids.count(id)) << state << " holds unexpected id " << id;
      EXPECT_EQ(scores[row].item<int64_t>(), c.ids.at(id).second) << state << " id " << id;
      EXPECT_TRUE(tensors.at(weight)[row].equal(source.at(zch_weight)[c.ids.at(id).first])) << weight << " id " << id;
    }
    checked.insert(weight);
    for (const char* s : {"step", "row_keys", "row_scores", "row_live", "admission_keys", "admission_counts"}) {
      checked.insert(state + s);
    }
  }
  // Everything else: the source's tensor of the same name.
  for (const auto& [name, tensor] : tensors) {
    if (checked.count(name)) continue;
    ASSERT_TRUE(source.count(name)) << name << " is not in the source";
    EXPECT_TRUE(tensor.equal(source.at(name))) << name;
  }
}

TEST(ConvertZchToDynamicemb, MigratesZchTablesAndCopiesTheRest) {
  const auto source = source_tensors();
  TrainingSession target(config::parse_pipeline_config_text(din_config(kDynLfu, kDynStep), "tgt.config"), false);
  const ZchToDynamicembReport report = convert_zch_to_dynamicemb(target, "tgt.config", source, "src/model.ckpt-8");
  ASSERT_EQ(report.tables.size(), 4u);
  EXPECT_TRUE(report.missing.empty()) << report.missing.front();
  EXPECT_TRUE(report.mismatched.empty());
  EXPECT_TRUE(report.unconverted.empty());
  std::map<std::string, ZchToDynamicTable> by;
  for (const auto& t : report.tables) by[t.group + "/" + t.table] = t;
  const ZchToDynamicTable& deep_c0 = by.at("embedding_group.emb_impls.__BASE__/c0_emb");
  EXPECT_EQ(deep_c0.source_weight, kDeep + "mc_ebc._embedding_module.embedding_bags.c0_emb.weight");
  EXPECT_EQ(deep_c0.target_weight, kDeep + "dynamicemb_ebc._embedding_module.embedding_bags.c0_emb.weight");
  EXPECT_EQ(deep_c0.result.held, 4);
  EXPECT_EQ(deep_c0.result.score_source, "_mch_counts");
  EXPECT_EQ(by.at("embedding_group.emb_impls.__BASE__/c1_emb").result.score_source, "_mch_last_access_iter");
  EXPECT_EQ(by.at("embedding_group.seq_emb_impls.__BASE__/c0_emb").result.held, 2);
  EXPECT_EQ(by.at("embedding_group.seq_emb_impls.__BASE__/s__c0_emb").result.held, 2);
  expect_converted(target, source);
  // The dynamic tables' indexes hold the ids (what predict looks them up with).
  for (const auto& member : target.model().embeddings().members()) {
    for (auto& [prefix, collection] : member.group->dynamic_collections()) {
      if (prefix.empty()) EXPECT_GE(row_of(collection->dynamic_table("c0_emb"), 1000), 0);
      if (!prefix.empty()) EXPECT_EQ(row_of(collection->dynamic_table("c0_emb"), 1000), -1);
    }
  }
}

TEST(ConvertZchToDynamicemb, RefusesTablesThatDoNotMatch) {
  const auto source = source_tensors();
  {  // c1 dim 8 in the target, 4 in the source.
    TrainingSession target(config::parse_pipeline_config_text(din_config(kDynLfu, kDynStep, 8), "tgt.config"), false);
    const std::string msg = error_of([&] { convert_zch_to_dynamicemb(target, "tgt.config", source, "src"); });
    EXPECT_NE(msg.find("tgt.config: dynamic embedding table 'c1_emb' (embedding_group.emb_impls.__BASE__) has "
                       "embedding_dim 8, but its zch table in src has 4"),
              std::string::npos)
        << msg;
  }
  {  // c1 dynamic in the target, plain (hash_bucket_size) in the source.
    TrainingSession source_plain(
        config::parse_pipeline_config_text(din_config(kZchLfu, "hash_bucket_size: 8"), "src.config"), false);
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& [name, tensor] : source_plain.model_tensors()) tensors.emplace(name, tensor);
    TrainingSession target(config::parse_pipeline_config_text(din_config(kDynLfu, kDynStep), "tgt.config"), false);
    const std::string msg = error_of([&] { convert_zch_to_dynamicemb(target, "tgt.config", tensors, "src"); });
    EXPECT_NE(msg.find("tgt.config: dynamic embedding table 'c1_emb' (embedding_group.emb_impls.__BASE__) has no zch "
                       "table of that name in src"),
              std::string::npos)
        << msg;
  }
  {  // No zch table in the source at all.
    TrainingSession target(config::parse_pipeline_config_text(din_config(kDynLfu, kDynStep), "tgt.config"), false);
    std::map<std::string, torch::Tensor> none = {{"x", torch::zeros({1})}};
    EXPECT_THROW(convert_zch_to_dynamicemb(target, "tgt.config", none, "src"), CheckpointError);
  }
}

// The command on files: configs, a saved source checkpoint, {save_dir}/model.ckpt-0.
class ZchToDynamicembCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tzrec_zch_to_dynamicemb_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write(dir_ / "src.config", din_config(kZchLfu, kZchLru));
    write(dir_ / "tgt.config", din_config(kDynLfu, kDynStep));
    source_ = source_tensors();
    checkpointing::CheckpointData data;
    data.step = 8;
    data.model = source_;
    checkpointing::save_checkpoint((dir_ / "src_model").string(), data);
    options_.source_checkpoint_path = (dir_ / "src_model").string();  // a model_dir: its latest checkpoint
    options_.source_pipeline_config_path = (dir_ / "src.config").string();
    options_.target_pipeline_config_path = (dir_ / "tgt.config").string();
    options_.save_dir = (dir_ / "out").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  fs::path dir_;
  std::map<std::string, torch::Tensor> source_;
  ZchToDynamicembOptions options_;
};

TEST_F(ZchToDynamicembCommand, WritesACheckpointOfTheTargetThatRestores) {
  const std::string out = zch_to_dynamicemb_convert(options_);
  EXPECT_EQ(out, (dir_ / "out" / "model.ckpt-0").string());
  const checkpointing::CheckpointData saved = checkpointing::load_checkpoint(out);
  EXPECT_EQ(saved.step, 0);
  EXPECT_TRUE(saved.optimizer.empty());
  // A fresh target model restored from it (as eval / predict / fine-tuning load it).
  TrainingSession target(config::load_pipeline_config(options_.target_pipeline_config_path), false);
  target.restore(saved, /*restore_optimizer=*/false);
  expect_converted(target, source_);
}

TEST_F(ZchToDynamicembCommand, OneErrorLineForEachBadInput) {
  ZchToDynamicembOptions o = options_;
  o.world_size = 0;
  EXPECT_EQ(error_of([&] { zch_to_dynamicemb_convert(o); }), "--world_size must be at least 1, got 0");
  o = options_;
  o.source_checkpoint_path = (dir_ / "absent").string();
  EXPECT_THROW(zch_to_dynamicemb_convert(o), CheckpointError);
  o = options_;
  o.target_pipeline_config_path = (dir_ / "absent.config").string();
  EXPECT_THROW(zch_to_dynamicemb_convert(o), ConfigError);
  o = options_;
  o.source_pipeline_config_path = options_.target_pipeline_config_path;  // no zch feature
  EXPECT_NE(error_of([&] { zch_to_dynamicemb_convert(o); }).find("tgt.config: no feature has zch { }"),
            std::string::npos);
  o = options_;
  o.target_pipeline_config_path = options_.source_pipeline_config_path;  // no dynamicemb feature
  EXPECT_NE(error_of([&] { zch_to_dynamicemb_convert(o); }).find("src.config: no feature has dynamicemb { }"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out"));

  zch_to_dynamicemb_convert(options_);
  const std::string msg = error_of([&] { zch_to_dynamicemb_convert(options_); });
  EXPECT_NE(msg.find("model.ckpt-0 already exists; remove it or choose another --save_dir"), std::string::npos) << msg;
}

}  // namespace zch_to_dynamicemb_test
}  // namespace tzrec::train
