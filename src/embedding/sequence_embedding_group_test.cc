// SequenceEmbeddingGroup: query / sequence / sequence_length of SEQUENCE groups. Expected values
// are built row by row and item by item from the tables' weights with plain loops (the layout of
// TorchEasyRec's SequenceEmbeddingGroupImpl: query features pooled per row, item embeddings padded
// with zeros on the right to the batch's longest history of the group's first sequence feature).
#include "embedding/sequence_embedding_group.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace sequence_embedding_group_test {

using testing::i64;

using Groups = std::vector<SequenceGroupConfig>;

FeatureSpec sparse(const std::string& name, int64_t rows, int64_t dim, bool sequence, int64_t value_dim = 1,
                   const std::string& pooling = "sum", const std::string& emb_name = "") {
  FeatureSpec f;
  f.name = name;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.is_sequence = sequence;
  f.value_dim = value_dim;
  f.pooling = pooling;
  f.embedding_name = emb_name;
  return f;
}

FeatureSpec dense(const std::string& name, int64_t value_dim, bool sequence) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = false;
  f.value_dim = value_dim;
  f.is_sequence = sequence;
  return f;
}

// B = 3 rows. Query: "q" (ids per row {1}, {2, 3}, {}) and dense "d" [3, 2]. Sequences: "s__a" (one
// id per item; items per row 2, 0, 1), "s__b" (several ids per item, mean pooling; items 2, 0, 1
// with ids {4, 5}, {6} | - | {}), dense "s__p" (one value per item).
struct Fixture {
  std::vector<FeatureSpec> features = {sparse("q", 10, 4, false, 0), dense("d", 2, false),
                                       sparse("s__a", 10, 4, true), sparse("s__b", 10, 2, true, 0, "mean"),
                                       dense("s__p", 1, true)};
  sparse::Batch batch;

  Fixture() {
    batch.batch_size = 3;
    batch.sparse_features = sparse::KeyedJaggedTensor::from_jagged(
        {"q", "s__a", "s__b"}, {{i64({1, 2, 3}), i64({1, 2, 0}), {}},
                                {i64({7, 8, 9}), i64({2, 0, 1}), {}},
                                {i64({4, 5, 6}), i64({3, 0, 0}), {}}});
    batch.dense_features = sparse::KeyedTensor::from_tensors({"d"}, {torch::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})});
    batch.sequence_lengths = {{"s__a", i64({2, 0, 1})}, {"s__b", i64({2, 0, 1})}, {"s__p", i64({2, 0, 1})}};
    batch.sequence_item_lengths = {{"s__b", i64({2, 1, 0})}};
    batch.sequence_dense_features = {{"s__p", torch::tensor({{0.5f}, {1.5f}, {2.5f}})}};
  }
};

std::map<std::string, torch::Tensor> weights(SequenceEmbeddingGroup& g) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& t : g->tables()) out[t.name] = t.weight.detach();
  return out;
}

TEST(SequenceEmbeddingGroup, QuerySequenceAndLength) {
  Fixture fx;
  SequenceEmbeddingGroup g(fx.features, Groups{{"seq", {"q", "s__a", "d", "s__b", "s__p"}, "model_config.feature_groups[1]"}});
  EXPECT_EQ(g->query_dim("seq"), 4 + 2);
  EXPECT_EQ(g->sequence_dim("seq"), 4 + 2 + 1);
  auto w = weights(g);
  ASSERT_EQ(w.size(), 3u);  // q_emb, s__a_emb, s__b_emb
  auto out = g->forward(fx.batch);

  // Query: q pooled (sum) per row, then d.
  torch::Tensor q = torch::zeros({3, 6});
  q[0].slice(0, 0, 4) = w["q_emb"][1];
  q[1].slice(0, 0, 4) = w["q_emb"][2] + w["q_emb"][3];
  q.slice(1, 4, 6) = torch::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  EXPECT_TRUE(torch::allclose(out.at("seq.query"), q)) << out.at("seq.query") << "\n" << q;

  // Sequence [3, T = 2, 7]: [s__a | s__b (mean of an item's ids) | s__p], zeros past each history.
  torch::Tensor s = torch::zeros({3, 2, 7});
  s[0][0].slice(0, 0, 4) = w["s__a_emb"][7];
  s[0][1].slice(0, 0, 4) = w["s__a_emb"][8];
  s[2][0].slice(0, 0, 4) = w["s__a_emb"][9];
  s[0][0].slice(0, 4, 6) = (w["s__b_emb"][4] + w["s__b_emb"][5]) / 2;
  s[0][1].slice(0, 4, 6) = w["s__b_emb"][6];
  // row 2's s__b item has no id: zeros.
  s[0][0][6] = 0.5f;
  s[0][1][6] = 1.5f;
  s[2][0][6] = 2.5f;
  EXPECT_TRUE(torch::allclose(out.at("seq.sequence"), s)) << out.at("seq.sequence") << "\n" << s;
  EXPECT_TRUE(torch::equal(out.at("seq.sequence_length"), i64({2, 0, 1})));
}

TEST(SequenceEmbeddingGroup, PadsToTheGroupsLongestHistoryAndBackpropagates) {
  Fixture fx;
  // A group without query features; its first sequence feature's longest history is 2 while a
  // longer one elsewhere in the batch (3 items) sets the bag layout.
  fx.features.push_back(sparse("long", 10, 4, true));
  fx.batch.sparse_features = sparse::KeyedJaggedTensor::from_jagged(
      {"q", "s__a", "s__b", "long"}, {{i64({1, 2, 3}), i64({1, 2, 0}), {}},
                                      {i64({7, 8, 9}), i64({2, 0, 1}), {}},
                                      {i64({4, 5, 6}), i64({3, 0, 0}), {}},
                                      {i64({1, 2, 3}), i64({0, 3, 0}), {}}});
  fx.batch.sequence_lengths["long"] = i64({0, 3, 0});
  SequenceEmbeddingGroup g(fx.features, Groups{{"a", {"s__a"}, "p[0]"}, {"l", {"long"}, "p[1]"}});
  auto out = g->forward(fx.batch);
  EXPECT_EQ(out.count("a.query"), 0u);
  EXPECT_EQ(out.at("a.sequence").sizes(), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(out.at("l.sequence").sizes(), (std::vector<int64_t>{3, 3, 4}));
  auto w = weights(g);
  EXPECT_TRUE(torch::allclose(out.at("l.sequence")[1][2], w["long_emb"][3]));
  // Plain mode: sparse gradients reach exactly the looked-up rows.
  out.at("a.sequence").sum().backward();
  for (const auto& t : g->tables()) {
    if (t.name != "s__a_emb") continue;
    torch::Tensor grad = t.weight.grad().to_dense();
    EXPECT_TRUE(torch::equal(grad.abs().sum(1).nonzero().flatten(), i64({7, 8, 9})));
  }
}

// JAGGED_SEQUENCE (TorchEasyRec's EmbeddingGroup takes jt.values() of each sequence feature for
// such groups, tzrec/modules/embedding.py): the same items as the padded layout above, without the
// padding — row 0's two items, then row 2's one — and the same query and lengths.
TEST(SequenceEmbeddingGroup, JaggedGroupKeepsOnlyTheValidItems) {
  Fixture fx;
  const std::vector<std::string> names = {"q", "s__a", "d", "s__b", "s__p"};
  SequenceEmbeddingGroup padded(fx.features, Groups{{"seq", names, "p[0]"}});
  SequenceEmbeddingGroup jagged(fx.features, Groups{{"seq", names, "p[0]", /*jagged=*/true}});
  EXPECT_FALSE(padded->is_jagged("seq"));
  EXPECT_TRUE(jagged->is_jagged("seq"));
  {
    torch::NoGradGuard g;
    auto from = padded->tables();
    auto to = jagged->tables();
    for (size_t i = 0; i < from.size(); ++i) to[i].weight.copy_(from[i].weight);
  }
  auto p = padded->forward(fx.batch);
  auto j = jagged->forward(fx.batch);
  const torch::Tensor& s = p.at("seq.sequence");  // [3, 2, 7]
  torch::Tensor want = torch::stack({s[0][0], s[0][1], s[2][0]});
  EXPECT_EQ(j.at("seq.sequence").sizes(), (std::vector<int64_t>{3, 7}));
  EXPECT_TRUE(torch::allclose(j.at("seq.sequence"), want)) << j.at("seq.sequence") << "\n" << want;
  EXPECT_TRUE(torch::allclose(j.at("seq.query"), p.at("seq.query")));
  EXPECT_TRUE(torch::equal(j.at("seq.sequence_length"), i64({2, 0, 1})));
  // Gradients reach the rows of the valid items only.
  j.at("seq.sequence").sum().backward();
  for (const auto& t : jagged->tables()) {
    if (t.name != "s__a_emb") continue;
    torch::Tensor grad = t.weight.grad().to_dense();
    EXPECT_TRUE(torch::equal(grad.abs().sum(1).nonzero().flatten(), i64({7, 8, 9})));
  }
}

TEST(SequenceEmbeddingGroup, ConfigErrors) {
  Fixture fx;
  auto err = [&](std::vector<SequenceGroupConfig> groups) {
    try {
      SequenceEmbeddingGroup g(fx.features, std::move(groups));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(err({{"seq", {"q", "d"}, "model_config.feature_groups[1]"}}),
            "model_config.feature_groups[1].feature_names: sequence group 'seq' has no sequence feature; add a "
            "sequence_feature sub-feature or a sequence_* feature");
  EXPECT_EQ(err({{"seq", {"s__a", "nope"}, "model_config.feature_groups[1]"}}),
            "model_config.feature_groups[1].feature_names[1]: unknown feature 'nope' (group 'seq'); use a "
            "feature_name of feature_configs");
  fx.features.push_back(sparse("other", 20, 4, true, 1, "sum", "s__a_emb"));
  EXPECT_EQ(err({{"seq", {"s__a", "other"}, "model_config.feature_groups[1]"}}),
            "model_config.feature_groups[1].feature_names[1]: features 's__a' and 'other' share embedding table "
            "'s__a_emb' but have 10 x 4 and 20 x 4 rows x dim; give them the same size or different embedding_name");
}

}  // namespace sequence_embedding_group_test
}  // namespace tzrec::embedding
