// Data group __NEG__ in EmbeddingGroup (docs/tzrec-compatibility.md §6.5) and EmbeddingGroupSet.
// Expected values: the tables' rows picked by hand.
#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"
#include "embedding/embedding_group_set.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace embedding_group_neg_test {

using testing::i64;

using sparse::KeyedJaggedTensor;
using Groups = std::vector<FeatureGroupConfig>;

FeatureSpec feature(const std::string& name, int64_t rows, int64_t dim, bool neg, const std::string& emb = "") {
  FeatureSpec f;
  f.name = name;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.neg = neg;
  f.embedding_name = emb;
  return f;
}

FeatureSpec dense(const std::string& name, int64_t value_dim, bool neg) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = false;
  f.value_dim = value_dim;
  f.neg = neg;
  return f;
}

// User "u" (BASE); item "i" and dense "p" (NEG). Both item tables named "t" on purpose: BASE and
// NEG tables of one name are different tables.
std::vector<FeatureSpec> features() {
  return {feature("u", 4, 2, false, "t"), feature("i", 5, 2, true, "t"), dense("p", 1, true)};
}

TEST(EmbeddingGroupNeg, NegGroupsReadTheSampledRows) {
  torch::manual_seed(3);
  EmbeddingGroup group(features(), Groups{{"user", GroupType::kDeep, {"u"}}, {"item", GroupType::kDeep, {"i", "p"}}}, 0);
  sparse::Batch batch;
  batch.batch_size = 2;
  batch.sparse_features = KeyedJaggedTensor({"u"}, i64({1, 3}), i64({1, 1}));
  batch.neg_batch_size = 3;  // the batch's 2 rows, then one negative
  batch.neg_sparse_features = KeyedJaggedTensor({"i"}, i64({0, 4, 2, 3}), i64({1, 2, 1}));
  batch.neg_dense_features = sparse::KeyedTensor::from_tensors({"p"}, {torch::tensor({{0.5f}, {1.0f}, {2.0f}})});
  auto out = group->forward(batch);
  ASSERT_EQ(out.at("user").sizes(), (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(out.at("item").sizes(), (std::vector<int64_t>{3, 3}));

  std::map<std::string, torch::Tensor> params;
  for (const auto& item : group->named_parameters()) params[item.key()] = item.value().detach();
  ASSERT_EQ(params.size(), 2u);
  const torch::Tensor user_t = params.at("emb_impls.__BASE__.ebc.embedding_bags.t.weight");
  const torch::Tensor item_t = params.at("emb_impls.__NEG__.ebc.embedding_bags.t.weight");
  EXPECT_EQ(item_t.size(0), 5);
  EXPECT_TRUE(torch::allclose(out.at("user").detach(), torch::stack({user_t[1], user_t[3]})));
  torch::Tensor expected_item = torch::stack({item_t[0], item_t[4] + item_t[2], item_t[3]});
  EXPECT_TRUE(torch::allclose(out.at("item").detach().narrow(1, 0, 2), expected_item));
  EXPECT_TRUE(torch::allclose(out.at("item").detach().narrow(1, 2, 1), torch::tensor({{0.5f}, {1.0f}, {2.0f}})));

  std::vector<std::string> tables;
  for (const auto& t : group->tables()) tables.push_back(t.name);
  EXPECT_EQ(tables, (std::vector<std::string>{"t", "neg.t"}));
  EXPECT_EQ(group->parameter_name_of("neg.t"), "emb_impls.__NEG__.ebc.embedding_bags.t.weight");
  EXPECT_EQ(group->parameter_name_of("t"), "emb_impls.__BASE__.ebc.embedding_bags.t.weight");
}

TEST(EmbeddingGroupNeg, AGroupReadsOneDataGroup) {
  try {
    EmbeddingGroup group(features(), Groups{{"all", GroupType::kDeep, {"u", "i"}, "model_config.feature_groups[0]"}}, 0);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model_config.feature_groups[0].feature_names: group 'all' mixes sampled item features (i"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("other features (u)"), std::string::npos) << msg;
  }
  EXPECT_THROW(EmbeddingGroup(features(), Groups{{"seq", GroupType::kSequence, {"i"}}}, 0), NotSupportedError);
}

TEST(EmbeddingGroupSet, NamesTablesByTowerAndModulePath) {
  EmbeddingGroup user(features(), Groups{{"user", GroupType::kDeep, {"u"}}}, 0);
  EmbeddingGroup item(features(), Groups{{"item", GroupType::kDeep, {"i"}}}, 0);
  EmbeddingGroupSet set;
  set.add("user_tower.embedding_group", "user_tower.", user);
  set.add("item_tower.embedding_group", "item_tower.", item);
  std::vector<std::string> tables;
  for (const auto& t : set.tables()) tables.push_back(t.name);
  EXPECT_EQ(tables, (std::vector<std::string>{"user_tower.t", "item_tower.neg.t"}));
  std::vector<std::string> prefixes;
  for (const auto& c : set.collections()) prefixes.push_back(c.prefix);
  EXPECT_EQ(prefixes, (std::vector<std::string>{"user_tower.", "item_tower.neg."}));
  EXPECT_EQ(set.parameter_name_of("item_tower.neg.t"),
            "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.t.weight");
  EXPECT_EQ(set.parameter_name_of("user_tower.t"),
            "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.t.weight");
  // One fused optimizer over both towers' collections, state keyed by the prefixed names.
  FusedOptimizerGroup& fused = set.enable_fused_optimizer(FusedOptimizerOptions{});
  EXPECT_EQ(fused.members().size(), 2u);
}

}  // namespace embedding_group_neg_test
}  // namespace tzrec::embedding
