#include "models/rank/multi_tower.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace multi_tower_test {

using testing::keys_of;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;

const char* kConfig = R"pb(
  data_config { label_fields: "clk" }
  model_config {
    feature_groups { group_name: "user" feature_names: ["u"] group_type: DEEP }
    feature_groups { group_name: "item" feature_names: ["i", "price"] group_type: DEEP }
    multi_tower {
      towers { input: "user" mlp { hidden_units: [4] } }
      towers { input: "item" mlp { hidden_units: [3, 2] activation: "nn.Tanh" use_bn: true } }
      final { hidden_units: [5] activation: "nn.LeakyReLU(negative_slope=0.2)" }
    }
    losses { binary_cross_entropy {} }
  })pb";

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("i", 4, 2), testing::dense_feature("price", 2)};
}

const std::vector<std::vector<int64_t>> kIdsU = {{5}, {0, 2}};
const std::vector<std::vector<int64_t>> kIdsI = {{3}, {}};

sparse::Batch make_batch() {
  sparse::Batch batch;
  batch.batch_size = 2;
  batch.sparse_features = make_kjt({"u", "i"}, {kIdsU, kIdsI});
  batch.dense_features =
      sparse::KeyedTensor::from_tensors({"price"}, {torch::tensor({{0.5f, -1.0f}, {2.0f, 0.25f}})});
  batch.labels["clk"] = torch::tensor({0.0f, 1.0f});
  return batch;
}

TEST(MultiTower, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(kConfig);
  MultiTower model(config.model_config(), features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{
                "towers.user.mlp.0.perceptron.0.weight", "towers.user.mlp.0.perceptron.0.bias",
                "towers.item.mlp.0.perceptron.0.weight",  // no Linear bias with use_bn
                "towers.item.mlp.0.perceptron.1.weight", "towers.item.mlp.0.perceptron.1.bias",
                "towers.item.mlp.1.perceptron.0.weight", "towers.item.mlp.1.perceptron.1.weight",
                "towers.item.mlp.1.perceptron.1.bias", "final_mlp.mlp.0.perceptron.0.weight",
                "final_mlp.mlp.0.perceptron.0.bias", "output_mlp.weight", "output_mlp.bias"}));
  std::map<std::string, torch::Tensor> p;
  for (const auto& [k, v] : model.dense_parameters()) p[k] = v;
  EXPECT_EQ(p["towers.user.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(p["towers.item.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(p["final_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(p["output_mlp.weight"].sizes(), (std::vector<int64_t>{1, 5}));
  std::vector<std::string> buffers;
  for (const auto& b : model.named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(buffers.size(), 6u);
  EXPECT_EQ(buffers[0], "towers.item.mlp.0.perceptron.1.running_mean");
}

// Eval mode (BatchNorm uses running stats, here set to known values); reference = plain ops.
TEST(MultiTower, ForwardMatchesPlainOps) {
  torch::manual_seed(11);
  auto config = parse_config(kConfig);
  MultiTower model(config.model_config(), features(), {"clk"}, {});
  {
    torch::NoGradGuard g;
    auto b = model.named_buffers();
    b["towers.item.mlp.0.perceptron.1.running_mean"].copy_(torch::tensor({0.1f, -0.2f, 0.3f}));
    b["towers.item.mlp.0.perceptron.1.running_var"].copy_(torch::tensor({0.5f, 2.0f, 1.5f}));
    for (auto& [k, v] : model.dense_parameters()) {
      if (k.find("perceptron.1") != std::string::npos) v.uniform_(0.5, 1.5);  // BN affine
    }
  }
  model.eval();
  auto pred = model.predict(make_batch());

  std::map<std::string, torch::Tensor> t, p;
  for (const auto& tab : model.embedding_tables()) t[tab.name] = tab.weight;
  for (const auto& [k, v] : model.dense_parameters()) p[k] = v;
  auto b = model.named_buffers();
  torch::NoGradGuard g;
  auto lin = [&](const torch::Tensor& x, const std::string& pre, bool bias = true) {
    auto y = torch::matmul(x, p[pre + ".weight"].t());
    return bias ? y + p[pre + ".bias"] : y;
  };
  auto bn = [&](const torch::Tensor& x, const std::string& pre) {
    return (x - b[pre + ".running_mean"]) / torch::sqrt(b[pre + ".running_var"] + 1e-5) * p[pre + ".weight"] +
           p[pre + ".bias"];
  };
  auto user = pooled(t["u_emb"], kIdsU);                                                      // [2, 3]
  auto item = torch::cat({pooled(t["i_emb"], kIdsI), torch::tensor({{0.5f, -1.0f}, {2.0f, 0.25f}})}, 1);  // [2, 4]
  auto yu = torch::relu(lin(user, "towers.user.mlp.0.perceptron.0"));
  auto hi = torch::tanh(bn(lin(item, "towers.item.mlp.0.perceptron.0", false), "towers.item.mlp.0.perceptron.1"));
  auto yi = torch::tanh(bn(lin(hi, "towers.item.mlp.1.perceptron.0", false), "towers.item.mlp.1.perceptron.1"));
  auto f = torch::leaky_relu(lin(torch::cat({yu, yi}, 1), "final_mlp.mlp.0.perceptron.0"), 0.2);
  auto y = lin(f, "output_mlp").squeeze(1);
  EXPECT_TRUE(torch::allclose(pred["logits"], y, 1e-5, 1e-5)) << pred["logits"] << "\n" << y;
  EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(y), 1e-5, 1e-5));
}

TEST(MultiTower, WithoutFinal) {
  auto config = parse_config(R"(
    model_config {
      feature_groups { group_name: "user" feature_names: ["u"] }
      multi_tower { towers { input: "user" mlp { hidden_units: [2] } } }
      losses { binary_cross_entropy {} }
    })");
  MultiTower model(config.model_config(), features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"towers.user.mlp.0.perceptron.0.weight", "towers.user.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight", "output_mlp.bias"}));
  auto pred = model.predict(make_batch());
  EXPECT_EQ(pred["logits"].sizes(), (std::vector<int64_t>{2}));
}

TEST(MultiTower, ConfigErrors) {
  auto check = [](const std::string& towers, const std::string& fragment) {
    auto config = parse_config(R"(model_config {
        feature_groups { group_name: "user" feature_names: ["u"] }
        multi_tower { )" + towers + R"( final { hidden_units: [2] } }
        losses { binary_cross_entropy {} } })");
    try {
      MultiTower model(config.model_config(), features(), {"clk"}, {});
      ADD_FAILURE() << "no error, expected " << fragment;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  check("", "model_config.multi_tower.towers: needs at least one tower");
  check(R"(towers { input: "nope" mlp { hidden_units: [2] } })",
        "model_config.multi_tower.towers[0].input: unknown feature group 'nope'");
  check(R"(towers { input: "user" })", "model_config.multi_tower.towers[0].mlp: required");
  check(R"(towers { input: "user" mlp { hidden_units: [2] } } towers { input: "user" mlp { hidden_units: [2] } })",
        "towers[1].input: group 'user' already has a tower");
}

}  // namespace multi_tower_test
}  // namespace tzrec::models
