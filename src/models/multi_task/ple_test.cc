// PLE: predictions against the same forward composed from its extraction networks and towers;
// config errors.
#include "models/multi_task/ple.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace ple_test {

using testing::child;
using testing::error_of;
using testing::make_kjt;
using testing::parse_config;

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("i", 5, 2)};
}

std::string config_text(const std::string& networks) {
  return R"(data_config { label_fields: ["clk", "buy"] }
    model_config {
      feature_groups { group_name: "all" feature_names: ["u", "i"] }
      ple { )" + networks + R"(
        task_towers { tower_name: "ctr" label_name: "clk" mlp { hidden_units: [3] } losses { binary_cross_entropy {} } }
        task_towers { tower_name: "cvr" label_name: "buy" losses { binary_cross_entropy {} } }
      }
    })";
}

const char kTwoLayers[] = R"(
  extraction_networks { network_name: "l0" expert_num_per_task: 2 share_num: 1
                        task_expert_net { hidden_units: [6] } share_expert_net { hidden_units: [6] } }
  extraction_networks { network_name: "l1" expert_num_per_task: 1 share_num: 2
                        task_expert_net { hidden_units: [4] } share_expert_net { hidden_units: [4] } })";

TEST(PLEModel, ForwardMatchesItsSubmodules) {
  auto model = create_model(parse_config(config_text(kTwoLayers)), features());
  model->eval();
  sparse::Batch batch;
  batch.batch_size = 4;
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f});
  batch.labels["buy"] = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f});
  batch.sparse_features = make_kjt({"u", "i"}, {{{0}, {1}, {2}, {3}}, {{4}, {3}, {}, {0, 1}}});
  auto pred = model->predict(batch);
  torch::Tensor all = model->embedding_group()->forward(batch).at("all");
  auto [t0, s0] = child<nn::ExtractionNetImpl>(*model, "_extraction_nets.0")->forward({all, all}, all);
  auto l1 = child<nn::ExtractionNetImpl>(*model, "_extraction_nets.1");
  auto [t1, s1] = l1->forward(t0, s0);
  EXPECT_FALSE(s1.defined());  // the last network has no shared gate
  auto ctr = child<nn::TaskTowerImpl>(*model, "_task_tower.0");
  auto cvr = child<nn::TaskTowerImpl>(*model, "_task_tower.1");
  EXPECT_TRUE(torch::allclose(pred.at("logits_ctr"), ctr->forward(t1[0]).squeeze(1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(pred.at("logits_cvr"), cvr->forward(t1[1]).squeeze(1), 1e-5, 1e-6));
  std::vector<std::string> names = testing::keys_of(model->dense_parameters());
  for (const char* want : {"_extraction_nets.0._shared_gate.weight", "_extraction_nets.1._task_layers.1.0.mlp.0.perceptron.0.weight",
                           "_extraction_nets.1._shared_layers.1.mlp.0.perceptron.0.bias",
                           "_task_tower.0.tower_mlp.mlp.0.perceptron.0.weight", "_task_tower.1.linear.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  model->train();
  auto losses = model->loss(model->predict(batch), batch);
  model->total_loss(losses).backward();
  for (const auto& [name, p] : model->dense_parameters()) {
    if (name.find("_extraction_nets.1._shared") != std::string::npos) continue;  // feeds no task in the last layer
    EXPECT_TRUE(p.grad().defined()) << name;
  }
}

TEST(PLEModel, ConfigErrors) {
  auto err = [](const std::string& networks) {
    return error_of([&] { create_model(parse_config(config_text(networks)), features()); });
  };
  EXPECT_NE(err("").find("model_config.ple.extraction_networks: needs at least one"), std::string::npos);
  EXPECT_NE(err(R"(extraction_networks { network_name: "l0" expert_num_per_task: 1 share_num: 1
                                         task_expert_net { hidden_units: [6] } share_expert_net { hidden_units: [5] } })")
                .find("model_config.ple.extraction_networks[0]: share_expert_net and task_expert_net must end in the "
                      "same width"),
            std::string::npos);
  EXPECT_NE(err(R"(extraction_networks { network_name: "l0" expert_num_per_task: 1 share_num: 1
                                         task_expert_net { hidden_units: [6] } })")
                .find("model_config.ple.extraction_networks[0].share_expert_net: required"),
            std::string::npos);
}

}  // namespace ple_test
}  // namespace tzrec::models
