// Export packages' dynamic tables cut to their live rows (live_rows_of_dynamic_tables,
// docs/tzrec-compatibility.md §5.13 "Export packages hold the live rows only") and read back into a
// model of the full capacity (relayout_dynamic_checkpoint). Expected values follow from the layout
// the header documents: the live rows in row order, then the table's two reserved rows.
#include "train/remapped_shard_checkpoint.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/checkpoint.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "embedding/dynamic_embedding_bag_collection.h"
#include "train/training_session.h"

namespace tzrec::train {
namespace remapped_shard_checkpoint_test {

// c0: a dynamic table of R = 32 rows (weight 34 × 4), c2 a plain table.
const std::string kConfig = std::string(config::testing::kTrainAndData) + R"(
feature_configs { id_feature { feature_name: "c0" embedding_dim: 4
  dynamicemb { max_capacity: 32 bucket_capacity: 16 score_strategy: "STEP" } } }
feature_configs { id_feature { feature_name: "c2" num_buckets: 10 embedding_dim: 4 } }
model_config {
  feature_groups { group_name: "all" feature_names: ["c0", "c2"] group_type: DEEP }
  multi_tower { towers { input: "all" mlp { hidden_units: [4] } } final { hidden_units: [2] } }
  losses { binary_cross_entropy {} }
}
)";
const std::string kCollection = "embedding_group.emb_impls.__BASE__.dynamicemb_ebc.";
const std::string kWeight = kCollection + "_embedding_module.embedding_bags.c0_emb.weight";
const std::string kState = kCollection + "dynamic_tables.c0_emb.";

embedding::DynamicEmbeddingBagCollection dynamic_collection(TrainingSession& session) {
  for (const auto& member : session.model().embeddings().members()) {
    for (auto& [prefix, collection] : member.group->dynamic_collections()) return collection;
  }
  ADD_FAILURE() << "no dynamic collection";
  return nullptr;
}

std::map<std::string, torch::Tensor> by_name(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, tensor] : tensors) out.emplace(name, tensor.detach().clone());
  return out;
}

// Rows 0..n-1 of the dynamic table's weight get distinct values (the index alone hands rows out
// without drawing them).
void set_distinct_rows(TrainingSession& session, int64_t n) {
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : session.model_tensors()) {
    if (name == kWeight) tensor.narrow(0, 0, n).copy_(torch::arange(n * 4, torch::kFloat32).view({n, 4}).add_(1));
  }
}

TEST(LiveRowsOfDynamicTables, CutToTheLiveRowsAndReadBackIntoTheFullCapacity) {
  TrainingSession trained(config::parse_pipeline_config_text(kConfig, "live.config"), false);
  auto collection = dynamic_collection(trained);
  const std::vector<int64_t> ids = {5, 9, -11, 70, 3};
  collection->dynamic_table("c0_emb").find_or_insert(ids.data(), ids.size(), 1, 0);  // rows 0..4
  collection->sync_state();
  set_distinct_rows(trained, 5);
  const auto before = by_name(trained.model_tensors());
  const torch::Tensor weight = before.at(kWeight);
  ASSERT_EQ(weight.size(0), 34);

  const auto cut = by_name(live_rows_of_dynamic_tables(trained.model(), trained.model().embeddings(),
                                                       trained.model_tensors()));
  ASSERT_EQ(cut.size(), before.size());
  // Live rows 0..4, then the reserved rows 32 and 33.
  EXPECT_TRUE(cut.at(kWeight).equal(torch::cat({weight.narrow(0, 0, 5), weight.narrow(0, 32, 2)})));
  EXPECT_TRUE(cut.at(kState + "row_keys").equal(torch::tensor(ids, torch::kInt64)));
  EXPECT_TRUE(cut.at(kState + "row_scores").equal(torch::ones({5}, torch::kInt64)));  // STEP: step 1
  EXPECT_TRUE(cut.at(kState + "row_live").equal(torch::ones({5}, torch::kUInt8)));
  for (const auto& [name, tensor] : before) {
    if (name == kWeight || name.rfind(kState + "row_", 0) == 0) continue;
    EXPECT_TRUE(cut.at(name).equal(tensor)) << name;  // everything else as it was
  }

  // A fresh model of capacity 32 reads the cut tensors back: each id's weights, the model's own
  // reserved rows.
  TrainingSession loaded(config::parse_pipeline_config_text(kConfig, "live.config"), false);
  checkpointing::CheckpointData package;
  package.dir = "package";
  package.model = cut;
  relayout_dynamic_checkpoint(loaded.model(), loaded.model().embeddings(), package, {});
  const torch::Tensor own_weight = by_name(loaded.model_tensors()).at(kWeight);
  checkpointing::restore_tensors(package.model, loaded.model_tensors(), "package");
  loaded.model().embeddings().reload_embedding_state();
  const torch::Tensor now = by_name(loaded.model_tensors()).at(kWeight);
  ASSERT_EQ(now.size(0), 34);
  auto loaded_collection = dynamic_collection(loaded);
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t row = -1;
    loaded_collection->dynamic_table("c0_emb").find(&ids[i], 1, &row);
    ASSERT_GE(row, 0) << ids[i];
    EXPECT_TRUE(now[row].equal(weight[static_cast<int64_t>(i)])) << "id " << ids[i];
  }
  EXPECT_TRUE(now.narrow(0, 32, 2).equal(own_weight.narrow(0, 32, 2)));
  EXPECT_EQ(loaded_collection->dynamic_table("c0_emb").size(), 5);
}

// Checkpoints hold the rows in use (dynamic_rows_in_use, cut_dynamic_tables_to_rows_in_use,
// embedding/dynamic_checkpoint_layout.h): rows 0..U-1 and the reserved rows, the layout tensors;
// read back, every id keeps its row number and its weights, and a model of another capacity
// renumbers them.
TEST(DynamicRowsInUse, CheckpointsHoldTheRowsInUseAndRestoreKeepsTheRows) {
  TrainingSession trained(config::parse_pipeline_config_text(kConfig, "rows.config"), false);
  auto collection = dynamic_collection(trained);
  const std::vector<int64_t> ids = {5, 9, -11, 70, 3, 44};
  collection->dynamic_table("c0_emb").find_or_insert(ids.data(), ids.size(), 1, 0);  // rows 0..5
  set_distinct_rows(trained, 6);
  const torch::Tensor weight = by_name(trained.model_tensors()).at(kWeight);

  const DynamicRowsInUse rows = dynamic_rows_in_use(trained.model(), trained.model().embeddings(), nullptr);
  ASSERT_EQ(rows.tables.size(), 1u);
  const DynamicRowsInUse::Table& t = rows.tables.at("c0_emb");
  EXPECT_EQ(t.layout.rows_in_use, (std::vector<int64_t>{6}));
  EXPECT_EQ(t.layout.capacity, 32);
  std::map<std::string, torch::Tensor> model = by_name(trained.model_tensors()), optimizer;
  add_dynamic_layout_tensors(rows, model);
  cut_dynamic_tables_to_rows_in_use(trained.model().embeddings(), rows, model, optimizer);
  EXPECT_TRUE(model.at(kWeight).equal(torch::cat({weight.narrow(0, 0, 6), weight.narrow(0, 32, 2)})));
  EXPECT_TRUE(model.at(kState + "row_keys").equal(torch::tensor(ids, torch::kInt64)));
  EXPECT_TRUE(model.at(kState + "row_live").equal(torch::ones({6}, torch::kUInt8)));
  EXPECT_TRUE(model.at(kState + "rows_in_use").equal(torch::tensor({6}, torch::kInt64)));
  EXPECT_TRUE(model.at(kState + "capacity").equal(torch::tensor({32}, torch::kInt64)));

  TrainingSession loaded(config::parse_pipeline_config_text(kConfig, "rows.config"), false);
  checkpointing::CheckpointData checkpoint;
  checkpoint.dir = "model.ckpt-1";
  checkpoint.model = model;
  relayout_dynamic_checkpoint(loaded.model(), loaded.model().embeddings(), checkpoint, {});
  EXPECT_EQ(checkpoint.model.count(kState + "rows_in_use"), 0u);  // read and removed
  checkpointing::restore_tensors(checkpoint.model, loaded.model_tensors(), "checkpoint");
  loaded.model().embeddings().reload_embedding_state();
  const torch::Tensor now = by_name(loaded.model_tensors()).at(kWeight);
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t row = -1;
    dynamic_collection(loaded)->dynamic_table("c0_emb").find(&ids[i], 1, &row);
    EXPECT_EQ(row, static_cast<int64_t>(i)) << "id " << ids[i];  // the same capacity: rows kept
    if (row >= 0) EXPECT_TRUE(now[row].equal(weight[row])) << "id " << ids[i];
  }
  EXPECT_EQ(now.narrow(0, 6, 26).count_nonzero().item<int64_t>(), 0);  // rows no id holds: unwritten

  // A model of capacity 64 renumbers the ids (rows 0..5 in id order) and keeps their weights.
  std::string bigger = kConfig;
  bigger.replace(bigger.find("max_capacity: 32"), 16, "max_capacity: 64");
  TrainingSession wide(config::parse_pipeline_config_text(bigger, "rows.config"), false);
  checkpoint.model = model;
  relayout_dynamic_checkpoint(wide.model(), wide.model().embeddings(), checkpoint, {});
  checkpointing::restore_tensors(checkpoint.model, wide.model_tensors(), "checkpoint");
  wide.model().embeddings().reload_embedding_state();
  const torch::Tensor wide_weight = by_name(wide.model_tensors()).at(kWeight);
  ASSERT_EQ(wide_weight.size(0), 66);
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t row = -1;
    dynamic_collection(wide)->dynamic_table("c0_emb").find(&ids[i], 1, &row);
    ASSERT_GE(row, 0) << ids[i];
    EXPECT_TRUE(wide_weight[row].equal(weight[static_cast<int64_t>(i)])) << "id " << ids[i];
  }

  // rows_in_use that does not add up to the saved rows: one line naming the table.
  checkpoint.model = model;
  checkpoint.model[kState + "rows_in_use"] = torch::tensor({7}, torch::kInt64);
  TrainingSession bad(config::parse_pipeline_config_text(kConfig, "rows.config"), false);
  EXPECT_THROW(relayout_dynamic_checkpoint(bad.model(), bad.model().embeddings(), checkpoint, {}), CheckpointError);
}

}  // namespace remapped_shard_checkpoint_test
}  // namespace tzrec::train
