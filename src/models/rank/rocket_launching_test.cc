// RocketLaunching against tzrec/models/rocket_launching.py (_get_distillation_mlp_index line 77,
// predict line 88, feature_based_sim line 125, _distillation_loss line 182, loss line 206): predictions of the light net with plain libtorch ops, the booster
// only in training, the losses (both nets' configured losses, hint_l2_loss, similarity_<i>_<j>)
// against hand computations from the predictions, the light net kept from the shared bottom's
// gradient, eval metrics of the light net only, names and config errors.
#include "models/rank/rocket_launching.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace rocket_launching_test {

using testing::ab_price_batch;
using testing::ab_price_features;
using testing::dense_of;
using testing::error_of;
using testing::kIdsA;
using testing::kIdsB;
using testing::keys_of;
using testing::linear;
using testing::parse_config;
using testing::pooled;
using testing::tables_of;

std::string config_text(const std::string& extra = "feature_based_distillation: true", bool weights = false) {
  return std::string("data_config { label_fields: 'clk' ") + (weights ? "sample_weight_fields: 'w' " : "") + R"(}
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "price"] }
      rocket_launching {
        share_mlp { hidden_units: [6] }
        booster_mlp { hidden_units: [8, 4] }
        light_mlp { hidden_units: [4] }
        )" + extra + R"(
      }
      metrics { auc {} }
      train_metrics { auc {} }
      losses { binary_cross_entropy {} }
    })";
}

std::shared_ptr<RocketLaunching> make(const protos::EasyRecConfig& config) {
  auto model = std::dynamic_pointer_cast<RocketLaunching>(create_model(config, ab_price_features()));
  EXPECT_NE(model, nullptr);
  return model;
}

std::vector<std::string> keys(const TensorMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

TEST(RocketLaunching, ParameterNamesAsTorchEasyRec) {
  auto model = make(parse_config(config_text()));
  EXPECT_EQ(keys_of(model->dense_parameters()),
            (std::vector<std::string>{"share_mlp.mlp.0.perceptron.0.weight", "share_mlp.mlp.0.perceptron.0.bias",
                                      "booster_mlp.mlp.0.perceptron.0.weight", "booster_mlp.mlp.0.perceptron.0.bias",
                                      "booster_mlp.mlp.1.perceptron.0.weight", "booster_mlp.mlp.1.perceptron.0.bias",
                                      "booster_linear.weight", "booster_linear.bias",
                                      "light_mlp.mlp.0.perceptron.0.weight", "light_mlp.mlp.0.perceptron.0.bias",
                                      "light_linear.weight", "light_linear.bias"}));
}

TEST(RocketLaunching, LightNetPredictsAndBoosterOnlyInTraining) {
  torch::manual_seed(4);
  auto model = make(parse_config(config_text()));
  model->eval();
  auto pred = model->predict(ab_price_batch());
  EXPECT_EQ(keys(pred), (std::vector<std::string>{"logits_light", "probs_light"}));
  auto t = tables_of(*model);
  auto p = dense_of(*model);
  {
    torch::NoGradGuard g;
    auto x = torch::cat({pooled(t["a_emb"], kIdsA), pooled(t["b_emb"], kIdsB), torch::tensor({{0.5f}, {1.0f}, {-2.0f}})},
                        1);
    auto share = torch::relu(linear(x, p, "share_mlp.mlp.0.perceptron.0"));
    auto light = torch::relu(linear(share, p, "light_mlp.mlp.0.perceptron.0"));
    auto y = linear(light, p, "light_linear").squeeze(1);
    EXPECT_TRUE(torch::allclose(pred.at("logits_light"), y, 1e-5, 1e-5)) << pred.at("logits_light") << y;
    auto booster = torch::relu(linear(torch::relu(linear(share, p, "booster_mlp.mlp.0.perceptron.0")), p,
                                      "booster_mlp.mlp.1.perceptron.0"));
    model->train();
    auto train_pred = model->predict(ab_price_batch());
    EXPECT_EQ(keys(train_pred), (std::vector<std::string>{"booster_1", "light_0", "logits_booster", "logits_light",
                                                          "probs_booster", "probs_light"}));
    EXPECT_TRUE(torch::allclose(train_pred.at("logits_booster"), linear(booster, p, "booster_linear").squeeze(1), 1e-5,
                                1e-5));
    EXPECT_TRUE(torch::allclose(train_pred.at("booster_1"), booster, 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(train_pred.at("light_0"), light, 1e-5, 1e-5));
  }
}

torch::Tensor bce(const torch::Tensor& logits, const torch::Tensor& label) {
  auto p = torch::sigmoid(logits);
  return -(label * torch::log(p) + (1 - label) * torch::log(1 - p)).mean();
}

TEST(RocketLaunching, LossesAsTorchEasyRecDefinesThem) {
  torch::manual_seed(5);
  auto model = make(parse_config(config_text()));
  auto batch = ab_price_batch();
  model->train();
  auto pred = model->predict(batch);
  auto losses = model->loss(pred, batch);
  EXPECT_EQ(keys(losses), (std::vector<std::string>{"binary_cross_entropy_booster", "binary_cross_entropy_light",
                                                    "hint_l2_loss", "similarity_0_1"}));
  auto label = batch.labels.at("clk");
  torch::NoGradGuard g;
  EXPECT_NEAR(losses.at("binary_cross_entropy_booster").item<double>(),
              bce(pred.at("logits_booster"), label).item<double>(), 1e-5);
  EXPECT_NEAR(losses.at("binary_cross_entropy_light").item<double>(),
              bce(pred.at("logits_light"), label).item<double>(), 1e-5);
  EXPECT_NEAR(losses.at("hint_l2_loss").item<double>(),
              (pred.at("logits_light") - pred.at("logits_booster")).square().mean().item<double>(), 1e-6);
  auto l = pred.at("light_0"), b = pred.at("booster_1");
  auto cos = (l * b).sum(1) / (l.norm(2, 1).clamp_min(1e-12) * b.norm(2, 1).clamp_min(1e-12));
  EXPECT_NEAR(losses.at("similarity_0_1").item<double>(), (-0.1 * cos.mean()).item<double>(), 1e-6);
  // Evaluation: the light net's loss only.
  model->eval();
  EXPECT_EQ(keys(model->loss(model->predict(batch), batch)), (std::vector<std::string>{"binary_cross_entropy_light"}));
}

// EUCLID (any function but COSINE) with sample weights: sqrt(Σ_b ‖booster − light‖² · w_b / mean(w)),
// and the hint loss mean((light − booster)² · w / mean(w)).
TEST(RocketLaunching, EuclideanDistillationWithSampleWeights) {
  torch::manual_seed(6);
  auto model = make(parse_config(
      config_text("feature_based_distillation: true feature_distillation_function: EUCLID", /*weights=*/true)));
  auto batch = ab_price_batch();
  batch.sample_weights["w"] = torch::tensor({1.0f, 2.0f, 3.0f});
  model->train();
  auto pred = model->predict(batch);
  auto losses = model->loss(pred, batch);
  torch::NoGradGuard g;
  auto w = torch::tensor({0.5f, 1.0f, 1.5f});  // w / mean(w)
  auto d = (pred.at("booster_1") - pred.at("light_0")).square().sum(1);
  EXPECT_NEAR(losses.at("similarity_0_1").item<double>(), (d * w).sum().sqrt().item<double>(), 1e-5);
  auto hint = (pred.at("logits_light") - pred.at("logits_booster")).square();
  EXPECT_NEAR(losses.at("hint_l2_loss").item<double>(), (hint * w).mean().item<double>(), 1e-6);
}

TEST(RocketLaunching, WithoutFeatureDistillationOnlyTheHint) {
  auto model = make(parse_config(config_text("")));
  auto batch = ab_price_batch();
  model->train();
  auto losses = model->loss(model->predict(batch), batch);
  EXPECT_EQ(keys(losses), (std::vector<std::string>{"binary_cross_entropy_booster", "binary_cross_entropy_light",
                                                    "hint_l2_loss"}));
}

// The light net reads the shared bottom detached: its losses leave share_mlp and the embeddings
// without gradient; the booster's reach them.
TEST(RocketLaunching, OnlyTheBoosterTrainsTheSharedBottom) {
  torch::manual_seed(7);
  auto model = make(parse_config(config_text()));
  auto batch = ab_price_batch();
  model->train();
  auto losses = model->loss(model->predict(batch), batch);
  (losses.at("binary_cross_entropy_light") + losses.at("hint_l2_loss") + losses.at("similarity_0_1")).backward();
  auto p = dense_of(*model);
  EXPECT_FALSE(p["share_mlp.mlp.0.perceptron.0.weight"].grad().defined());
  EXPECT_FALSE(p["booster_linear.weight"].grad().defined());
  EXPECT_GT(p["light_linear.weight"].grad().abs().sum().item<double>(), 0.0);
  for (auto& item : model->named_parameters()) {
    if (item.value().grad().defined()) item.value().mutable_grad().zero_();
  }
  model->total_loss(model->loss(model->predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(*model);
}

TEST(RocketLaunching, EvalMetricsOfTheLightNetTrainMetricsOfBoth) {
  auto model = make(parse_config(config_text()));
  auto batch = ab_price_batch();
  model->train();
  auto pred = model->predict(batch);
  model->update_train_metrics(pred, batch);
  model->eval();
  auto eval_pred = model->predict(batch);
  model->update_metrics(eval_pred, batch, model->loss(eval_pred, batch));
  auto result = model->compute_metrics();
  std::vector<std::string> names;
  for (const auto& [k, v] : result) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"auc_light", "binary_cross_entropy_light"}));
}

TEST(RocketLaunching, ConfigErrors) {
  auto err = [](const std::string& body) {
    return error_of([&] { make(parse_config(std::string("data_config { label_fields: 'clk' } model_config { "
                                                        "feature_groups { group_name: 'all' feature_names: ['a'] } "
                                                        "rocket_launching { ") +
                                            body + " } losses { binary_cross_entropy {} } }")); });
  };
  EXPECT_EQ(err("light_mlp { hidden_units: [4] }"), "model_config.rocket_launching.booster_mlp: required");
  EXPECT_EQ(err("booster_mlp { hidden_units: [4] }"), "model_config.rocket_launching.light_mlp: required");
  EXPECT_EQ(err("booster_mlp { hidden_units: [4] } light_mlp { hidden_units: [0] }"),
            "model_config.rocket_launching.light_mlp.hidden_units[0]: must be > 0, got 0");
}

}  // namespace rocket_launching_test
}  // namespace tzrec::models
