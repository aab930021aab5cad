// Dense embeddings (autodis / mlp, docs/tzrec-compatibility.md §5.11) through a real
// TrainingSession: their parameters carry TorchEasyRec's names, are trained by the dense
// optimizer, saved in the checkpoint under those names and restored exactly.
#include <gtest/gtest.h>

#include "checkpoint/checkpoint.h"
#include "train/training_session.h"
#include "train/training_session_testing.h"

namespace tzrec::train {
namespace training_session_dense_embedding_test {

class DenseEmbeddingSessionTest : public SyntheticDeepFmTest {
 protected:
  DenseEmbeddingSessionTest() : SyntheticDeepFmTest(512) {}

  void SetUp() override {
    SyntheticDeepFmTest::SetUp();
    // The DeepFM example's deep group holds int_0 .. int_12: two get AutoDis, one an MLP embedding.
    for (auto& f : *config_.mutable_feature_configs()) {
      if (!f.has_raw_feature()) continue;
      protos::RawFeature* raw = f.mutable_raw_feature();
      if (raw->feature_name() == "int_0" || raw->feature_name() == "int_1") {
        raw->set_embedding_dim(4);
        raw->mutable_autodis()->set_num_channels(3);
      } else if (raw->feature_name() == "int_2") {
        raw->set_embedding_dim(4);
        raw->mutable_mlp();
      }
    }
  }
};

constexpr const char* kAutoDis = "embedding_group.emb_impls.__BASE__.dense_ec.dense_embs.autodis#4#3#0_800000#0_100000.";
constexpr const char* kMlp = "embedding_group.emb_impls.__BASE__.dense_ec.dense_embs.mlp#4.";

TEST_F(DenseEmbeddingSessionTest, TrainedSavedAndRestoredUnderTorchEasyRecNames) {
  auto data = batches();
  ASSERT_GE(data.size(), 4u);
  torch::manual_seed(1);
  TrainingSession trained(config_, true);
  std::vector<std::string> names;
  for (const std::string f : {"int_0", "int_1"}) {
    for (const std::string kind : {"meta_emb_", "proj_w_", "proj_m_"}) names.push_back(kAutoDis + kind + f + ".weight");
  }
  names.push_back(std::string(kMlp) + "proj_w_int_2.weight");
  std::map<std::string, torch::Tensor> initial;
  for (const auto& [name, tensor] : trained.model().dense_parameters()) initial[name] = tensor.detach().clone();
  for (const std::string& name : names) ASSERT_TRUE(initial.count(name)) << name << " is not a dense parameter";
  EXPECT_EQ(initial.at(names[0]).sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(initial.at(names[2]).sizes(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(initial.at(names[6]).sizes(), (std::vector<int64_t>{4}));
  // The deep group starts int_0, int_1, int_2, int_3: three 4-wide embeddings, then a plain float.
  const std::vector<int64_t> dims = trained.model().embedding_group()->group_feature_dims("deep");
  ASSERT_GE(dims.size(), 4u);
  EXPECT_EQ(std::vector<int64_t>(dims.begin(), dims.begin() + 4), (std::vector<int64_t>{4, 4, 4, 1}));

  for (int i = 0; i < 3; ++i) train_on(trained, data[i], i);
  auto params = trained.model().named_parameters();
  for (const std::string& name : names) {
    EXPECT_FALSE(torch::equal(params[name], initial.at(name))) << name << " was not trained";
  }

  checkpointing::save_checkpoint(config_.model_dir(), snapshot(trained, 2));
  const auto stored = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 2));
  for (const std::string& name : names) {
    ASSERT_TRUE(stored.model.count(name)) << name << " is not in the checkpoint";
    EXPECT_TRUE(torch::equal(stored.model.at(name), params[name])) << name;
  }
  torch::manual_seed(2);  // different initial weights
  TrainingSession restored(config_, false);
  restored.restore(stored, false);
  trained.model().eval();
  restored.model().eval();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(restored.model().predict(data[3])["probs"], trained.model().predict(data[3])["probs"]));
}

}  // namespace training_session_dense_embedding_test
}  // namespace tzrec::train
