// DAT: state-dict names, the AMM losses and the augment-width rule. Expected values: TorchEasyRec's
// DAT.loss (tzrec/models/dat.py) recomputed here with plain libtorch from the predictions.
#include "models/match/dat.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dat_test {

using testing::error_of;
using testing::make_kjt;
using testing::parse_config;
using testing::sparse_feature;

std::vector<feature::FeatureInfo> features() {
  std::vector<feature::FeatureInfo> out = {sparse_feature("u", 5, 2), sparse_feature("a", 3, 2),
                                           sparse_feature("i", 6, 2)};
  out[2].neg = out[2].sampled = true;
  return out;
}

std::string config_text(int64_t output_dim = 2, const std::string& data = "") {
  return R"(data_config { label_fields: "clk" )" + data + R"( }
    model_config {
      feature_groups { group_name: "user" feature_names: ["u", "a"] }
      feature_groups { group_name: "item" feature_names: ["i"] }
      feature_groups { group_name: "user_aug" feature_names: ["u"] }
      feature_groups { group_name: "item_aug" feature_names: ["i"] }
      dat {
        user_tower { input: "user" augment_input: "user_aug" mlp { hidden_units: [3] } }
        item_tower { input: "item" augment_input: "item_aug" mlp { hidden_units: [3] } }
        output_dim: )" + std::to_string(output_dim) + R"(
        amm_u_weight: 0.25
        amm_i_weight: 2.0
      }
      losses { softmax_cross_entropy {} }
    })";
}

sparse::Batch batch() {
  sparse::Batch b;
  b.batch_size = 2;
  b.sparse_features = make_kjt({"u", "a"}, {{{1}, {3}}, {{0}, {2}}});
  b.neg_batch_size = 3;
  b.neg_sparse_features = make_kjt({"i"}, {{{0}, {2}, {5}}});
  b.labels["clk"] = torch::tensor({1.0f, 1.0f});
  return b;
}

TEST(DAT, StateDictNames) {
  auto model = create_model(parse_config(config_text()), features());
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  const std::vector<std::string> expected = {
      "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight",
      "user_tower.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.a_emb.weight",
      "user_tower.mlp.mlp.0.perceptron.0.weight",
      "user_tower.mlp.mlp.0.perceptron.0.bias",
      "user_tower.output.weight",
      "user_tower.output.bias",
      "item_tower.embedding_group.emb_impls.__NEG__.ebc.embedding_bags.i_emb.weight",
      "item_tower.mlp.mlp.0.perceptron.0.weight",
      "item_tower.mlp.mlp.0.perceptron.0.bias",
      "item_tower.output.weight",
      "item_tower.output.bias"};
  EXPECT_EQ(names, expected);
}

// amm_loss_u = w_u Σ (normalize(user_aug) − item_emb[:B])², amm_loss_i = w_i Σ (normalize(item_aug[:B]) − user_emb)².
void check_amm(const std::string& data, const torch::Tensor& weights) {
  torch::manual_seed(3);
  auto model = create_model(parse_config(config_text(2, data)), features());
  model->train();
  sparse::Batch b = batch();
  if (weights.defined()) b.sample_weights["w"] = weights;
  auto predictions = model->predict(b);
  for (const char* key : {"user_augment", "item_augment", "user_tower_emb", "item_tower_emb"}) {
    ASSERT_TRUE(predictions.count(key)) << key;
  }
  auto losses = model->loss(predictions, b);
  auto norm = [](const torch::Tensor& x) { return x / x.norm(2, 1, true).clamp_min(1e-12); };
  torch::Tensor u = (norm(predictions["user_augment"]) - predictions["item_tower_emb"].narrow(0, 0, 2)).square().sum(1);
  torch::Tensor i = (norm(predictions["item_augment"].narrow(0, 0, 2)) - predictions["user_tower_emb"]).square().sum(1);
  auto reduce = [&](const torch::Tensor& rows) {
    return weights.defined() ? ((rows * weights).mean() / weights.mean()).item<double>() : rows.sum().item<double>();
  };
  EXPECT_NEAR(losses.at("amm_loss_u").item<double>(), 0.25 * reduce(u), 1e-6);
  EXPECT_NEAR(losses.at("amm_loss_i").item<double>(), 2.0 * reduce(i), 1e-6);
  // The user augment vector is user u's row of the shared table "u_emb" (group user_aug).
  const torch::Tensor table = model->embedding_tables()[0].weight.detach();
  EXPECT_TRUE(torch::allclose(predictions["user_augment"].detach(), torch::stack({table[1], table[3]})));
  // Eval: no augment outputs, no AMM losses.
  model->eval();
  auto eval_predictions = model->predict(b);
  EXPECT_EQ(eval_predictions.size(), 1u);
  EXPECT_EQ(model->loss(eval_predictions, b).count("amm_loss_u"), 0u);
}

TEST(DAT, AmmLossesAsTorchEasyRec) {
  check_amm("", torch::Tensor());
  check_amm(R"(sample_weight_fields: "w")", torch::tensor({1.0f, 3.0f}));
}

TEST(DAT, AugmentGroupsMustBeAsWideAsTheTowerOutputs) {
  const std::string error =
      error_of([&] { create_model(parse_config(config_text(/*output_dim=*/3)), features()); });
  EXPECT_NE(error.find("model_config.dat.user_tower.augment_input: group 'user_aug' is 2 wide"), std::string::npos)
      << error;
}

}  // namespace dat_test
}  // namespace tzrec::models
