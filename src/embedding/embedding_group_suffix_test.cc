// embedding_name_suffix of feature groups (TorchEasyRec docs/source/models/feature_group.md,
// "embedding_name_suffix"; table names as its modules/embedding.py composes them): the same
// features in two groups with different suffixes look up separate tables, with the same suffix one
// shared table; WIDE tables are "<emb>_wide_<suffix>"; nested sequence groups inherit their DEEP
// group's suffix unless they set their own. Expected outputs are rows of each named table's
// weight, picked by hand.
#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"
#include "embedding/table_name.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace embedding_group_suffix_test {

using testing::i64;

FeatureSpec sparse_feature(const std::string& name, int64_t rows, int64_t dim, bool sequence = false) {
  FeatureSpec f;
  f.name = name;
  f.is_sparse = true;
  f.num_embeddings = rows;
  f.embedding_dim = dim;
  f.is_sequence = sequence;
  f.value_dim = 1;
  return f;
}

FeatureGroupConfig group(const std::string& name, GroupType type, std::vector<std::string> features,
                         const std::string& suffix) {
  FeatureGroupConfig g;
  g.group_name = name;
  g.type = type;
  g.feature_names = std::move(features);
  g.embedding_name_suffix = suffix;
  return g;
}

std::vector<std::string> parameter_names(torch::nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters()) names.push_back(p.key());
  return names;
}

torch::Tensor weight_of(torch::nn::Module& m, const std::string& name) {
  return m.named_parameters()[name].detach();
}

// B = 2 rows, one id per row: cat_a {1, 3}, cat_b {0, 2}.
sparse::Batch two_rows() {
  sparse::Batch b;
  b.batch_size = 2;
  torch::Tensor ones = i64({1, 1});
  b.sparse_features =
      sparse::KeyedJaggedTensor::from_jagged({"cat_a", "cat_b"}, {{i64({1, 3}), ones, {}}, {i64({0, 2}), ones, {}}});
  return b;
}

TEST(EmbeddingNameSuffix, TableNames) {
  FeatureSpec f = sparse_feature("cat_a", 4, 2);
  EXPECT_EQ(group_table_name(f, false, ""), "cat_a_emb");
  EXPECT_EQ(group_table_name(f, false, "tower_a"), "cat_a_emb_tower_a");
  EXPECT_EQ(group_table_name(f, true, "tower_a"), "cat_a_emb_wide_tower_a");  // feature_group.md: <emb>_wide_<suffix>
  f.embedding_name = "shared";
  EXPECT_EQ(group_table_name(f, false, "x"), "shared_x");
  EXPECT_EQ(base_table_name(f), "shared");
}

// feature_group.md's example "embedding_name_suffix 双塔不共享embedding": towers a and b read
// cat_a and cat_b from their own tables; a third group with tower_a's suffix shares tower_a's.
TEST(EmbeddingNameSuffix, TowersWithDifferentSuffixesHaveTheirOwnTables) {
  torch::manual_seed(3);
  std::vector<FeatureSpec> features = {sparse_feature("cat_a", 4, 2), sparse_feature("cat_b", 3, 2)};
  EmbeddingGroup eg(features,
                    std::vector<FeatureGroupConfig>{group("tower_a", GroupType::kDeep, {"cat_a", "cat_b"}, "tower_a"),
                     group("tower_b", GroupType::kDeep, {"cat_a", "cat_b"}, "tower_b"),
                     group("again_a", GroupType::kDeep, {"cat_a"}, "tower_a"),
                     group("wide", GroupType::kWide, {"cat_b"}, "w")},
                    3);
  const std::string p = "emb_impls.__BASE__.ebc.embedding_bags.";
  EXPECT_EQ(parameter_names(*eg), (std::vector<std::string>{p + "cat_a_emb_tower_a.weight", p + "cat_b_emb_tower_a.weight",
                                                             p + "cat_a_emb_tower_b.weight", p + "cat_b_emb_tower_b.weight",
                                                             p + "cat_b_emb_wide_w.weight"}));
  for (const auto& c : eg->collections()) {
    for (const TableConfig& t : c.ebc->table_configs()) {
      // What embedding_constraints name (train/embedding_sharding.cc): the features' embedding_name.
      EXPECT_EQ(t.base_name, t.name.substr(0, 9)) << t.name;
    }
  }
  auto out = eg->forward(two_rows());
  const torch::Tensor ids_a = i64({1, 3}), ids_b = i64({0, 2});
  auto rows = [&](const std::string& table, const torch::Tensor& ids) {
    return weight_of(*eg, p + table + ".weight").index_select(0, ids);
  };
  EXPECT_TRUE(torch::equal(out.at("tower_a"),
                           torch::cat({rows("cat_a_emb_tower_a", ids_a), rows("cat_b_emb_tower_a", ids_b)}, 1)));
  EXPECT_TRUE(torch::equal(out.at("tower_b"),
                           torch::cat({rows("cat_a_emb_tower_b", ids_a), rows("cat_b_emb_tower_b", ids_b)}, 1)));
  EXPECT_TRUE(torch::equal(out.at("again_a"), rows("cat_a_emb_tower_a", ids_a)));
  EXPECT_TRUE(torch::equal(out.at("wide"), rows("cat_b_emb_wide_w", ids_b)));
  EXPECT_FALSE(torch::equal(out.at("tower_a"), out.at("tower_b")));
}

// feature_group.md's example "嵌套sequence_group 覆盖/继承父group后缀": click_seq sets its own
// suffix, buy_seq inherits the DEEP group's (models/config_convert.cc fills the inherited one in;
// here it is given as the converted config holds it). A SEQUENCE group with a suffix: "s".
TEST(EmbeddingNameSuffix, SequenceGroupsLookUpTheirSuffixedTables) {
  torch::manual_seed(5);
  std::vector<FeatureSpec> features = {sparse_feature("cat_a", 4, 2), sparse_feature("seq__cat_a", 4, 2, true)};
  SequenceGroupConfig click{"click_seq", {"cat_a", "seq__cat_a"}, "model_config.feature_groups[0].sequence_groups[0]",
                            false, "click_only"};
  SequenceGroupConfig buy{"buy_seq", {"cat_a", "seq__cat_a"}, "model_config.feature_groups[0].sequence_groups[1]",
                          false, "tower_a"};
  SequenceGroupConfig plain{"plain_seq", {"cat_a", "seq__cat_a"}, "model_config.feature_groups[1]", false, ""};
  SequenceEmbeddingGroup seq(features, std::vector<SequenceGroupConfig>{click, buy, plain});
  const std::string p = "ec_dict.2.embeddings.";
  EXPECT_EQ(parameter_names(*seq),
            (std::vector<std::string>{p + "cat_a_emb_click_only.weight", p + "seq__cat_a_emb_click_only.weight",
                                      p + "cat_a_emb_tower_a.weight", p + "seq__cat_a_emb_tower_a.weight",
                                      p + "cat_a_emb.weight", p + "seq__cat_a_emb.weight"}));
  // One bag per table, each reading the batch's feature (what the planner measures), keyed by table.
  std::vector<std::string> bags;
  for (const BagConfig& bag : seq->collections()[0]->bag_configs()) bags.push_back(bag.feature_name + " " + bag.key());
  EXPECT_EQ(bags, (std::vector<std::string>{"cat_a cat_a@cat_a_emb_click_only",
                                            "seq__cat_a seq__cat_a@seq__cat_a_emb_click_only",
                                            "cat_a cat_a@cat_a_emb_tower_a", "seq__cat_a seq__cat_a@seq__cat_a_emb_tower_a",
                                            "cat_a cat_a@cat_a_emb", "seq__cat_a seq__cat_a@seq__cat_a_emb"}));
  sparse::Batch b;
  b.batch_size = 2;
  // cat_a {1, 3}; seq__cat_a: row 0 items {2, 0}, row 1 item {3}.
  b.sparse_features = sparse::KeyedJaggedTensor::from_jagged(
      {"cat_a", "seq__cat_a"}, {{i64({1, 3}), i64({1, 1}), {}}, {i64({2, 0, 3}), i64({2, 1}), {}}});
  b.sequence_lengths = {{"seq__cat_a", i64({2, 1})}};
  auto out = seq->forward(b);
  for (const auto& [g, suffix] : std::vector<std::pair<std::string, std::string>>{
           {"click_seq", "_click_only"}, {"buy_seq", "_tower_a"}, {"plain_seq", ""}}) {
    const torch::Tensor q = weight_of(*seq, p + "cat_a_emb" + suffix + ".weight");
    const torch::Tensor s = weight_of(*seq, p + "seq__cat_a_emb" + suffix + ".weight");
    EXPECT_TRUE(torch::equal(out.at(g + ".query"), q.index_select(0, i64({1, 3})))) << g;
    torch::Tensor expected = torch::zeros({2, 2, 2});
    expected[0][0] = s[2];
    expected[0][1] = s[0];
    expected[1][0] = s[3];
    EXPECT_TRUE(torch::equal(out.at(g + ".sequence"), expected)) << g;
  }
}

TEST(EmbeddingNameSuffix, TableReachedUnderTwoSuffixesIsAConfigError) {
  FeatureSpec a = sparse_feature("cat_a", 4, 2);
  FeatureSpec b = sparse_feature("cat_b", 4, 2);
  b.embedding_name = "cat_a_emb_x";  // what cat_a becomes under suffix "x"
  FeatureGroupConfig gx = group("gx", GroupType::kDeep, {"cat_a"}, "x");
  gx.path = "model_config.feature_groups[0]";
  FeatureGroupConfig plain = group("plain", GroupType::kDeep, {"cat_b"}, "");
  plain.path = "model_config.feature_groups[1]";
  try {
    EmbeddingGroup(std::vector<FeatureSpec>{a, b}, std::vector<FeatureGroupConfig>{gx, plain}, 3);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model_config.feature_groups[1].feature_names[0]: feature 'cat_b' looks up embedding table 'cat_a_emb_x' "
              "with embedding_name_suffix none, and so does feature 'cat_a' of "
              "model_config.feature_groups[0].feature_names[0] with embedding_name_suffix 'x': the two would share "
              "one table the suffixes were meant to keep apart; rename the feature's embedding_name or change one of "
              "the suffixes");
  }
  SequenceGroupConfig sx{"sx", {"cat_a", "seq"}, "model_config.feature_groups[2]", false, "x"};
  SequenceGroupConfig sp{"sp", {"cat_b", "seq"}, "model_config.feature_groups[3]", false, ""};
  EXPECT_THROW(SequenceEmbeddingGroup(std::vector<FeatureSpec>{a, b, sparse_feature("seq", 4, 2, true)},
                                      std::vector<SequenceGroupConfig>{sx, sp}),
               ConfigError);
}

}  // namespace embedding_group_suffix_test
}  // namespace tzrec::embedding
