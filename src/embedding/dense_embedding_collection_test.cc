#include "embedding/dense_embedding_collection.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace dense_embedding_collection_test {

DenseEmbeddingConfig autodis(std::vector<std::string> names, int64_t dim, int64_t channels, float temperature = 0.1f,
                             float keep_prob = 0.8f) {
  DenseEmbeddingConfig c;
  c.options.type = DenseEmbeddingType::kAutoDis;
  c.options.num_channels = channels;
  c.options.temperature = temperature;
  c.options.keep_prob = keep_prob;
  c.embedding_dim = dim;
  c.feature_names = std::move(names);
  return c;
}

DenseEmbeddingConfig mlp(std::vector<std::string> names, int64_t dim, int64_t value_dim = 1) {
  DenseEmbeddingConfig c;
  c.options.type = DenseEmbeddingType::kMlp;
  c.embedding_dim = dim;
  c.value_dim = value_dim;
  c.feature_names = std::move(names);
  return c;
}

// The keys TorchEasyRec's DenseEmbeddingConfig.group_key gives for these settings (its module run
// with Python on the float32 values).
TEST(DenseEmbeddingCollection, GroupKeys) {
  EXPECT_EQ(dense_embedding_group_key(autodis({"price"}, 16, 3)), "autodis#16#3#0_800000#0_100000");
  EXPECT_EQ(dense_embedding_group_key(autodis({"price"}, 8, 4, 0.5f, 0.25f)), "autodis#8#4#0_250000#0_500000");
  EXPECT_EQ(dense_embedding_group_key(autodis({"price"}, 8, 4, 1.0f / 3, 0.3f)), "autodis#8#4#0_300000#0_333333");
  EXPECT_EQ(dense_embedding_group_key(mlp({"price"}, 16)), "mlp#16");
  EXPECT_EQ(dense_embedding_group_key(mlp({"pic"}, 16, 3)), "mlp#16#vdim#3#feature_name#            pic");
}

// TorchEasyRec's merge_same_config_features: one config per key, in the order keys first appear,
// feature names sorted and unique.
TEST(DenseEmbeddingCollection, MergesSameConfigFeatures) {
  auto merged = merge_same_config_features({mlp({"z"}, 4), autodis({"c"}, 4, 3), mlp({"a"}, 4), autodis({"b"}, 4, 3),
                                            mlp({"z"}, 4), mlp({"m"}, 8), autodis({"d"}, 4, 5), mlp({"v"}, 4, 2)});
  ASSERT_EQ(merged.size(), 5u);
  EXPECT_EQ(dense_embedding_group_key(merged[0]), "mlp#4");
  EXPECT_EQ(merged[0].feature_names, (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(dense_embedding_group_key(merged[1]), "autodis#4#3#0_800000#0_100000");
  EXPECT_EQ(merged[1].feature_names, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(merged[2].feature_names, (std::vector<std::string>{"m"}));
  EXPECT_EQ(dense_embedding_group_key(merged[3]), "autodis#4#5#0_800000#0_100000");
  EXPECT_EQ(merged[4].feature_names, (std::vector<std::string>{"v"}));
}

// The keys (and their order) of TorchEasyRec's DenseEmbeddingCollection.state_dict() for the same
// configs, run with Python.
TEST(DenseEmbeddingCollection, StateDictKeys) {
  DenseEmbeddingCollection ec(std::vector<DenseEmbeddingConfig>{mlp({"price"}, 4), autodis({"age"}, 4, 2),
                                                                 mlp({"ctr"}, 4), mlp({"pic"}, 4, 3)});
  std::vector<std::string> names;
  for (const auto& p : ec->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "dense_embs.mlp#4.proj_w_ctr.weight",
                       "dense_embs.mlp#4.proj_w_price.weight",
                       "dense_embs.autodis#4#2#0_800000#0_100000.meta_emb_age.weight",
                       "dense_embs.autodis#4#2#0_800000#0_100000.proj_w_age.weight",
                       "dense_embs.autodis#4#2#0_800000#0_100000.proj_m_age.weight",
                       "dense_embs.mlp#4#vdim#3#feature_name#            pic.proj_w_pic.weight",
                   }));
}

// Each feature's embedding is its own slice of its module's output: the same values as the module
// run on that feature alone.
TEST(DenseEmbeddingCollection, ForwardPerFeature) {
  torch::manual_seed(2);
  DenseEmbeddingCollection ec(std::vector<DenseEmbeddingConfig>{autodis({"b"}, 4, 3), mlp({"pic"}, 5, 3),
                                                                 autodis({"a"}, 4, 3)});
  torch::Tensor a = torch::randn({6, 1}), b = torch::randn({6, 1}), pic = torch::randn({6, 3});
  sparse::KeyedTensor dense = sparse::KeyedTensor::from_tensors({"pic", "b", "a"}, {pic, b, a});
  auto out = ec->forward(dense);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.at("a").sizes(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(out.at("pic").sizes(), (std::vector<int64_t>{6, 5}));

  // The merged autodis module holds "a" then "b" (sorted): run it on [a, b].
  auto params = ec->named_parameters();
  const std::string key = "dense_embs.autodis#4#3#0_800000#0_100000.";
  AutoDisEmbedding alone(std::vector<std::string>{"a"}, 4, 3, static_cast<double>(0.1f), static_cast<double>(0.8f));
  {
    torch::NoGradGuard no_grad;
    for (const char* kind : {"meta_emb_", "proj_w_", "proj_m_"}) {
      alone->named_parameters()[std::string(kind) + "a.weight"].copy_(params[key + kind + "a.weight"]);
    }
  }
  EXPECT_TRUE(torch::allclose(out.at("a"), alone->forward(a), 1e-6, 1e-7));
  const torch::Tensor w = params["dense_embs.mlp#5#vdim#3#feature_name#            pic.proj_w_pic.weight"];
  EXPECT_TRUE(torch::allclose(out.at("pic"), pic.matmul(w), 1e-6, 1e-7));

  sparse::KeyedTensor missing = sparse::KeyedTensor::from_tensors({"pic", "b"}, {pic, b});
  EXPECT_THROW(ec->forward(missing), DataError);
}

}  // namespace dense_embedding_collection_test
}  // namespace tzrec::embedding
