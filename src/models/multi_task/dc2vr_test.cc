// DC2VR (tzrec/models/dc2vr.py, DC2VR line 28, predict line 116): the wiring (bottom MLP, optional MMoE, tower MLPs, each
// intervention reading the earlier towers' representations, output Linears) against the same
// steps with plain ops and the model's own submodules (nn::Intervention itself is checked against
// PyTorch's orthogonal parametrization in nn/intervention_test.cc); state-dict names; gradients;
// config errors.
#include "models/multi_task/dc2vr.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dc2vr_test {

using testing::ab_price_batch;
using testing::ab_price_features;
using testing::child;
using testing::dense_of;
using testing::error_of;
using testing::kIdsA;
using testing::kIdsB;
using testing::keys_of;
using testing::linear;
using testing::parse_config;
using testing::pooled;
using testing::tables_of;

std::string config_text(const std::string& model_body) {
  return R"(data_config { label_fields: ["clk", "buy"] }
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "price"] }
      dc2vr { )" + model_body + R"( }
    })";
}

const char kTwoTowers[] = R"(
  bottom_mlp { hidden_units: [6] }
  task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [4] } losses { binary_cross_entropy {} }
                metrics { auc {} } }
  task_towers { tower_name: "cvr" label_name: "buy" mlp { hidden_units: [4] } low_rank_dim: 2
                intervention_tower_names: "ctr" losses { binary_cross_entropy {} } metrics { auc {} } })";

std::shared_ptr<DC2VR> make(const std::string& body) {
  auto model = std::dynamic_pointer_cast<DC2VR>(create_model(parse_config(config_text(body)), ab_price_features()));
  EXPECT_NE(model, nullptr);
  return model;
}

sparse::Batch batch() {
  auto b = ab_price_batch();
  b.labels["buy"] = torch::tensor({0.0f, 0.0f, 1.0f});
  return b;
}

torch::Tensor group_input(Model& model) {
  auto t = tables_of(model);
  return torch::cat({pooled(t["a_emb"], kIdsA), pooled(t["b_emb"], kIdsB), torch::tensor({{0.5f}, {1.0f}, {-2.0f}})},
                    1);
}

TEST(DC2VR, ForwardMatchesPlainOps) {
  torch::manual_seed(3);
  auto model = make(kTwoTowers);
  model->eval();
  auto pred = model->predict(batch());
  auto p = dense_of(*model);
  auto intervention = child<nn::InterventionImpl>(*model, "intervention.cvr");
  ASSERT_NE(intervention, nullptr);
  torch::NoGradGuard g;
  auto bottom = torch::relu(linear(group_input(*model), p, "bottom_mlp.mlp.0.perceptron.0"));
  auto ctr = torch::relu(linear(bottom, p, "task_mlps.ctr.mlp.0.perceptron.0"));
  auto cvr = intervention->forward(torch::relu(linear(bottom, p, "task_mlps.cvr.mlp.0.perceptron.0")), ctr);
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), linear(ctr, p, "task_outputs.0").squeeze(1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(pred.at("logits_cvr"), linear(cvr, p, "task_outputs.1").squeeze(1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(pred.at("probs_cvr"), torch::sigmoid(pred.at("logits_cvr"))));
}

// With MMoE each task reads its own expert mixture; a tower without MLP passes it on.
TEST(DC2VR, MMoEAndTowersWithoutMLP) {
  torch::manual_seed(4);
  auto model = make(R"(
    expert_mlp { hidden_units: [4] } num_expert: 2
    task_towers { tower_name: "ctr" label_name: "clk" losses { binary_cross_entropy {} } }
    task_towers { tower_name: "cvr" label_name: "buy" low_rank_dim: 3 intervention_tower_names: "ctr"
                  dropout_ratio: 0.0 losses { binary_cross_entropy {} } })");
  model->eval();
  auto pred = model->predict(batch());
  auto p = dense_of(*model);
  auto mmoe = child<nn::MMoEImpl>(*model, "mmoe");
  auto intervention = child<nn::InterventionImpl>(*model, "intervention.cvr");
  torch::NoGradGuard g;
  auto inputs = mmoe->forward(group_input(*model));
  auto cvr = intervention->forward(inputs[1], inputs[0]);
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), linear(inputs[0], p, "task_outputs.0").squeeze(1), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(pred.at("logits_cvr"), linear(cvr, p, "task_outputs.1").squeeze(1), 1e-5, 1e-5));
}

TEST(DC2VR, ParameterNamesAsTorchEasyRec) {
  auto model = make(kTwoTowers);
  EXPECT_EQ(keys_of(model->dense_parameters()),
            (std::vector<std::string>{"bottom_mlp.mlp.0.perceptron.0.weight", "bottom_mlp.mlp.0.perceptron.0.bias",
                                      "task_mlps.ctr.mlp.0.perceptron.0.weight", "task_mlps.ctr.mlp.0.perceptron.0.bias",
                                      "task_mlps.cvr.mlp.0.perceptron.0.weight", "task_mlps.cvr.mlp.0.perceptron.0.bias",
                                      "intervention.cvr.base_rotate_layer.parametrizations.weight.original",
                                      "intervention.cvr.source_rotate_layer.parametrizations.weight.original",
                                      "task_outputs.0.weight", "task_outputs.0.bias", "task_outputs.1.weight",
                                      "task_outputs.1.bias"}));
  std::vector<std::string> buffers;
  for (const auto& item : model->named_buffers()) buffers.push_back(item.key());
  EXPECT_EQ(buffers, (std::vector<std::string>{"intervention.cvr.base_rotate_layer.parametrizations.weight.0.base",
                                               "intervention.cvr.source_rotate_layer.parametrizations.weight.0.base"}));
}

TEST(DC2VR, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto model = make(kTwoTowers);
  model->train();
  auto b = batch();
  model->total_loss(model->loss(model->predict(b), b)).backward();
  testing::expect_gradients_everywhere(*model);
}

TEST(DC2VR, ConfigErrors) {
  auto err = [](const std::string& towers) {
    return error_of([&] { make("bottom_mlp { hidden_units: [6] } " + towers); });
  };
  const std::string ctr =
      R"(task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [4] } losses { binary_cross_entropy {} } })";
  EXPECT_EQ(err(R"(task_towers { tower_name: "cvr" label_name: "buy" low_rank_dim: 2 intervention_tower_names: "ctr"
                                 losses { binary_cross_entropy {} } } )" + ctr),
            "model_config.dc2vr.task_towers[0].intervention_tower_names[0]: 'ctr' is not a tower listed before 'cvr'; "
            "a tower intervenes only with earlier towers");
  EXPECT_EQ(err(ctr + R"(task_towers { tower_name: "cvr" label_name: "buy" low_rank_dim: 4
                                       intervention_tower_names: "ctr" losses { binary_cross_entropy {} } })"),
            "model_config.dc2vr.task_towers[1].low_rank_dim: must be ≥ 1 and below the tower's width (6) and the width "
            "of its intervention towers together (4), got 4");
  EXPECT_EQ(err(ctr + R"(task_towers { tower_name: "cvr" label_name: "buy" low_rank_dim: 2
                                       losses { binary_cross_entropy {} } })"),
            "model_config.dc2vr.task_towers[1].intervention_tower_names: name at least one earlier tower to intervene "
            "with, or drop low_rank_dim");
  EXPECT_EQ(err(ctr + R"(task_towers { tower_name: "cvr" label_name: "buy" intervention_tower_names: "ctr"
                                       losses { binary_cross_entropy {} } })"),
            "model_config.dc2vr.task_towers[1].low_rank_dim: required with intervention_tower_names (the rank of the "
            "shared space)");
  EXPECT_EQ(err(ctr + R"(task_towers { tower_name: "cvr" label_name: "buy" low_rank_dim: 2 dropout_ratio: 1.5
                                       intervention_tower_names: "ctr" losses { binary_cross_entropy {} } })"),
            "model_config.dc2vr.task_towers[1].dropout_ratio: must be in [0, 1], got 1.5");
}

}  // namespace dc2vr_test
}  // namespace tzrec::models
