// Export packages' dynamic tables cut to their live rows (live_rows_of_dynamic_tables,
// docs/tzrec-compatibility.md §5.13 "Export packages hold the live rows only") and read back into a
// model of the full capacity (relayout_dynamic_checkpoint). Expected values follow from the layout
// the header documents: the live rows in row order, then the table's two reserved rows.
#include "train/remapped_shard_checkpoint.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

TEST(LiveRowsOfDynamicTables, CutToTheLiveRowsAndReadBackIntoTheFullCapacity) {
  TrainingSession trained(config::parse_pipeline_config_text(kConfig, "live.config"), false);
  auto collection = dynamic_collection(trained);
  const std::vector<int64_t> ids = {5, 9, -11, 70, 3};
  collection->dynamic_table("c0_emb").find_or_insert(ids.data(), ids.size(), 1, 0);  // rows 0..4
  collection->sync_state();
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

}  // namespace remapped_shard_checkpoint_test
}  // namespace tzrec::train
