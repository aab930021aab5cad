// DBMTL: predictions against the same forward composed from its submodules (mask net, bottom MLP, MMoE,
// task MLPs, relation MLPs over earlier towers, outputs), label defaults, config errors.
#include "models/multi_task/dbmtl.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dbmtl_test {

using testing::child;
using testing::error_of;
using testing::make_kjt;
using testing::parse_config;

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("i", 5, 2)};
}

std::string config_text(const std::string& dbmtl_body, const std::string& data = R"(label_fields: ["clk", "buy"])") {
  return "data_config { " + data + R"( }
    model_config {
      feature_groups { group_name: "all" feature_names: ["u", "i"] }
      dbmtl { )" + dbmtl_body + R"( }
    })";
}

const char kTowers[] = R"(
  task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [4] } losses { binary_cross_entropy {} } }
  task_towers { tower_name: "cvr" label_name: "buy" mlp { hidden_units: [4] } relation_mlp { hidden_units: [3] }
                relation_tower_names: "ctr" losses { binary_cross_entropy {} } })";

std::shared_ptr<Model> make(const std::string& text) { return create_model(parse_config(text), features()); }

sparse::Batch batch_of(int64_t rows) {
  sparse::Batch batch;
  batch.batch_size = rows;
  std::vector<float> clk, buy;
  std::vector<std::vector<int64_t>> u, i;
  for (int64_t r = 0; r < rows; ++r) {
    clk.push_back(static_cast<float>(r % 2));
    buy.push_back(static_cast<float>(r % 3 == 0));
    u.push_back({r % 6});
    i.push_back({(r * 3) % 5});
  }
  batch.labels["clk"] = torch::tensor(clk);
  batch.labels["buy"] = torch::tensor(buy);
  batch.sparse_features = make_kjt({"u", "i"}, {u, i});
  return batch;
}

torch::Tensor linear(torch::nn::Module& m, const std::string& name, const torch::Tensor& x) {
  auto l = child<torch::nn::LinearImpl>(m, name);
  return x.matmul(l->weight.t()) + l->bias;
}

TEST(DBMTLModel, ForwardMatchesItsSubmodules) {
  auto model = make(config_text(R"(bottom_mlp { hidden_units: [8] } expert_mlp { hidden_units: [6] } num_expert: 2
                                   gate_mlp { hidden_units: [5] })" +
                                std::string(kTowers)));
  model->eval();
  auto batch = batch_of(7);
  auto pred = model->predict(batch);
  torch::Tensor all = model->embedding_group()->forward(batch).at("all");
  torch::Tensor bottom = child<nn::MLPImpl>(*model, "bottom_mlp")->forward(all);
  auto inputs = child<nn::MMoEImpl>(*model, "mmoe")->forward(bottom);
  torch::Tensor ctr = child<nn::MLPImpl>(*model, "task_mlps.ctr")->forward(inputs[0]);
  torch::Tensor cvr = child<nn::MLPImpl>(*model, "task_mlps.cvr")->forward(inputs[1]);
  torch::Tensor cvr_rel = child<nn::MLPImpl>(*model, "relation_mlps.cvr")->forward(torch::cat({cvr, ctr}, 1));
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), linear(*model, "task_outputs.0", ctr).squeeze(1), 1e-5, 1e-6));
  EXPECT_TRUE(
      torch::allclose(pred.at("logits_cvr"), linear(*model, "task_outputs.1", cvr_rel).squeeze(1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(pred.at("probs_cvr"), torch::sigmoid(pred.at("logits_cvr"))));
  std::vector<std::string> names = testing::keys_of(model->dense_parameters());
  for (const char* want : {"bottom_mlp.mlp.0.perceptron.0.weight", "mmoe.gate_mlps.1.mlp.0.perceptron.0.bias",
                           "task_mlps.cvr.mlp.0.perceptron.0.weight", "relation_mlps.cvr.mlp.0.perceptron.0.weight",
                           "task_outputs.1.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  // relation_mlps.cvr reads [cvr mlp 4 | ctr mlp 4].
  auto relation = child<nn::MLPImpl>(*model, "relation_mlps.cvr");
  EXPECT_EQ(relation->named_parameters()["mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{3, 8}));
  // Losses per tower, training reaches every parameter.
  model->train();
  auto losses = model->loss(model->predict(batch), batch);
  ASSERT_EQ(losses.size(), 2u);
  model->total_loss(losses).backward();
  for (const auto& [name, p] : model->dense_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
}

TEST(DBMTLModel, TowersWithoutMlpsReadTheGroupAndLabelsDefaultByPosition) {
  auto model = make(config_text(R"(
    task_towers { tower_name: "a" losses { binary_cross_entropy {} } }
    task_towers { tower_name: "b" relation_mlp { hidden_units: [2] } relation_tower_names: "a"
                  losses { l2_loss {} } })"));
  ASSERT_EQ(model->tasks().size(), 2u);
  EXPECT_EQ(model->tasks()[0].label_name, "clk");
  EXPECT_EQ(model->tasks()[1].label_name, "buy");
  auto batch = batch_of(5);
  model->eval();
  auto pred = model->predict(batch);
  torch::Tensor all = model->embedding_group()->forward(batch).at("all");  // [5, 5]
  EXPECT_TRUE(torch::allclose(pred.at("logits_a"), linear(*model, "task_outputs.0", all).squeeze(1), 1e-5, 1e-6));
  torch::Tensor rel = child<nn::MLPImpl>(*model, "relation_mlps.b")->forward(torch::cat({all, all}, 1));
  EXPECT_TRUE(torch::allclose(pred.at("y_b"), linear(*model, "task_outputs.1", rel).squeeze(1), 1e-5, 1e-6));
}

// mask_net runs first (as TorchEasyRec's DBMTL): bottom_mlp reads the MaskNetModule's output.
TEST(DBMTLModel, MaskNetRunsBeforeTheBottomMlp) {
  for (const char* top : {"top_mlp { hidden_units: [5] }", ""}) {
    const bool has_top = *top != '\0';
    auto model = make(config_text(std::string("mask_net { n_mask_blocks: 2 mask_block { hidden_dim: 3 } ") + top +
                                  " } bottom_mlp { hidden_units: [8] } " + kTowers));
    model->eval();
    auto batch = batch_of(6);
    auto pred = model->predict(batch);
    torch::Tensor all = model->embedding_group()->forward(batch).at("all");
    auto mask_net = child<nn::MaskNetModuleImpl>(*model, "mask_net");
    torch::Tensor masked = mask_net->forward(all);
    EXPECT_EQ(masked.size(1), has_top ? 5 : 2 * 3) << top;  // top_mlp, or 2 blocks × hidden_dim
    torch::Tensor bottom = child<nn::MLPImpl>(*model, "bottom_mlp")->forward(masked);
    torch::Tensor ctr = child<nn::MLPImpl>(*model, "task_mlps.ctr")->forward(bottom);
    torch::Tensor cvr = child<nn::MLPImpl>(*model, "task_mlps.cvr")->forward(bottom);
    torch::Tensor cvr_rel = child<nn::MLPImpl>(*model, "relation_mlps.cvr")->forward(torch::cat({cvr, ctr}, 1));
    EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), linear(*model, "task_outputs.0", ctr).squeeze(1), 1e-5, 1e-6));
    EXPECT_TRUE(
        torch::allclose(pred.at("logits_cvr"), linear(*model, "task_outputs.1", cvr_rel).squeeze(1), 1e-5, 1e-6));
    std::vector<std::string> names = testing::keys_of(model->dense_parameters());
    ASSERT_GE(names.size(), 3u);
    EXPECT_EQ(names[0], "mask_net.ln_emb.weight");
    EXPECT_EQ(names[2], "mask_net.mask_blocks.0.mask_generator.0.weight");
    for (const char* want : {"mask_net.mask_blocks.1.ffn.1.bias", "bottom_mlp.mlp.0.perceptron.0.weight"}) {
      EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    }
    EXPECT_EQ(has_top, std::find(names.begin(), names.end(), "mask_net.top_mlp.mlp.0.perceptron.0.weight") !=
                             names.end());
    // Training reaches the mask net.
    model->train();
    model->total_loss(model->loss(model->predict(batch), batch)).backward();
    for (const auto& [name, p] : model->dense_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  }
}

TEST(DBMTLModel, ConfigErrors) {
  EXPECT_NE(error_of([&] {
              make(config_text(R"(
                task_towers { tower_name: "a" relation_mlp { hidden_units: [2] } relation_tower_names: "b"
                              losses { binary_cross_entropy {} } }
                task_towers { tower_name: "b" losses { binary_cross_entropy {} } })"));
            }).find("model_config.dbmtl.task_towers[0].relation_tower_names[0]: 'b' is not a tower before this one"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { make(config_text(std::string("mask_net { n_mask_blocks: 0 mask_block { hidden_dim: 2 } } ") +
                                             kTowers)); }),
            "model_config.dbmtl.mask_net.n_mask_blocks: must be >= 1, got 0");
  // Three towers, two label fields: the third has no label to default to.
  EXPECT_NE(error_of([&] {
              make(config_text(std::string(kTowers) +
                               R"( task_towers { tower_name: "c" losses { binary_cross_entropy {} } })"));
            }).find("model_config.dbmtl.task_towers[2].label_name: required"),
            std::string::npos);
}

}  // namespace dbmtl_test
}  // namespace tzrec::models
