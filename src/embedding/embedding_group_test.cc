#include "embedding/embedding_group.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace embedding_group_test {

using testing::i64;

using sparse::JaggedTensor;
using sparse::KeyedJaggedTensor;
using Groups = std::vector<FeatureGroupConfig>;

FeatureSpec sparse_feature(const std::string& name, int64_t rows, int64_t dim,
                           const std::string& emb_name = "") {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = true;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.embedding_name = emb_name;
  return f;
}

FeatureSpec dense_feature(const std::string& name, int64_t value_dim) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = false;
  f.value_dim = value_dim;
  return f;
}

// Reference sum pooling with one id per row.
torch::Tensor lookup(const torch::Tensor& table, const torch::Tensor& ids) {
  return table.detach().index_select(0, ids);
}

class EmbeddingGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(11);
    features_ = {sparse_feature("cat_a", 10, 4), sparse_feature("cat_b", 8, 4, "shared_emb"),
                 sparse_feature("cat_c", 8, 4, "shared_emb"), dense_feature("int_a", 1),
                 dense_feature("tag", 3)};
    groups_ = {{"deep", GroupType::kDeep, {"int_a", "cat_b", "cat_a", "tag", "cat_c"}},
               {"wide", GroupType::kWide, {"cat_a", "cat_b"}}};
    // B = 3, one id per row per feature.
    ids_a_ = i64({1, 9, 4});
    ids_b_ = i64({0, 7, 7});
    ids_c_ = i64({3, 3, 5});
    torch::Tensor ones = i64({1, 1, 1});
    batch_.batch_size = 3;
    batch_.sparse_features = KeyedJaggedTensor::from_jagged(
        {"cat_a", "cat_b", "cat_c"}, {{ids_a_, ones, {}}, {ids_b_, ones, {}}, {ids_c_, ones, {}}});
    int_a_ = torch::randn({3, 1});
    tag_ = torch::randn({3, 3});
    batch_.dense_features = sparse::KeyedTensor::from_tensors({"int_a", "tag"}, {int_a_, tag_});
  }

  std::vector<FeatureSpec> features_;
  std::vector<FeatureGroupConfig> groups_;
  torch::Tensor ids_a_, ids_b_, ids_c_, int_a_, tag_;
  sparse::Batch batch_;
};

TEST_F(EmbeddingGroupTest, TablesAndStateDictKeys) {
  EmbeddingGroup eg(features_, groups_, 5);
  std::vector<std::string> names;
  for (const auto& p : eg->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "emb_impls.__BASE__.ebc.embedding_bags.shared_emb.weight",
                       "emb_impls.__BASE__.ebc.embedding_bags.cat_a_emb.weight",
                       "emb_impls.__BASE__.ebc.embedding_bags.cat_a_emb_wide.weight",
                       "emb_impls.__BASE__.ebc.embedding_bags.shared_emb_wide.weight"}));
  auto tables = eg->tables();
  ASSERT_EQ(tables.size(), 4u);
  EXPECT_EQ(tables[0].weight.sizes(), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(tables[2].weight.sizes(), (std::vector<int64_t>{10, 5}));  // wide dim
  EXPECT_EQ(tables[3].weight.sizes(), (std::vector<int64_t>{8, 5}));
}

TEST_F(EmbeddingGroupTest, ForwardConcatenatesInFeatureOrder) {
  EmbeddingGroup eg(features_, groups_, 5);
  EXPECT_EQ(eg->group_total_dim("deep"), 1 + 4 + 4 + 3 + 4);
  EXPECT_EQ(eg->group_feature_dims("deep"), (std::vector<int64_t>{1, 4, 4, 3, 4}));
  EXPECT_EQ(eg->group_total_dim("wide"), 10);
  EXPECT_EQ(eg->group_names(), (std::vector<std::string>{"deep", "wide"}));
  auto out = eg->forward(batch_);
  auto tables = eg->tables();
  torch::Tensor shared = tables[0].weight, a = tables[1].weight, a_wide = tables[2].weight,
                shared_wide = tables[3].weight;
  torch::Tensor deep_ref = torch::cat({int_a_, lookup(shared, ids_b_), lookup(a, ids_a_), tag_,
                                       lookup(shared, ids_c_)},
                                      1);
  torch::Tensor wide_ref = torch::cat({lookup(a_wide, ids_a_), lookup(shared_wide, ids_b_)}, 1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(torch::allclose(out.at("deep"), deep_ref));
  EXPECT_TRUE(torch::allclose(out.at("wide"), wide_ref));
  // Gradients reach the tables (sparse) and the shared table gets both features' rows.
  (out.at("deep").sum() + out.at("wide").sum()).backward();
  torch::Tensor g = shared.grad();
  ASSERT_TRUE(g.defined() && g.is_sparse());
  torch::Tensor expect = torch::zeros({8, 4});
  for (auto ids : {ids_b_, ids_c_}) {
    for (int64_t i = 0; i < 3; ++i) expect[ids[i].item<int64_t>()] += 1;
  }
  EXPECT_TRUE(torch::allclose(g.to_dense(), expect));
}

TEST_F(EmbeddingGroupTest, WideInitFnAndDefaultWideDim) {
  EmbeddingGroup eg(features_, groups_, 0, "nn.init.zeros_");
  auto tables = eg->tables();
  EXPECT_EQ(tables[2].weight.size(1), 4);  // `wide_embedding_dim or 4`
  EXPECT_EQ(tables[2].weight.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(tables[3].weight.abs().sum().item<float>(), 0.0f);
  EXPECT_GT(tables[1].weight.abs().sum().item<float>(), 0.0f);
}

TEST_F(EmbeddingGroupTest, FeatureInDeepAndWideWithSameTableNameIsKeyedByTable) {
  // cat_a in two groups with different tables → output key "cat_a@<table>" internally; with the
  // same table in two DEEP groups the bag is shared.
  std::vector<FeatureGroupConfig> groups = {{"g1", GroupType::kDeep, {"cat_a"}},
                                            {"g2", GroupType::kDeep, {"cat_a", "cat_b"}}};
  EmbeddingGroup eg(features_, groups, 4);
  EXPECT_EQ(eg->tables().size(), 2u);
  auto out = eg->forward(batch_);
  EXPECT_TRUE(torch::allclose(out.at("g1"), out.at("g2").slice(1, 0, 4)));
}

TEST_F(EmbeddingGroupTest, ConfigErrors) {
  // Dense feature in a WIDE group.
  std::vector<FeatureGroupConfig> wide_dense = {{"wide", GroupType::kWide, {"cat_a", "int_a"}}};
  try {
    EmbeddingGroup eg(features_, wide_dense, 4);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'int_a'"), std::string::npos) << e.what();
  }
  // Shared table with different sizes names both features.
  auto features = features_;
  features[2].embedding_dim = 6;
  try {
    EmbeddingGroup eg(features, groups_, 4);
    FAIL();
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'cat_b'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'cat_c'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shared_emb"), std::string::npos) << msg;
  }
  features = features_;
  features[2].pooling = "mean";
  EXPECT_THROW(EmbeddingGroup(features, groups_, 4), ConfigError);
  // Unknown feature, duplicate group, unknown group lookups.
  EXPECT_THROW(EmbeddingGroup(features_, Groups{{"g", GroupType::kDeep, {"nope"}}}, 4), ConfigError);
  EXPECT_THROW(EmbeddingGroup(features_, Groups{{"g", GroupType::kDeep, {"cat_a"}},
                                          {"g", GroupType::kDeep, {"cat_b"}}},
                              4),
               ConfigError);
  EmbeddingGroup eg(features_, groups_, 4);
  EXPECT_THROW(eg->group_total_dim("nope"), ConfigError);
}

// A sparse feature without embedding_dim is accepted until a group looks it up (TorchEasyRec builds
// tables for the features of groups only; its multi_tower_din_fg_dynamicemb_mock.config has such
// an unused feature). WIDE groups use wide_embedding_dim instead.
TEST(EmbeddingGroupEmbeddingDim, RequiredWhereAGroupUsesTheFeature) {
  FeatureSpec a;
  a.name = "a";
  a.num_embeddings = 5;
  a.path = "feature_configs[2].id_feature";
  FeatureSpec s = a;
  s.name = "s";
  s.is_sequence = true;
  s.value_dim = 1;
  s.embedding_dim = 4;
  auto error = [&](Groups groups) {
    try {
      EmbeddingGroup g(std::vector<FeatureSpec>{a, s}, std::move(groups), 4);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string want = "feature_configs[2].id_feature.embedding_dim: must be > 0 for sparse feature a (used by group ";
  EXPECT_EQ(error({{"deep", GroupType::kDeep, {"a"}}}), want + "'deep')");
  EXPECT_EQ(error({{"seq", GroupType::kSequence, {"a", "s"}}}), want + "'seq')");
  EXPECT_EQ(error({{"wide", GroupType::kWide, {"a"}}}), "(no error)");
}

}  // namespace embedding_group_test
}  // namespace tzrec::embedding
