// MIND: label-aware attention by hand (TorchEasyRec's MIND.label_aware_attention), the state-dict
// names, gradients through both towers, and config rules.
#include "models/match/mind.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace mind_test {

using testing::error_of;
using testing::make_kjt;
using testing::parse_config;
using testing::sparse_feature;

TEST(MIND, LabelAwareAttentionByHand) {
  // One user, interests (1, 0), (0, 1) and a masked third; positive item (2, 1); simi_pow 0.5:
  // logits 0.5·2 = 1 and 0.5·1 = 0.5 → weights e/(e + e^0.5), e^0.5/(e + e^0.5).
  torch::Tensor interests = torch::tensor({{{1.0f, 0.0f}, {0.0f, 1.0f}, {5.0f, 5.0f}}});
  torch::Tensor mask = torch::tensor({{true, true, false}});
  torch::Tensor pos = torch::tensor({{2.0f, 1.0f}});
  torch::Tensor user = label_aware_attention(interests, mask, pos, 0.5);
  const double w0 = std::exp(1.0) / (std::exp(1.0) + std::exp(0.5));
  EXPECT_NEAR(user[0][0].item<double>(), w0, 1e-6);
  EXPECT_NEAR(user[0][1].item<double>(), 1 - w0, 1e-6);
}

std::vector<feature::FeatureInfo> features() {
  feature::FeatureInfo seq = sparse_feature("h__i", 6, 2);
  seq.is_sequence = true;
  seq.value_dim = 1;
  std::vector<feature::FeatureInfo> out = {sparse_feature("u", 5, 2), seq, sparse_feature("i", 6, 2)};
  out[2].neg = out[2].sampled = true;
  return out;
}

std::string config_text(const std::string& user_extra = "", const std::string& extra = "") {
  return R"(data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "user" feature_names: ["u"] }
      feature_groups { group_name: "item" feature_names: ["i"] }
      feature_groups { group_name: "hist" feature_names: ["h__i"] group_type: SEQUENCE }
      mind {
        user_tower {
          input: "user" history_input: "hist"
          user_mlp { hidden_units: [4, 3] }
          hist_seq_mlp { hidden_units: [3] }
          capsule_config { max_k: 2 max_seq_len: 4 high_dim: 3 }
          concat_mlp { hidden_units: [4] }
          )" + user_extra + R"(
        }
        item_tower { input: "item" mlp { hidden_units: [4] } }
        output_dim: 2
        )" + extra + R"(
      }
      losses { softmax_cross_entropy {} }
      metrics { recall_at_k { top_k: 1 } }
    })";
}

sparse::Batch batch() {
  sparse::Batch b;
  b.batch_size = 2;
  b.sparse_features = make_kjt({"u", "h__i"}, {{{1}, {3}}, {{2, 4, 5}, {1}}});
  b.sequence_lengths["h__i"] = torch::tensor({3, 1}, torch::kInt64);
  b.neg_batch_size = 3;
  b.neg_sparse_features = make_kjt({"i"}, {{{0}, {2}, {5}}});
  b.labels["clk"] = torch::tensor({1.0f, 1.0f});
  return b;
}

TEST(MIND, StateDictNamesAndGradients) {
  torch::manual_seed(1);
  auto model = create_model(parse_config(config_text()), features());
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  const std::vector<std::string> expected = {
      "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight",
      "user_tower.embedding_group.seq_emb_impls.__BASE__.ec_dict.2.embeddings.h__i_emb.weight",
      "user_tower.user_mlp.mlp.0.perceptron.0.weight",
      "user_tower.user_mlp.mlp.0.perceptron.0.bias",
      "user_tower.user_mlp_out.weight",
      "user_tower.user_mlp_out.bias",
      "user_tower._hist_seq_mlp.weight",
      "user_tower._capsule_layer.bilinear_matrix",
      "user_tower._concat_mlp.mlp.0.perceptron.0.weight",
      "user_tower._concat_mlp.mlp.0.perceptron.0.bias",
      "user_tower.output.weight",
      "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.i_emb.weight",
      "item_tower.mlp.mlp.0.perceptron.0.weight",
      "item_tower.mlp.mlp.0.perceptron.0.bias",
      "item_tower.output.weight",
      "item_tower.output.bias"};
  EXPECT_EQ(names, expected);
  model->train();
  sparse::Batch b = batch();
  auto predictions = model->predict(b);
  ASSERT_EQ(predictions.at("similarity").sizes(), (std::vector<int64_t>{2, 2}));
  model->total_loss(model->loss(predictions, b)).backward();
  for (const auto& item : model->named_parameters()) {
    torch::Tensor g = item.value().grad();
    ASSERT_TRUE(g.defined()) << item.key();
    EXPECT_GT((g.is_sparse() ? g.to_dense() : g).abs().sum().item<double>(), 0.0) << item.key();
  }
}

TEST(MIND, ConfigRules) {
  auto error = [](const std::string& text) { return error_of([&] { create_model(parse_config(text), features()); }); };
  EXPECT_NE(error(config_text("", "simi_pow: 0")).find("model_config.mind.simi_pow: must be a positive number"),
            std::string::npos);
  EXPECT_NE(error(config_text("")).find("(no error)"), std::string::npos);
  std::string ln = config_text();
  ln.replace(ln.find("user_mlp { hidden_units: [4, 3] }"), 33, "user_mlp { hidden_units: [4, 3] use_ln: true }");
  EXPECT_NE(error(ln).find("not supported yet: model_config.mind.user_tower.user_mlp.use_ln"), std::string::npos)
      << error(ln);
  std::string init = config_text();
  init.replace(init.find("high_dim: 3 }"), 13, "high_dim: 3 routing_init_method: \"uniform\" }");
  EXPECT_NE(error(init).find("capsule_config.routing_init_method: \"uniform\" is not a method"), std::string::npos);
  std::string deep_hist = config_text();
  deep_hist.replace(deep_hist.find(" group_type: SEQUENCE"), 21, "");
  EXPECT_NE(error(deep_hist).find("group 'hist' must be SEQUENCE"), std::string::npos) << error(deep_hist);
}

}  // namespace mind_test
}  // namespace tzrec::models
