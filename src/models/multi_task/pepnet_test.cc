// PEPNet (its modules GateNU, EPNet and PPNet: nn/personalized_net_test.cc): the model end to end
// (without and with the domain / uia groups, one tower per domain with domain_input_name and the
// per-row domain selection before losses and metrics, against hand computation), state-dict
// names, and config errors.
#include "models/multi_task/pepnet.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/features.h"
#include "models/testing.h"
#include "nn/personalized_net.h"
#include "nn/testing.h"

namespace tzrec::models {
namespace pepnet_test {

using testing::child;
using testing::error_of;
using testing::HasProblem;
using testing::make_kjt;
using testing::parse_config;

// ---------------------------------------------------------------------------------------------
// The model.

// Features: u (6 rows, dim 3), i (5 rows, dim 2), d (the domain id, 2 rows, dim 2), q (4 rows,
// dim 2); labels clk, buy and the domain label column "scene".
const char kFeatures[] = R"(
  feature_configs { id_feature { feature_name: "u" num_buckets: 6 embedding_dim: 3 } }
  feature_configs { id_feature { feature_name: "i" num_buckets: 5 embedding_dim: 2 } }
  feature_configs { id_feature { feature_name: "d" num_buckets: 2 embedding_dim: 2 } }
  feature_configs { id_feature { feature_name: "q" num_buckets: 4 embedding_dim: 2 } })";

const char kAllGroup[] = R"(feature_groups { group_name: "all" feature_names: ["u", "i"] })";
const char kDomainGroup[] = R"(feature_groups { group_name: "domain" feature_names: ["d"] })";
const char kUiaGroup[] = R"(feature_groups { group_name: "uia" feature_names: ["q"] })";

const char kTowers[] = R"(
  task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [4] } losses { binary_cross_entropy {} }
                metrics { auc {} } train_metrics { auc {} } }
  task_towers { tower_name: "cvr" label_name: "buy" losses { binary_cross_entropy {} } metrics { auc {} } })";

// `groups`: feature_groups entries; `pepnet`: the body of pepnet {}.
protos::EasyRecConfig config_of(const std::string& groups, const std::string& pepnet,
                                const std::string& labels = R"(["clk", "buy", "scene"])") {
  return parse_config(std::string("data_config { label_fields: ") + labels + " }" + kFeatures +
                      " model_config { " + groups + " pepnet { " + pepnet + " } }");
}

std::shared_ptr<Model> make(const protos::EasyRecConfig& config) {
  return create_model(config, feature::build_feature_infos(config));
}

// Rows r = 0..n-1: u {r % 6}, i {(3r) % 5, r % 5}, d {scene}, q {r % 4}; clk r % 2, buy (r % 3 == 0),
// scene r % 2 unless given.
sparse::Batch batch_of(int64_t n, std::vector<float> scene = {}) {
  if (scene.empty()) {
    for (int64_t r = 0; r < n; ++r) scene.push_back(static_cast<float>(r % 2));
  }
  sparse::Batch batch;
  batch.batch_size = n;
  std::vector<float> clk, buy;
  std::vector<std::vector<int64_t>> u, i, d, q;
  for (int64_t r = 0; r < n; ++r) {
    clk.push_back(static_cast<float>(r % 2));
    buy.push_back(static_cast<float>(r % 3 == 0));
    u.push_back({r % 6});
    i.push_back({(r * 3) % 5, r % 5});
    d.push_back({std::clamp<int64_t>(static_cast<int64_t>(scene[static_cast<size_t>(r)]), 0, 1)});
    q.push_back({r % 4});
  }
  batch.labels["clk"] = torch::tensor(clk);
  batch.labels["buy"] = torch::tensor(buy);
  batch.labels["scene"] = torch::tensor(scene);
  batch.sparse_features = make_kjt({"u", "i", "d", "q"}, {u, i, d, q});
  return batch;
}

std::vector<std::string> keys(const TensorMap& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

// Mean binary cross entropy with logits, written out.
double bce(const torch::Tensor& logits, const torch::Tensor& labels) {
  auto x = logits.detach().to(torch::kFloat64);
  auto y = labels.to(torch::kFloat64);
  return (torch::clamp_min(x, 0) - x * y + torch::log1p(torch::exp(-x.abs()))).mean().item<double>();
}

TEST(PEPNetModel, AllGroupOnlyFeedsTheTowersDirectly) {
  torch::manual_seed(0);
  auto model = make(config_of(kAllGroup, kTowers));
  model->eval();
  auto batch = batch_of(6);
  auto pred = model->predict(batch);
  EXPECT_EQ(keys(pred), (std::vector<std::string>{"logits_ctr", "logits_cvr", "probs_ctr", "probs_cvr"}));
  torch::Tensor all = model->embedding_group()->forward(batch).at("all");  // [6, 5]
  EXPECT_EQ(all.size(1), 5);
  auto ctr = child<nn::TaskTowerImpl>(*model, "_task_tower.0");
  auto cvr = child<nn::TaskTowerImpl>(*model, "_task_tower.1");
  ASSERT_TRUE(ctr && cvr);
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), ctr->forward(all).squeeze(1)));
  EXPECT_TRUE(torch::allclose(pred.at("logits_cvr"), cvr->forward(all).squeeze(1)));
  EXPECT_EQ(testing::keys_of(model->dense_parameters()),
            (std::vector<std::string>{"_task_tower.0.tower_mlp.mlp.0.perceptron.0.weight",
                                      "_task_tower.0.tower_mlp.mlp.0.perceptron.0.bias", "_task_tower.0.linear.weight",
                                      "_task_tower.0.linear.bias", "_task_tower.1.linear.weight",
                                      "_task_tower.1.linear.bias"}));
  // Losses and metrics as any multi-task model: no domain selection without domain_input_name.
  auto losses = model->loss(pred, batch);
  EXPECT_EQ(keys(losses), (std::vector<std::string>{"binary_cross_entropy_ctr", "binary_cross_entropy_cvr"}));
  EXPECT_NEAR(losses.at("binary_cross_entropy_ctr").item<double>(), bce(pred.at("logits_ctr"), batch.labels.at("clk")),
              1e-6);
}

TEST(PEPNetModel, DomainGroupScalesTheEmbeddingsThroughEPNet) {
  torch::manual_seed(0);
  for (const char* hidden : {"", "epnet_hidden_unit: 3 epnet_gamma: 1.5"}) {
    auto model = make(config_of(std::string(kAllGroup) + kDomainGroup, hidden + std::string(kTowers)));
    model->eval();
    auto batch = batch_of(6);
    auto pred = model->predict(batch);
    auto grouped = model->embedding_group()->forward(batch);
    auto epnet = child<nn::EPNetImpl>(*model, "epnet");
    ASSERT_TRUE(epnet);
    // epnet_hidden_unit defaults to the width of group all (5); the gate reads [domain 2 | all 5].
    EXPECT_EQ(epnet->named_parameters()["gate_nu.dense_layers.0.weight"].sizes(),
              (std::vector<int64_t>{*hidden ? 3 : 5, 7}))
        << hidden;
    torch::Tensor scaled = epnet->forward(grouped.at("all"), grouped.at("domain"));
    EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"),
                                child<nn::TaskTowerImpl>(*model, "_task_tower.0")->forward(scaled).squeeze(1)));
    EXPECT_TRUE(torch::allclose(pred.at("logits_cvr"),
                                child<nn::TaskTowerImpl>(*model, "_task_tower.1")->forward(scaled).squeeze(1)));
    // gamma 1.5: the gate (scaled / all) lies in (0, 1.5).
    if (*hidden) {
      torch::Tensor gate = scaled / grouped.at("all");
      EXPECT_LT(gate.masked_select(grouped.at("all") != 0).max().item<double>(), 1.5);
    }
  }
}

// The full model: EPNet → PPNet (one gated MLP per task) → towers, task_domain_num 2.
std::string full_pepnet(const std::string& extra = "") {
  return R"(domain_input_name: "scene" task_domain_num: 2 ppnet_hidden_units: [6] ppnet_dropout_ratio: [0.1] )" +
         extra + kTowers;
}

TEST(PEPNetModel, StateDictNamesAreTorchEasyRecs) {
  torch::manual_seed(0);
  auto model = make(config_of(std::string(kAllGroup) + kDomainGroup + kUiaGroup, full_pepnet()));
  // PEPNet's module tree in TorchEasyRec: epnet, ppnet, then _task_tower with tower t · 2 + d.
  EXPECT_EQ(testing::keys_of(model->dense_parameters()),
            (std::vector<std::string>{
                "epnet.gate_nu.dense_layers.0.weight", "epnet.gate_nu.dense_layers.0.bias",
                "epnet.gate_nu.dense_layers.2.weight", "epnet.gate_nu.dense_layers.2.bias",
                "ppnet.linears.0.weight", "ppnet.linears.0.bias", "ppnet.linears.1.weight", "ppnet.linears.1.bias",
                "ppnet.gate_nus.0.dense_layers.0.weight", "ppnet.gate_nus.0.dense_layers.0.bias",
                "ppnet.gate_nus.0.dense_layers.2.weight", "ppnet.gate_nus.0.dense_layers.2.bias",
                "ppnet.gate_nus.1.dense_layers.0.weight", "ppnet.gate_nus.1.dense_layers.0.bias",
                "ppnet.gate_nus.1.dense_layers.2.weight", "ppnet.gate_nus.1.dense_layers.2.bias",
                "_task_tower.0.tower_mlp.mlp.0.perceptron.0.weight", "_task_tower.0.tower_mlp.mlp.0.perceptron.0.bias",
                "_task_tower.0.linear.weight", "_task_tower.0.linear.bias",
                "_task_tower.1.tower_mlp.mlp.0.perceptron.0.weight", "_task_tower.1.tower_mlp.mlp.0.perceptron.0.bias",
                "_task_tower.1.linear.weight", "_task_tower.1.linear.bias", "_task_tower.2.linear.weight",
                "_task_tower.2.linear.bias", "_task_tower.3.linear.weight", "_task_tower.3.linear.bias"}));
  auto dense = testing::dense_of(*model);
  EXPECT_EQ(dense["ppnet.linears.1.weight"].sizes(), (std::vector<int64_t>{6, 5}));                    // all 5 → 6
  EXPECT_EQ(dense["ppnet.gate_nus.1.dense_layers.0.weight"].sizes(), (std::vector<int64_t>{6, 7}));   // [uia 2 | all 5]
  EXPECT_EQ(dense["_task_tower.3.linear.weight"].sizes(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(model->embedding_tables().size(), 4u);
}

TEST(PEPNetModel, OneTowerPerDomainAndTheLossReadsEachRowsDomain) {
  torch::manual_seed(0);
  auto config = config_of(std::string(kAllGroup) + kDomainGroup + kUiaGroup, full_pepnet());
  auto model = make(config);
  model->eval();
  auto batch = batch_of(7);
  auto pred = model->predict(batch);
  EXPECT_EQ(keys(pred), (std::vector<std::string>{"logits_ctr_0", "logits_ctr_1", "logits_cvr_0", "logits_cvr_1",
                                                  "probs_ctr_0", "probs_ctr_1", "probs_cvr_0", "probs_cvr_1"}));
  // The same forward through the submodules: all → epnet(·, domain) → ppnet(·, uia) → task t reads
  // ppnet output t in towers t · 2 + d.
  auto grouped = model->embedding_group()->forward(batch);
  torch::Tensor scaled = child<nn::EPNetImpl>(*model, "epnet")->forward(grouped.at("all"), grouped.at("domain"));
  auto inputs = child<nn::PPNetImpl>(*model, "ppnet")->forward(scaled, grouped.at("uia"));
  ASSERT_EQ(inputs.size(), 2u);
  for (int t = 0; t < 2; ++t) {
    for (int d = 0; d < 2; ++d) {
      auto tower = child<nn::TaskTowerImpl>(*model, "_task_tower." + std::to_string(t * 2 + d));
      const std::string name = std::string("logits_") + (t == 0 ? "ctr" : "cvr") + "_" + std::to_string(d);
      EXPECT_TRUE(torch::allclose(pred.at(name), tower->forward(inputs[t]).squeeze(1), 1e-5, 1e-6)) << name;
    }
  }

  // Losses: row b reads its domain scene[b]'s logit (scene = b % 2).
  auto losses = model->loss(pred, batch);
  EXPECT_EQ(keys(losses), (std::vector<std::string>{"binary_cross_entropy_ctr", "binary_cross_entropy_cvr"}));
  for (const char* tower : {"ctr", "cvr"}) {
    std::vector<float> picked;
    for (int64_t b = 0; b < 7; ++b) {
      picked.push_back(pred.at(std::string("logits_") + tower + "_" + std::to_string(b % 2))[b].item<float>());
    }
    EXPECT_NEAR(losses.at(std::string("binary_cross_entropy_") + tower).item<double>(),
                bce(torch::tensor(picked), batch.labels.at(tower == std::string("ctr") ? "clk" : "buy")), 1e-6)
        << tower;
  }
  // Eval and train metrics read the selected predictions under the tower's own suffix.
  model->update_metrics(pred, batch, losses);
  std::vector<std::string> metric_names;
  for (const auto& [k, v] : model->compute_metrics()) metric_names.push_back(k);
  EXPECT_EQ(metric_names, (std::vector<std::string>{"auc_ctr", "auc_cvr", "binary_cross_entropy_ctr",
                                                    "binary_cross_entropy_cvr"}));
  model->update_train_metrics(pred, batch);
  EXPECT_EQ(model->compute_train_metrics().count("auc_ctr"), 1u);

  // Another domain per row changes which tower the loss reads.
  auto flipped = batch_of(7, {1, 1, 1, 1, 0, 0, 0});
  auto pred2 = model->predict(flipped);
  std::vector<float> picked;
  for (int64_t b = 0; b < 7; ++b) {
    picked.push_back(pred2.at(std::string("logits_ctr_") + (b < 4 ? "1" : "0"))[b].item<float>());
  }
  EXPECT_NEAR(model->loss(pred2, flipped).at("binary_cross_entropy_ctr").item<double>(),
              bce(torch::tensor(picked), flipped.labels.at("clk")), 1e-6);
}

TEST(PEPNetModel, TrainingReachesEveryParameter) {
  torch::manual_seed(3);
  auto model = make(config_of(std::string(kAllGroup) + kDomainGroup + kUiaGroup, full_pepnet()));
  model->train();
  auto batch = batch_of(16);
  auto losses = model->loss(model->predict(batch), batch);
  model->total_loss(losses).backward();
  // Every domain tower is read by some row (scene alternates), so every parameter gets a gradient.
  testing::expect_gradients_everywhere(*model);
}

TEST(PEPNetModel, DomainSelectionSortsDomainsNumericallyAndKeepsClassDims) {
  // As TorchEasyRec's test_select_domain_task_output: 12 domains, "_10" and "_11" after "_9".
  torch::manual_seed(0);
  auto config = config_of(kAllGroup, R"(domain_input_name: "scene" task_domain_num: 12 )" + std::string(kTowers));
  auto model = make(config);
  auto* pepnet = dynamic_cast<PEPNet*>(model.get());
  ASSERT_NE(pepnet, nullptr);
  TensorMap pred;
  for (const char* tower : {"ctr", "cvr"}) {
    for (int d = 0; d < 12; ++d) {
      torch::Tensor v = torch::full({4}, static_cast<float>(d));
      pred[fmt::format("logits_{}_{}", tower, d)] = v;
      pred[fmt::format("probs_{}_{}", tower, d)] = torch::sigmoid(v);
    }
  }
  auto batch = batch_of(4, {0, 3, 11, 10});
  auto selected = pepnet->task_predictions(pred, batch);
  EXPECT_EQ(keys(selected), (std::vector<std::string>{"logits_ctr", "logits_cvr", "probs_ctr", "probs_cvr"}));
  torch::Tensor want = torch::tensor({0.0f, 3.0f, 11.0f, 10.0f});
  EXPECT_TRUE(torch::equal(selected.at("logits_cvr"), want));
  EXPECT_TRUE(torch::allclose(selected.at("probs_ctr"), torch::sigmoid(want)));

  // num_class 2 (softmax): [B, D, 2] → row b's [2].
  auto softmax = make(config_of(kAllGroup, R"(domain_input_name: "scene" task_domain_num: 2
    task_towers { tower_name: "ctr" label_name: "clk" num_class: 2 losses { softmax_cross_entropy {} }
                  metrics { auc {} } })"));
  auto sbatch = batch_of(5, {1, 0, 0, 1, 1});
  auto spred = softmax->predict(sbatch);
  EXPECT_EQ(keys(spred), (std::vector<std::string>{"logits_ctr_0", "logits_ctr_1", "probs1_ctr_0", "probs1_ctr_1",
                                                   "probs_ctr_0", "probs_ctr_1"}));
  auto ssel = dynamic_cast<PEPNet*>(softmax.get())->task_predictions(spred, sbatch);
  for (int64_t b = 0; b < 5; ++b) {
    const int64_t d = static_cast<int64_t>(sbatch.labels.at("scene")[b].item<float>());
    EXPECT_TRUE(torch::equal(ssel.at("logits_ctr")[b], spred.at("logits_ctr_" + std::to_string(d))[b]));
    EXPECT_EQ(ssel.at("probs1_ctr")[b].item<float>(), spred.at("probs1_ctr_" + std::to_string(d))[b].item<float>());
  }
  auto slosses = softmax->loss(spred, sbatch);
  torch::Tensor logp = torch::log_softmax(ssel.at("logits_ctr").detach().to(torch::kFloat64), 1);  // [5, 2]
  torch::Tensor y = sbatch.labels.at("clk").to(torch::kInt64);
  EXPECT_NEAR(slosses.at("softmax_cross_entropy_ctr").item<double>(),
              -logp.gather(1, y.unsqueeze(1)).mean().item<double>(), 1e-6);
  softmax->update_metrics(spred, sbatch, slosses);
  EXPECT_EQ(softmax->compute_metrics().count("auc_ctr"), 1u);
}

TEST(PEPNetModel, BadDomainIdsAreDataErrorsNamingTheColumn) {
  torch::manual_seed(0);
  auto model = make(config_of(kAllGroup, R"(domain_input_name: "scene" task_domain_num: 2 )" + std::string(kTowers)));
  auto check = [&](const std::vector<float>& scene, const std::string& value) {
    auto batch = batch_of(4, scene);
    auto pred = model->predict(batch);
    bool data_error = false;
    std::string message;
    try {
      model->loss(pred, batch);
    } catch (const DataError& e) {
      data_error = true;
      message = e.what();
    }
    EXPECT_TRUE(data_error) << value;
    EXPECT_NE(message.find("label column 'scene' (model_config.pepnet.domain_input_name) holds " + value),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("domain ids must be integers in [0, 2)"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(error_of([&] { model->update_metrics(pred, batch, {}); }).find("label column 'scene'"),
              std::string::npos);
    EXPECT_NE(error_of([&] { model->update_train_metrics(pred, batch); }).find("label column 'scene'"),
              std::string::npos);
  };
  check({0, 1, 2, 0}, "2 in row 2");
  check({0, -1, 1, 0}, "-1 in row 1");
  check({0, 1, 1, 0.5}, "0.5 in row 3");
  auto batch = batch_of(4);
  auto pred = model->predict(batch);
  batch.labels.erase("scene");
  EXPECT_NE(error_of([&] { model->loss(pred, batch); }).find("batch has no label 'scene'"), std::string::npos);
}

TEST(PEPNetModel, ConfigErrorsNameTheField) {
  const std::string groups = std::string(kAllGroup) + kDomainGroup + kUiaGroup;
  EXPECT_TRUE(HasProblem(config_of(kDomainGroup, kTowers), "model_config.feature_groups",
                         "PEPNet needs a feature group named 'all' (group_type: DEEP)"));
  EXPECT_TRUE(HasProblem(config_of(std::string(kAllGroup) + R"(feature_groups { group_name: "uia" feature_names: ["q"]
                                                                                 group_type: WIDE })",
                                   std::string("ppnet_hidden_units: [4] ") + kTowers),
                         "model_config.feature_groups[1].group_type", "PEPNet group 'uia' must be DEEP"));
  EXPECT_TRUE(HasProblem(config_of(groups, R"(domain_input_name: "scene" task_domain_num: 0 ppnet_hidden_units: [4])" +
                                               std::string(kTowers)),
                         "model_config.pepnet.task_domain_num", "must be >= 1 with domain_input_name"));
  EXPECT_TRUE(HasProblem(config_of(groups, full_pepnet(), R"(["clk", "buy"])"), "model_config.pepnet.domain_input_name",
                         "'scene' is not one of data_config.label_fields"));
  EXPECT_TRUE(HasProblem(config_of(groups, kTowers), "model_config.pepnet.ppnet_hidden_units", "must not be empty"));
  EXPECT_TRUE(HasProblem(config_of(groups, full_pepnet("ppnet_hidden_units: [0]")),
                         "model_config.pepnet.ppnet_hidden_units[1]", "must be > 0"));
  EXPECT_TRUE(HasProblem(config_of(groups, std::string("ppnet_hidden_units: [4, 3] ppnet_dropout_ratio: [0.1, 0.1, "
                                                       "0.1] ") +
                                               kTowers),
                         "model_config.pepnet.ppnet_dropout_ratio", "has 3 values; give 0, 1 or one per"));
  EXPECT_TRUE(
      HasProblem(config_of(groups, std::string("ppnet_hidden_units: [4] ppnet_dropout_ratio: [1.5] ") + kTowers),
                 "model_config.pepnet.ppnet_dropout_ratio[0]", "must be in [0, 1]"));
  EXPECT_TRUE(
      HasProblem(config_of(groups, std::string("ppnet_hidden_units: [4] ppnet_activation: 'nn.Nope' ") + kTowers),
                 "model_config.pepnet.ppnet_activation", "nn.Nope"));
  EXPECT_TRUE(HasProblem(config_of(groups, std::string("ppnet_hidden_units: [4] ppnet_activation: '' ") + kTowers),
                         "model_config.pepnet.ppnet_activation", "must name an activation"));
  EXPECT_TRUE(HasProblem(config_of(groups, std::string("epnet_hidden_unit: 0 ppnet_hidden_units: [4] ") + kTowers),
                         "model_config.pepnet.epnet_hidden_unit", "must be > 0"));
  EXPECT_TRUE(HasProblem(config_of(kAllGroup, ""), "model_config.pepnet.task_towers",
                         "a multi-task model needs at least one task tower"));
  EXPECT_TRUE(HasProblem(config_of(kAllGroup, R"(task_towers { tower_name: "ctr" label_name: "pay"
                                                   losses { binary_cross_entropy {} } })"),
                         "model_config.pepnet.task_towers[0].label_name", "'pay' is not one of"));
  EXPECT_TRUE(HasProblem(config_of(kAllGroup, R"(task_towers { tower_name: "ctr" label_name: "clk"
                                                   mlp { hidden_units: [0] } losses { binary_cross_entropy {} } })"),
                         "model_config.pepnet.task_towers[0].mlp.hidden_units[0]", "must be > 0"));
  // An empty domain_input_name is no domain_input_name (as in TorchEasyRec); the rest builds.
  EXPECT_TRUE(testing::NoProblems(config_of(groups, R"(domain_input_name: "" ppnet_hidden_units: [4] )" +
                                                        std::string(kTowers))));
  EXPECT_TRUE(testing::NoProblems(config_of(groups, full_pepnet())));
}

}  // namespace pepnet_test
}  // namespace tzrec::models
