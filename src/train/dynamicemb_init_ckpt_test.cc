// `create_dynamicemb_init_ckpt` (TorchEasyRec's tools/dynamicemb/create_dynamicemb_init_ckpt,
// docs/tzrec-compatibility.md §5.13). Init tables are written here by hand; the expected raw ids
// come from the rules of dynamicemb_init_table.h: FG_NONE ids as they are, feature generation's
// ids hashed as libstdc++'s std::hash<std::string> modulo 2^63 − 1 (computed with the standard
// library here, not with the engine's hash), and each id's row must hold its line's numbers.
// Checkpoints are read back through fine_tune_restore, as `train_eval --fine_tune_checkpoint`
// reads them.
#include "train/dynamicemb_init_ckpt.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/checkpoint.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "data/testing_util.h"
#include "models/testing.h"
#include "train/fine_tune.h"
#include "train/model_dynamic_tables.h"

namespace tzrec::train {
namespace dynamicemb_init_ckpt_test {

using models::testing::error_of;

constexpr uint64_t kMaxHashBucket = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

int64_t hashed(const std::string& id) { return static_cast<int64_t>(std::hash<std::string>{}(id) % kMaxHashBucket); }

// A MultiTowerDIN: c0 (dynamic, STEP, init table `init`) in the DEEP group and as the SEQUENCE
// group's query; the grouped sequence s's c0 (its own table s__c0_emb, no init table); c1 (dynamic,
// no init table); c2 a plain table.
// An empty `init` leaves init_table out.
std::string din_config(const std::string& fg_mode, const std::string& init) {
  std::string c = config::testing::kTrainAndData;
  c.replace(c.find("label_fields"), 0, "fg_mode: " + fg_mode + " ");
  return c + R"(
feature_configs { id_feature { feature_name: "c0" expression: "user:c0" embedding_dim: 4
  dynamicemb { max_capacity: 64 bucket_capacity: 16 )" + (init.empty() ? "" : "init_table: \"" + init + "\"") + R"( } } }
feature_configs { id_feature { feature_name: "c1" expression: "user:c1" embedding_dim: 4
  dynamicemb { max_capacity: 32 bucket_capacity: 16 } } }
feature_configs { id_feature { feature_name: "c2" expression: "user:c2" num_buckets: 10 embedding_dim: 4 } }
feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: "|"
  features { id_feature { feature_name: "c0" expression: "item:c0" embedding_dim: 4
    dynamicemb { max_capacity: 32 bucket_capacity: 16 } } } } }
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

// DeepFM whose c1 (dynamic, init table `init`) is in the WIDE group and in two DEEP groups.
std::string deepfm_config(const std::string& init, const std::string& groups = "") {
  std::string c = config::testing::kTrainAndData;
  c.replace(c.find("label_fields"), 0, "fg_mode: FG_NORMAL ");
  return c + R"(
feature_configs { id_feature { feature_name: "c0" expression: "user:c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" expression: "item:c1" embedding_dim: 4
  dynamicemb { max_capacity: 32 bucket_capacity: 16 init_table: ")" + init + R"(" } } }
model_config {
)" + (groups.empty() ? R"(
  feature_groups { group_name: "wide" feature_names: ["c0", "c1"] group_type: WIDE }
  feature_groups { group_name: "fm" feature_names: ["c0", "c1"] group_type: DEEP }
  feature_groups { group_name: "deep" feature_names: ["c0", "c1"] group_type: DEEP })"
                       : groups) +
         R"(
  deepfm { deep { hidden_units: [8, 4] } final { hidden_units: [4] } }
  losses { binary_cross_entropy {} }
}
)";
}

class InitCkptTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) { return dir_.write(name, text); }
  DynamicembInitCkptOptions options(const std::string& config_text) {
    DynamicembInitCkptOptions o;
    o.pipeline_config_path = write("pipeline.config", config_text);
    o.save_dir = dir_.file("init");
    return o;
  }
  // A training session of `config_path` fine-tuned from `checkpoint`.
  std::unique_ptr<TrainingSession> fine_tuned(const std::string& config_path, const std::string& checkpoint,
                                              FineTuneResult* result = nullptr) {
    auto session =
        std::make_unique<TrainingSession>(config::load_pipeline_config(config_path), /*with_optimizers=*/true);
    FineTuneOptions o;
    o.checkpoint_path = checkpoint;
    const FineTuneResult r = fine_tune_restore(*session, o);
    if (result != nullptr) *result = r;
    return session;
  }

  data::testing::TempDir dir_;
};

// The table of `session` named `table` in the group whose path starts with `group`.
ModelDynamicTable table_of(TrainingSession& session, const std::string& group, const std::string& table) {
  for (ModelDynamicTable& t : model_dynamic_tables(session)) {
    if (t.table == table && t.group.rfind(group, 0) == 0) return t;
  }
  ADD_FAILURE() << "no dynamic table " << table << " in " << group;
  return {};
}

torch::Tensor weight_of(TrainingSession& session, const ModelDynamicTable& t) {
  for (auto& [name, tensor] : session.model_tensors()) {
    if (name == t.weight) return tensor;
  }
  ADD_FAILURE() << "no tensor " << t.weight;
  return {};
}

// Every (raw id, values) is in the table with its values as its row.
void expect_rows(TrainingSession& session, const ModelDynamicTable& t,
                 const std::vector<std::pair<int64_t, std::vector<float>>>& expected) {
  const torch::Tensor weight = weight_of(session, t);
  EXPECT_EQ(t.index->size(), static_cast<int64_t>(expected.size())) << t.group << " " << t.table;
  for (const auto& [id, values] : expected) {
    int64_t row = -1;
    t.index->find(&id, 1, &row);
    ASSERT_GE(row, 0) << t.table << ": id " << id << " not in the table";
    EXPECT_TRUE(torch::equal(weight[row], torch::tensor(values))) << t.table << " id " << id << ": " << weight[row];
  }
}

TEST_F(InitCkptTest, FgNoneIdsAsTheyAreFillTheFeaturesDeepAndQueryTables) {
  const std::string init = write("init.csv",
                                 "id,emb\n"
                                 "-5,\"0.5,1,1.5,2\"\n"
                                 "3,\"-1,-2,-3,-4\"\n"
                                 "1000000000000,\"0.25,0,0,0.125\"\n");
  const DynamicembInitCkptOptions o = options(din_config("FG_NONE", init));
  const std::string out = create_dynamicemb_init_ckpt(o);
  EXPECT_EQ(out, dir_.file("init/model.ckpt-0"));

  // Only the two filled tables (c0_emb in the DEEP group and in the sequence group), each cut to
  // its 3 rows in use and 2 reserved rows.
  const checkpointing::CheckpointData saved = checkpointing::load_checkpoint(out);
  EXPECT_EQ(saved.step, 0);
  EXPECT_TRUE(saved.optimizer.empty());
  int weights = 0;
  for (const auto& [name, tensor] : saved.model) {
    EXPECT_NE(name.find("c0_emb"), std::string::npos) << name;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0) {
      ++weights;
      EXPECT_EQ(tensor.sizes(), torch::IntArrayRef({5, 4})) << name;
    }
  }
  EXPECT_EQ(weights, 2);

  // A training run fine-tuned from it: the tables hold the init ids with their rows; every other
  // table is empty, every other parameter as built.
  FineTuneResult result;
  auto session = fine_tuned(o.pipeline_config_path, out, &result);
  EXPECT_FALSE(result.model.loaded.empty());
  for (const std::string& name : result.model.loaded) EXPECT_NE(name.find("c0_emb"), std::string::npos) << name;
  EXPECT_FALSE(result.model.missing.empty());  // the dense parameters, left as built
  const std::vector<std::pair<int64_t, std::vector<float>>> expected = {
      {-5, {0.5f, 1, 1.5f, 2}}, {3, {-1, -2, -3, -4}}, {1000000000000, {0.25f, 0, 0, 0.125f}}};
  expect_rows(*session, table_of(*session, "embedding_group.emb_impls", "c0_emb"), expected);
  expect_rows(*session, table_of(*session, "embedding_group.seq_emb_impls", "c0_emb"), expected);
  EXPECT_EQ(table_of(*session, "embedding_group.emb_impls", "c1_emb").index->size(), 0);
  EXPECT_EQ(table_of(*session, "embedding_group.seq_emb_impls", "s__c0_emb").index->size(), 0);
}

TEST_F(InitCkptTest, FeatureGenerationHashesTheIdsAndParquetListsAreRead) {
  // Parquet: string ids, list<float> embeddings, split over two files read by two workers.
  const std::vector<std::string> ids = {"u1", "u2", "77", "u4"};
  for (int f = 0; f < 2; ++f) {
    std::vector<std::pair<std::string, std::vector<float>>> rows;
    for (int r = 2 * f; r < 2 * f + 2; ++r) {
      rows.push_back({ids[static_cast<size_t>(r)], {10.0f * r, 10.0f * r + 1, 10.0f * r + 2, 10.0f * r + 3}});
    }
    data::testing::write_id_embedding_parquet(dir_.file("init_" + std::to_string(f) + ".parquet"), rows);
  }
  DynamicembInitCkptOptions o = options(deepfm_config(dir_.file("init_*.parquet")));
  o.world_size = 2;
  const std::string out = create_dynamicemb_init_ckpt(o);
  auto session = fine_tuned(o.pipeline_config_path, out);
  std::vector<std::pair<int64_t, std::vector<float>>> expected;
  for (int r = 0; r < 4; ++r) {
    expected.push_back({hashed(ids[static_cast<size_t>(r)]),
                        {10.0f * r, 10.0f * r + 1, 10.0f * r + 2, 10.0f * r + 3}});
  }
  // The table the fm and deep groups share is filled; the WIDE group's twin is not.
  expect_rows(*session, table_of(*session, "embedding_group.emb_impls", "c1_emb"), expected);
  EXPECT_EQ(table_of(*session, "embedding_group.emb_impls", "c1_emb_wide").index->size(), 0);
}

TEST_F(InitCkptTest, SuffixedTablesAreFilledAndATableTooSmallKeepsTheLaterRows) {
  // Two DEEP groups with suffixes: two tables, both filled. 20 ids for 16 rows in one bucket: equal
  // scores, so the later rows of the table stay (DynamicTable::load keeps the larger rows).
  std::string csv = "key;vec\n";
  for (int r = 0; r < 20; ++r) csv += "id" + std::to_string(r) + ";" + std::to_string(r) + "|0|0|1\n";
  DynamicembInitCkptOptions o = options(deepfm_config(write("init.csv", csv), R"(
  feature_groups { group_name: "wide" feature_names: ["c0"] group_type: WIDE }
  feature_groups { group_name: "fm" feature_names: ["c0", "c1"] group_type: DEEP embedding_name_suffix: "a" }
  feature_groups { group_name: "deep" feature_names: ["c0", "c1"] group_type: DEEP embedding_name_suffix: "b" })"));
  // The CSV's delimiter is ',' by default: a ';'-separated file is one column.
  o.separator = "|";
  const std::string one_column = error_of([&] { create_dynamicemb_init_ckpt(o); });
  EXPECT_NE(one_column.find("init.csv: 1 column(s) (key;vec); an init table's first column holds the ids and its "
                            "second the embeddings"),
            std::string::npos)
      << one_column;
  csv = "key,vec\n";
  for (int r = 0; r < 20; ++r) csv += "id" + std::to_string(r) + "," + std::to_string(r) + "|0|0|1\n";
  write("init.csv", csv);
  std::string text;
  {
    std::ifstream in(o.pipeline_config_path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("max_capacity: 32"), 16, "max_capacity: 16");
  write("pipeline.config", text);
  const std::string out = create_dynamicemb_init_ckpt(o);
  auto session = fine_tuned(o.pipeline_config_path, out);
  std::vector<std::pair<int64_t, std::vector<float>>> expected;
  for (int r = 4; r < 20; ++r) expected.push_back({hashed("id" + std::to_string(r)), {float(r), 0, 0, 1}});
  expect_rows(*session, table_of(*session, "embedding_group.emb_impls", "c1_emb_a"), expected);
  expect_rows(*session, table_of(*session, "embedding_group.emb_impls", "c1_emb_b"), expected);
}

TEST_F(InitCkptTest, OneErrorLineForEachBadInput) {
  const auto error = [&](const DynamicembInitCkptOptions& o) { return error_of([&] { create_dynamicemb_init_ckpt(o); }); };
  const std::string good = write("good.csv", "id,emb\n1,\"1,2,3,4\"\n2,\"5,6,7,8\"\n");
  DynamicembInitCkptOptions o = options(din_config("FG_NONE", good));
  o.world_size = 0;
  EXPECT_EQ(error(o), "--world_size must be at least 1, got 0");
  o = options(din_config("FG_NONE", good));
  o.separator = "";
  EXPECT_EQ(error(o), "--separator must not be empty");
  o = options(din_config("FG_NONE", good));
  o.reader_type = "OdpsReader";
  EXPECT_NE(error(o).find("not supported yet: create_dynamicemb_init_ckpt --reader_type OdpsReader"),
            std::string::npos)
      << error(o);

  // Rows: each error names the file, the line and the column.
  const auto bad_table = [&](const std::string& fg_mode, const std::string& rows) {
    return error(options(din_config(fg_mode, write("bad.csv", "id,emb\n" + rows))));
  };
  const std::string owner = "init table of 'c0_emb' (feature_configs[0].id_feature.dynamicemb.init_table): ";
  std::string msg = bad_table("FG_NONE", "1,\"1,2,3\"\n");
  EXPECT_NE(msg.find("bad.csv line 2 column emb: " + owner + "the embedding has 3 value(s), expected embedding_dim 4"),
            std::string::npos)
      << msg;
  msg = bad_table("FG_NONE", "1,\"1,2,x,4\"\n");
  EXPECT_NE(msg.find("bad.csv line 2 column emb: " + owner + "'x' is not a number"), std::string::npos) << msg;
  msg = bad_table("FG_NONE", "1,\"1,2,3,4\"\nabc,\"1,2,3,4\"\n");
  EXPECT_NE(msg.find("bad.csv line 3 column id: " + owner + "'abc' is not an int64 id; under fg_mode FG_NONE"),
            std::string::npos)
      << msg;
  msg = bad_table("FG_NONE", ",\"1,2,3,4\"\n");
  EXPECT_NE(msg.find("bad.csv line 2 column id: " + owner + "the id is empty"), std::string::npos) << msg;
  const std::string repeated = bad_table("FG_NORMAL", "a,\"1,2,3,4\"\nb,\"1,2,3,4\"\na,\"1,2,3,4\"\n");
  EXPECT_NE(repeated.find("bad.csv line 4 column id"), std::string::npos) << repeated;
  EXPECT_NE(repeated.find("the id of " + dir_.file("bad.csv") + " line 2 (raw id " + std::to_string(hashed("a")) +
                          ") is given again; each id once"),
            std::string::npos)
      << repeated;
  EXPECT_NE(bad_table("FG_NONE", "").find("bad.csv: the init table has no rows"), std::string::npos);

  // Configs.
  const std::string no_init = din_config("FG_NONE", "");
  msg = error(options(no_init));
  EXPECT_NE(msg.find("pipeline.config: no feature's dynamicemb { } sets init_table"), std::string::npos) << msg;
  std::string empty = din_config("FG_NONE", good);
  empty.replace(empty.find(good), good.size(), "");
  msg = error(options(empty));
  EXPECT_NE(msg.find("feature_configs[0].id_feature.dynamicemb.init_table is empty"), std::string::npos) << msg;
  std::string two = din_config("FG_NONE", good);
  const std::string c1_table = "embedding_dim: 4\n  dynamicemb { max_capacity: 32 bucket_capacity: 16 }";
  two.replace(two.find(c1_table), c1_table.size(),
              "embedding_dim: 4 embedding_name: \"c0_emb\"\n  dynamicemb { max_capacity: 64 bucket_capacity: 16 "
              "init_table: \"other.csv\" }");
  msg = error(options(two));
  EXPECT_NE(msg.find("feature_configs[1].id_feature.dynamicemb.init_table: features 'c0' and 'c1' share embedding "
                     "table 'c0_emb' but name different init tables"),
            std::string::npos)
      << msg;
  const std::string wide_only = deepfm_config(good, R"(
  feature_groups { group_name: "wide" feature_names: ["c0", "c1"] group_type: WIDE }
  feature_groups { group_name: "fm" feature_names: ["c0"] group_type: DEEP }
  feature_groups { group_name: "deep" feature_names: ["c0"] group_type: DEEP })");
  EXPECT_NE(error(options(wide_only)).find("feature_configs[1].id_feature.dynamicemb.init_table: feature 'c1' has no "
                                           "dynamic table to initialise"),
            std::string::npos)
      << error(options(wide_only));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("init")));

  o = options(din_config("FG_NONE", good));
  create_dynamicemb_init_ckpt(o);
  EXPECT_EQ(error(o), dir_.file("init/model.ckpt-0") + " already exists; remove it or choose another --save_dir");
}

TEST(DynamicembInitTables, EveryFeatureWithAnInitTableByThePathOfItsDynamicemb) {
  const protos::EasyRecConfig config = config::parse_pipeline_config_text(din_config("FG_NONE", "t.csv"), "c");
  EXPECT_EQ(dynamicemb_init_tables(config),
            (std::map<std::string, std::string>{{"feature_configs[0].id_feature.dynamicemb", "t.csv"}}));
  std::string seq = din_config("FG_NONE", "t.csv");
  seq.replace(seq.find("dynamicemb { max_capacity: 32 bucket_capacity: 16 } } } } }"),
              std::string("dynamicemb { max_capacity: 32 bucket_capacity: 16 }").size(),
              "dynamicemb { max_capacity: 32 bucket_capacity: 16 init_table: \"s.parquet\" }");
  EXPECT_EQ(dynamicemb_init_tables(config::parse_pipeline_config_text(seq, "c")),
            (std::map<std::string, std::string>{
                {"feature_configs[0].id_feature.dynamicemb", "t.csv"},
                {"feature_configs[3].sequence_feature.features[0].id_feature.dynamicemb", "s.parquet"}}));
}

}  // namespace dynamicemb_init_ckpt_test
}  // namespace tzrec::train
