// MMoE model (multi-task): tower predictions, losses and metrics with the tower suffix, tower loss
// weighting against hand computation, the Pareto loss weighting against the solver fed with
// gradients computed here, and config errors.
#include "models/multi_task/mmoe.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "loss/binary_cross_entropy.h"
#include "loss/pareto_loss_weights.h"
#include "models/testing.h"

namespace tzrec::models {
namespace mmoe_test {

using testing::make_kjt;
using testing::child;
using testing::error_of;
using testing::parse_config;

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("i", 5, 2)};
}

// Towers ctr (label clk) and cvr (label buy); `ctr_extra` / `cvr_extra` go inside the towers.
std::string config_text(const std::string& ctr_extra, const std::string& cvr_extra, const std::string& model_extra = "",
                        const std::string& data = R"(label_fields: ["clk", "buy"])") {
  return "data_config { " + data + R"( }
    model_config {
      feature_groups { group_name: "all" feature_names: ["u", "i"] }
      mmoe {
        expert_mlp { hidden_units: [6, 4] }
        num_expert: 3
        task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [3] }
                      losses { binary_cross_entropy {} } )" +
         ctr_extra + R"( }
        task_towers { tower_name: "cvr" label_name: "buy" )" + cvr_extra + R"( }
      }
      )" + model_extra + "\n}";
}

const char* kCvrBce = "losses { binary_cross_entropy {} }";

std::shared_ptr<Model> make(const std::string& text) { return create_model(parse_config(text), features()); }

sparse::Batch batch_of(const std::vector<float>& clk, const std::vector<float>& buy) {
  sparse::Batch batch;
  batch.batch_size = static_cast<int64_t>(clk.size());
  batch.labels["clk"] = torch::tensor(clk);
  batch.labels["buy"] = torch::tensor(buy);
  std::vector<std::vector<int64_t>> u, i;
  for (size_t r = 0; r < clk.size(); ++r) {
    u.push_back({static_cast<int64_t>(r % 6)});
    i.push_back({static_cast<int64_t>((r * 3) % 5), static_cast<int64_t>(r % 5)});
  }
  batch.sparse_features = make_kjt({"u", "i"}, {u, i});
  return batch;
}

TEST(MMoEModel, PredictionsPerTowerFollowTheModules) {
  auto model = make(config_text("", "losses { l2_loss {} }"));
  auto batch = batch_of({1, 0, 0, 1, 1}, {0.5, 0, 0, 2, 1});
  model->eval();
  auto pred = model->predict(batch);
  EXPECT_EQ(testing::keys_of(std::vector<std::pair<std::string, torch::Tensor>>(pred.begin(), pred.end())),
            (std::vector<std::string>{"logits_ctr", "probs_ctr", "y_cvr"}));
  EXPECT_TRUE(torch::allclose(pred.at("probs_ctr"), torch::sigmoid(pred.at("logits_ctr"))));
  // The same forward through the submodules: first group → mmoe → _task_tower.<t>.
  torch::Tensor all = model->embedding_group()->forward(batch).at("all");
  auto mmoe = child<nn::MMoEImpl>(*model, "mmoe");
  auto ctr = child<nn::TaskTowerImpl>(*model, "_task_tower.0");
  auto cvr = child<nn::TaskTowerImpl>(*model, "_task_tower.1");
  ASSERT_TRUE(mmoe && ctr && cvr);
  auto inputs = mmoe->forward(all);
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), ctr->forward(inputs[0]).squeeze(1)));
  EXPECT_TRUE(torch::allclose(pred.at("y_cvr"), cvr->forward(inputs[1]).squeeze(1)));

  std::vector<std::string> names = testing::keys_of(model->dense_parameters());
  for (const char* want : {"mmoe.expert_mlps.2.mlp.1.perceptron.0.weight", "mmoe.gate_finals.1.bias",
                           "_task_tower.0.tower_mlp.mlp.0.perceptron.0.weight", "_task_tower.1.linear.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
}

TEST(MMoEModel, LossesAndMetricsCarryTheTowerSuffix) {
  auto model = make(config_text("metrics { auc {} } train_metrics { auc {} }", std::string(kCvrBce) +
                                                                               " metrics { auc {} }"));
  auto batch = batch_of({1, 0, 0, 1, 1, 0}, {1, 0, 0, 0, 1, 0});
  auto pred = model->predict(batch);
  auto losses = model->loss(pred, batch);
  ASSERT_EQ(losses.size(), 2u);
  loss::BinaryCrossEntropy bce;
  EXPECT_NEAR(losses.at("binary_cross_entropy_ctr").item<double>(),
              bce(pred.at("logits_ctr"), batch.labels.at("clk")).item<double>(), 1e-7);
  EXPECT_NEAR(losses.at("binary_cross_entropy_cvr").item<double>(),
              bce(pred.at("logits_cvr"), batch.labels.at("buy")).item<double>(), 1e-7);
  // Without Pareto weighting the total is the plain sum.
  EXPECT_NEAR(model->total_loss(losses).item<double>(),
              (losses.at("binary_cross_entropy_ctr") + losses.at("binary_cross_entropy_cvr")).item<double>(), 1e-7);
  EXPECT_TRUE(model->loss_weights().empty());
  model->update_metrics(pred, batch, losses);
  auto metrics = model->compute_metrics();
  std::vector<std::string> keys;
  for (const auto& [k, v] : metrics) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"auc_ctr", "auc_cvr", "binary_cross_entropy_ctr",
                                            "binary_cross_entropy_cvr"}));
  model->update_train_metrics(pred, batch);
  EXPECT_EQ(model->compute_train_metrics().count("auc_ctr"), 1u);
}

TEST(MMoEModel, TowerWeightSampleWeightAndTaskSpaceHandComputed) {
  // ctr: weight 2 only → 2 × mean BCE. cvr: sample weight w × (in 1.0 / out 0.25 by clk > 0),
  // normalised by the batch mean, × weight 0.5.
  auto model = make(config_text("weight: 2.0",
                                std::string(kCvrBce) +
                                    R"( weight: 0.5 sample_weight_name: "w" task_space_indicator_label: "clk"
                                        in_task_space_weight: 1.0 out_task_space_weight: 0.25)",
                                "", R"(label_fields: ["clk", "buy"] sample_weight_fields: "w")"));
  auto batch = batch_of({1, 0, 0, 1}, {1, 0, 1, 0});
  batch.sample_weights["w"] = torch::tensor({1.0f, 2.0f, 4.0f, 1.0f});
  auto pred = model->predict(batch);
  auto losses = model->loss(pred, batch);
  auto bce_rows = [&](const std::string& logits, const std::string& label) {
    auto x = pred.at(logits).to(torch::kFloat64);
    auto y = batch.labels.at(label).to(torch::kFloat64);
    return torch::clamp_min(x, 0) - x * y + torch::log1p(torch::exp(-x.abs()));  // [B]
  };
  EXPECT_NEAR(losses.at("binary_cross_entropy_ctr").item<double>(),
              2.0 * bce_rows("logits_ctr", "clk").mean().item<double>(), 1e-6);
  auto w = torch::tensor({1.0 * 1.0, 2.0 * 0.25, 4.0 * 0.25, 1.0 * 1.0}, torch::kFloat64);
  EXPECT_NEAR(losses.at("binary_cross_entropy_cvr").item<double>(),
              0.5 * (bce_rows("logits_cvr", "buy") * w / w.mean()).mean().item<double>(), 1e-6);

  batch.sample_weights.clear();
  EXPECT_NE(error_of([&] { model->loss(pred, batch); }).find("no sample weight 'w'"), std::string::npos);
}

TEST(MMoEModel, ParetoWeightsComeFromTheTaskGradientsAndLeaveTablesAlone) {
  auto model = make(config_text("pareto_min_loss_weight: 0.1", std::string(kCvrBce) + " pareto_min_loss_weight: 0.2",
                                "use_pareto_loss_weight: true"));
  auto batch = batch_of({1, 0, 0, 1, 1, 0, 1}, {1, 0, 0, 0, 1, 0, 0});
  auto pred = model->predict(batch);
  auto losses = model->loss(pred, batch);
  // The reference: each task loss's gradient over the trainable dense parameters, flattened.
  std::vector<torch::Tensor> params;
  for (auto& [name, p] : model->dense_parameters()) params.push_back(p);
  std::vector<torch::Tensor> flat;
  for (const char* name : {"binary_cross_entropy_ctr", "binary_cross_entropy_cvr"}) {
    auto grads = torch::autograd::grad({losses.at(name)}, params, {}, true, false, true);
    std::vector<torch::Tensor> parts;
    for (size_t k = 0; k < params.size(); ++k) {
      parts.push_back(grads[k].defined() ? grads[k].reshape({-1}) : torch::zeros({params[k].numel()}));
    }
    flat.push_back(torch::cat(parts).to(torch::kFloat64));
  }
  torch::Tensor g = torch::stack(flat);
  auto want = loss::pareto_loss_weights(g.matmul(g.t()), {0.1, 0.2});

  torch::Tensor total = model->total_loss(losses);
  const auto& weights = model->loss_weights();
  ASSERT_EQ(weights.size(), 2u);
  EXPECT_NEAR(weights.at("binary_cross_entropy_ctr"), want[0], 1e-6);
  EXPECT_NEAR(weights.at("binary_cross_entropy_cvr"), want[1], 1e-6);
  EXPECT_NEAR(want[0] + want[1], 1.0, 1e-9);
  EXPECT_GE(want[0], 0.1 - 1e-12);
  EXPECT_GE(want[1], 0.2 - 1e-12);
  EXPECT_NEAR(total.item<double>(),
              want[0] * losses.at("binary_cross_entropy_ctr").item<double>() +
                  want[1] * losses.at("binary_cross_entropy_cvr").item<double>(),
              1e-6);
  // The weighting ran backward passes over the dense part only: no parameter has a gradient yet,
  // and no embedding table was touched.
  for (auto& p : params) EXPECT_FALSE(p.grad().defined());
  for (auto& table : model->embedding_tables()) EXPECT_FALSE(table.weight.grad().defined()) << table.name;
  // The weighted total trains as usual.
  total.backward();
  for (auto& p : params) EXPECT_TRUE(p.grad().defined());
}

TEST(MMoEModel, ConfigErrorsNameTheField) {
  auto err = [&](const std::string& text) { return error_of([&] { make(text); }); };
  auto edited_tower = [&](const std::function<void(protos::TaskTower*)>& edit) {
    auto config = parse_config(config_text("", kCvrBce));
    edit(config.mutable_model_config()->mutable_mmoe()->mutable_task_towers(1));
    return error_of([&] { create_model(config, features()); });
  };
  EXPECT_NE(edited_tower([](protos::TaskTower* t) { t->set_label_name("pay"); })
                .find("model_config.mmoe.task_towers[1].label_name: 'pay' is not one of data_config.label_fields"),
            std::string::npos);
  EXPECT_NE(edited_tower([](protos::TaskTower* t) { t->set_tower_name("ctr"); })
                .find("model_config.mmoe.task_towers[1].tower_name: 'ctr' is used by another tower"),
            std::string::npos);
  EXPECT_NE(err(config_text("", "")).find("model_config.mmoe.task_towers[1].losses: at least one loss"),
            std::string::npos);
  EXPECT_NE(err(config_text("", std::string(kCvrBce) + " num_class: 2"))
                .find("model_config.mmoe.task_towers[1].num_class: must be 1 with loss binary_cross_entropy"),
            std::string::npos);
  EXPECT_NE(err(config_text("pareto_min_loss_weight: 0.6", std::string(kCvrBce) + " pareto_min_loss_weight: 0.4",
                            "use_pareto_loss_weight: true"))
                .find("must sum to less than 1"),
            std::string::npos);
  EXPECT_NE(err(config_text("", std::string(kCvrBce) + " metrics { mean_squared_error {} }"))
                .find("model_config.mmoe.task_towers[1].metrics[0].mean_squared_error: needs the regression "
                      "prediction 'y'"),
            std::string::npos);
  EXPECT_NE(err(config_text("", std::string(kCvrBce) + R"( sample_weight_name: "w")"))
                .find("sample_weight_name: 'w' is not one of data_config.sample_weight_fields"),
            std::string::npos);
  // Pareto weighting needs several tasks.
  EXPECT_NE(error_of([&] {
              create_model(parse_config(testing::tiny_multi_tower_config(
                               "losses { binary_cross_entropy {} } use_pareto_loss_weight: true")),
                           {testing::sparse_feature("u", 6, 3)});
            }).find("model_config.use_pareto_loss_weight: weights the losses of several tasks"),
            std::string::npos);
}

}  // namespace mmoe_test
}  // namespace tzrec::models
