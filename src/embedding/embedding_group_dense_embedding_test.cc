// The dense embeddings (autodis / mlp) inside EmbeddingGroup: names, order, sharing, errors
// (docs/tzrec-compatibility.md §5.11).
#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"

namespace tzrec::embedding {
namespace embedding_group_dense_embedding_test {

using sparse::KeyedJaggedTensor;

FeatureSpec sparse_feature(const std::string& name, int64_t rows, int64_t dim) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = true;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  return f;
}

FeatureSpec dense_feature(const std::string& name, int64_t value_dim) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = false;
  f.value_dim = value_dim;
  return f;
}

FeatureSpec autodis_feature(const std::string& name, int64_t dim, int64_t channels) {
  FeatureSpec f = dense_feature(name, 1);
  f.embedding_dim = dim;
  f.dense_embedding.type = DenseEmbeddingType::kAutoDis;
  f.dense_embedding.num_channels = channels;
  return f;
}

FeatureSpec mlp_feature(const std::string& name, int64_t dim, int64_t value_dim) {
  FeatureSpec f = dense_feature(name, value_dim);
  f.embedding_dim = dim;
  f.dense_embedding.type = DenseEmbeddingType::kMlp;
  return f;
}

class DenseEmbeddingGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(4);
    features_ = {sparse_feature("cat", 10, 4),   autodis_feature("price", 4, 3), dense_feature("raw", 2),
                 mlp_feature("ctr", 4, 1),        autodis_feature("age", 4, 3),   mlp_feature("pic", 6, 3)};
    batch_.batch_size = 3;
    ids_ = torch::tensor({1, 9, 4}, torch::kInt64);
    batch_.sparse_features =
        KeyedJaggedTensor::from_jagged({"cat"}, {{ids_, torch::tensor({1, 1, 1}, torch::kInt64), {}}});
    price_ = torch::randn({3, 1});
    raw_ = torch::randn({3, 2});
    ctr_ = torch::randn({3, 1});
    age_ = torch::randn({3, 1});
    pic_ = torch::randn({3, 3});
    batch_.dense_features = sparse::KeyedTensor::from_tensors({"price", "raw", "ctr", "age", "pic"},
                                                              {price_, raw_, ctr_, age_, pic_});
  }

  std::vector<FeatureSpec> features_;
  sparse::Batch batch_;
  torch::Tensor ids_, price_, raw_, ctr_, age_, pic_;
};

// TorchEasyRec's names: "emb_impls.__BASE__.dense_ec.dense_embs.<group key>.<kind>_<feature>.weight",
// one module per group key over the features of every DEEP group (sorted), keys in the order they
// first appear.
TEST_F(DenseEmbeddingGroupTest, StateDictKeys) {
  std::vector<FeatureGroupConfig> groups = {{"deep", GroupType::kDeep, {"price", "cat", "raw", "ctr", "pic"}},
                                            {"other", GroupType::kDeep, {"age", "price"}}};
  EmbeddingGroup eg(features_, groups, 4);
  std::vector<std::string> names;
  for (const auto& p : eg->named_parameters()) names.push_back(p.key());
  const std::string autodis = "emb_impls.__BASE__.dense_ec.dense_embs.autodis#4#3#0_800000#0_100000.";
  const std::string vdim = "emb_impls.__BASE__.dense_ec.dense_embs.mlp#6#vdim#3#feature_name#            pic.";
  EXPECT_EQ(names, (std::vector<std::string>{
                       "emb_impls.__BASE__.ebc.embedding_bags.cat_emb.weight",
                       autodis + "meta_emb_age.weight", autodis + "proj_w_age.weight", autodis + "proj_m_age.weight",
                       autodis + "meta_emb_price.weight", autodis + "proj_w_price.weight",
                       autodis + "proj_m_price.weight",
                       "emb_impls.__BASE__.dense_ec.dense_embs.mlp#4.proj_w_ctr.weight",
                       vdim + "proj_w_pic.weight",
                   }));
  // Only the table is an embedding table; the dense embeddings are dense parameters.
  EXPECT_EQ(eg->tables().size(), 1u);
}

// A group mixing sparse, plain dense and dense-embedded features is their outputs in feature_names
// order (as TorchEasyRec's regroup by the group's feature names); a feature in two groups has one
// embedding.
TEST_F(DenseEmbeddingGroupTest, ForwardOrderAndValues) {
  std::vector<FeatureGroupConfig> groups = {{"deep", GroupType::kDeep, {"price", "cat", "raw", "ctr", "pic"}},
                                            {"other", GroupType::kDeep, {"age", "price"}}};
  EmbeddingGroup eg(features_, groups, 4);
  EXPECT_EQ(eg->group_feature_dims("deep"), (std::vector<int64_t>{4, 4, 2, 4, 6}));
  EXPECT_EQ(eg->group_total_dim("other"), 8);
  auto params = eg->named_parameters();
  const std::string key = "emb_impls.__BASE__.dense_ec.dense_embs.";

  // Plain formulas of each feature's embedding (autodis_embedding.h, mlp_embedding.h).
  auto autodis_of = [&](const std::string& f, const torch::Tensor& x) {
    const std::string p = key + "autodis#4#3#0_800000#0_100000.";
    torch::Tensor h = torch::leaky_relu(x * params[p + "proj_w_" + f + ".weight"].unsqueeze(0), 0.01);
    torch::Tensor x_bar = h.matmul(params[p + "proj_m_" + f + ".weight"].t()) + 0.8 * h;
    return torch::softmax(x_bar / static_cast<double>(0.1f), 1).matmul(params[p + "meta_emb_" + f + ".weight"]);
  };
  torch::Tensor ctr_emb = ctr_ * params[key + "mlp#4.proj_w_ctr.weight"].unsqueeze(0);
  torch::Tensor pic_emb = pic_.matmul(params[key + "mlp#6#vdim#3#feature_name#            pic.proj_w_pic.weight"]);
  torch::Tensor cat_emb = eg->tables()[0].weight.detach().index_select(0, ids_);

  auto out = eg->forward(batch_);
  torch::Tensor deep_ref = torch::cat({autodis_of("price", price_), cat_emb, raw_, ctr_emb, pic_emb}, 1);
  torch::Tensor other_ref = torch::cat({autodis_of("age", age_), autodis_of("price", price_)}, 1);
  EXPECT_EQ(out.at("deep").sizes(), (std::vector<int64_t>{3, 20}));
  EXPECT_TRUE(torch::allclose(out.at("deep"), deep_ref, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(out.at("other"), other_ref, 1e-5, 1e-6));

  // Both groups' uses of price reach its parameters.
  (out.at("deep").slice(1, 0, 4).sum() + out.at("other").slice(1, 4, 8).sum()).backward();
  torch::Tensor g = params[key + "autodis#4#3#0_800000#0_100000.meta_emb_price.weight"].grad();
  ASSERT_TRUE(g.defined());
  EXPECT_GT(g.abs().sum().item<float>(), 0.0f);
}

TEST_F(DenseEmbeddingGroupTest, NoDenseEmbeddingNoModule) {
  EmbeddingGroup eg(features_, std::vector<FeatureGroupConfig>{{"deep", GroupType::kDeep, {"cat", "raw"}}}, 4);
  for (const auto& p : eg->named_parameters()) EXPECT_EQ(p.key().find("dense_ec"), std::string::npos) << p.key();
}

// TorchEasyRec's sequence groups take a dense feature's raw values: a dense embedding there is
// refused, naming the field.
TEST_F(DenseEmbeddingGroupTest, SequenceGroupsRefuseDenseEmbeddings) {
  FeatureGroupConfig seq{"seq", GroupType::kSequence, {"cat", "price"}};
  seq.path = "model_config.feature_groups[1]";
  try {
    EmbeddingGroup eg(features_, std::vector<FeatureGroupConfig>{{"deep", GroupType::kDeep, {"cat"}}, seq}, 4);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("model_config.feature_groups[1].feature_names[1]: 'price' has a dense embedding", 0), 0u)
        << msg;
  }
}

}  // namespace embedding_group_dense_embedding_test
}  // namespace tzrec::embedding
