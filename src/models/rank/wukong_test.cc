// WuKong (tzrec/models/wukong.py, WuKong line 26, predict line 102): the model's wiring (dense_mlp output as the first feature, the sparse embeddings as
// [B, N, D], the stacked layers, flatten, final and output MLPs) against the same steps written
// with plain libtorch ops and stand-alone layers (the layer math itself is checked against a
// PyTorch reference in nn/wukong_layer_test.cc); state-dict names as tzrec/models/wukong.py builds
// them; gradients; config errors.
#include "models/rank/wukong.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace wukong_test {

using testing::dense_of;
using testing::error_of;
using testing::kIdsA;
using testing::kIdsB;
using testing::keys_of;
using testing::linear;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;
using testing::tables_of;

const char* kLayers = R"(
        wukong_layers { lcb_feature_num: 2 fmb_feature_num: 2 compressed_feature_num: 2
                        feature_num_mlp { hidden_units: [4] } }
        wukong_layers { lcb_feature_num: 1 fmb_feature_num: 3 feature_num_mlp { hidden_units: [3] } })";

// Groups: dense [d0 (1), d1 (2)], sparse [a, b, c] (dim 3).
std::string config_text(const std::string& final_activation = "nn.ReLU") {
  return std::string(R"(
    model_config {
      feature_groups { group_name: "dense" feature_names: ["d0", "d1"] }
      feature_groups { group_name: "sparse" feature_names: ["a", "b", "c"] }
      wukong {
        dense_mlp { hidden_units: [4, 3] })") +
         kLayers + R"(
        final { hidden_units: [5] activation: ")" + final_activation + R"(" }
      }
      losses { binary_cross_entropy {} }
    })";
}

std::vector<feature::FeatureInfo> features() {
  return {testing::dense_feature("d0", 1), testing::dense_feature("d1", 2), testing::sparse_feature("a", 5, 3),
          testing::sparse_feature("b", 4, 3), testing::sparse_feature("c", 6, 3), testing::sparse_feature("e", 6, 2)};
}

const std::vector<std::vector<int64_t>> kIdsC = {{5}, {0, 1}, {2}};
const std::vector<std::vector<int64_t>> kIdsE = {{1}, {2}, {3}};

sparse::Batch make_batch() {
  sparse::Batch batch;
  batch.batch_size = 3;
  batch.sparse_features = make_kjt({"a", "b", "c", "e"}, {kIdsA, kIdsB, kIdsC, kIdsE});
  batch.dense_features = sparse::KeyedTensor::from_tensors(
      {"d0", "d1"}, {torch::tensor({{0.5f}, {1.0f}, {-2.0f}}), torch::tensor({{1.0f, 2.0f}, {0.0f, -1.0f}, {3.0f, 0.5f}})});
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 1.0f});
  return batch;
}

// A stand-alone layer holding the model's parameters of "_wukong_layers.<l>.".
nn::WuKongLayer layer_like(Model& model, int l, int64_t feature_num, int64_t lcb, int64_t fmb, int64_t compressed,
                           int64_t hidden) {
  nn::WuKongLayerOptions o;
  o.lcb_feature_num = lcb;
  o.fmb_feature_num = fmb;
  o.compressed_feature_num = compressed;
  o.feature_num_mlp.hidden_units = {hidden};
  nn::WuKongLayer layer(3, feature_num, o, "layer");
  auto p = dense_of(model);
  torch::NoGradGuard g;
  for (auto& item : layer->named_parameters()) {
    item.value().copy_(p.at(fmt::format("_wukong_layers.{}.{}", l, item.key())));
  }
  return layer;
}

TEST(WuKong, ForwardMatchesPlainOps) {
  torch::manual_seed(7);
  auto config = parse_config(config_text());
  WuKong model(config.model_config(), features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(make_batch());

  auto t = tables_of(model);
  auto p = dense_of(model);
  auto first = layer_like(model, 0, 4, 2, 2, 2, 4);   // 1 dense + 3 sparse → 4 features
  auto second = layer_like(model, 1, 4, 1, 3, 16, 3);  // → 4 features, default compression 16
  torch::NoGradGuard g;
  auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB), ec = pooled(t["c_emb"], kIdsC);
  auto dense_in = torch::tensor({{0.5f, 1.0f, 2.0f}, {1.0f, 0.0f, -1.0f}, {-2.0f, 3.0f, 0.5f}});
  auto h = torch::relu(linear(dense_in, p, "dense_mlp.mlp.0.perceptron.0"));
  auto dense = torch::relu(linear(h, p, "dense_mlp.mlp.1.perceptron.0"));  // [3, 3]
  auto x = torch::stack({dense, ea, eb, ec}, 1);                            // [3, 4, 3]
  auto out = second->forward(first->forward(x));                           // [3, 4, 3]
  auto f = torch::relu(linear(out.reshape({3, 12}), p, "final_mlp.mlp.0.perceptron.0"));
  auto y = linear(f, p, "output_mlp").squeeze(1);
  EXPECT_TRUE(torch::allclose(pred.at("logits"), y, 1e-5, 1e-5)) << pred.at("logits") << y;
  EXPECT_TRUE(torch::allclose(pred.at("probs"), torch::sigmoid(y), 1e-5, 1e-5));
  EXPECT_FALSE(p.count("_wukong_layers.1.residual_projection.weight"));  // 4 features in and out
  EXPECT_TRUE(p.count("_wukong_layers.0.residual_projection.weight") == 0);
}

TEST(WuKong, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text("Dice"));
  WuKong model(config.model_config(), features(), {"clk"}, {});
  std::vector<std::string> want = {"dense_mlp.mlp.0.perceptron.0.weight", "dense_mlp.mlp.0.perceptron.0.bias",
                                   "dense_mlp.mlp.1.perceptron.0.weight", "dense_mlp.mlp.1.perceptron.0.bias"};
  for (int l = 0; l < 2; ++l) {
    for (const char* n : {"lcb.weight", "fmb.weight", "fmb.norm.weight", "fmb.norm.bias",
                          "fmb.mlp.mlp.0.perceptron.0.weight", "fmb.mlp.mlp.0.perceptron.0.bias",
                          "fmb.feature_out_liner.weight", "fmb.feature_out_liner.bias", "norm.weight", "norm.bias"}) {
      want.push_back(fmt::format("_wukong_layers.{}.{}", l, n));
    }
  }
  for (const char* n : {"final_mlp.mlp.0.perceptron.0.weight", "final_mlp.mlp.0.perceptron.0.bias",
                        "final_mlp.mlp.0.perceptron.1.alpha", "output_mlp.weight", "output_mlp.bias"}) {
    want.push_back(n);
  }
  EXPECT_EQ(keys_of(model.dense_parameters()), want);
  EXPECT_EQ(dense_of(model)["_wukong_layers.1.fmb.weight"].sizes(), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(dense_of(model)["final_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{5, 12}));
}

// One feature group, whatever its name, is the sparse group; a layer changing the feature count
// gets a residual projection.
TEST(WuKong, SingleGroupAndResidualProjection) {
  auto config = parse_config(R"(
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "c"] }
      wukong {
        wukong_layers { lcb_feature_num: 0 fmb_feature_num: 2 compressed_feature_num: 2
                        feature_num_mlp { hidden_units: [4] } }
        final { hidden_units: [2] }
      }
      losses { l2_loss {} }
    })");
  torch::manual_seed(3);
  WuKong model(config.model_config(), features(), {"clk"}, {});
  auto p = dense_of(model);
  EXPECT_EQ(p.count("dense_mlp.mlp.0.perceptron.0.weight"), 0u);
  EXPECT_EQ(p.at("_wukong_layers.0.residual_projection.weight").sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(p.at("_wukong_layers.0.lcb.weight").sizes(), (std::vector<int64_t>{3, 0}));
  model.eval();
  auto pred = model.predict(make_batch());
  EXPECT_EQ(pred.at("y").sizes(), (std::vector<int64_t>{3}));
  EXPECT_TRUE(torch::isfinite(pred.at("y")).all().item<bool>());
}

TEST(WuKong, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto config = parse_config(config_text("Dice"));
  WuKong model(config.model_config(), features(), {"clk"}, {});
  model.train();
  auto batch = make_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(WuKong, ConfigErrors) {
  auto err = [](const std::string& model_body) {
    auto config = parse_config("model_config { " + model_body + " losses { binary_cross_entropy {} } }");
    return error_of([&] { WuKong model(config.model_config(), features(), {"clk"}, {}); });
  };
  const std::string groups = R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                feature_groups { group_name: "sparse" feature_names: ["a", "b"] } )";
  EXPECT_EQ(err(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                   feature_groups { group_name: "emb" feature_names: ["a"] }
                   wukong { dense_mlp { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups: WuKong needs a feature group named 'sparse' (group_type: DEEP)");
  EXPECT_EQ(err(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                   feature_groups { group_name: "sparse" feature_names: ["a", "e"] }
                   wukong { dense_mlp { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups[1].feature_names[1]: WuKong's sparse group needs equal embedding_dim: 'e' "
            "has 2, 'a' has 3");
  EXPECT_EQ(err(groups + "wukong { dense_mlp { hidden_units: [4] } final { hidden_units: [2] } }"),
            "model_config.wukong.dense_mlp.hidden_units: the last hidden unit must equal the embedding dimension of "
            "the 'sparse' group (3), got 4");
  EXPECT_NE(err(groups + "wukong { final { hidden_units: [2] } }").find("model_config.wukong.dense_mlp: required"),
            std::string::npos);
  EXPECT_EQ(err(groups + "wukong { dense_mlp { hidden_units: [3] } }"), "model_config.wukong.final: required");
  const std::string mlp = "dense_mlp { hidden_units: [3] } final { hidden_units: [2] } ";
  EXPECT_EQ(err(groups + "wukong { " + mlp + "wukong_layers { fmb_feature_num: 2 feature_num_mlp { hidden_units: [2] } } }"),
            "model_config.wukong.wukong_layers[0].lcb_feature_num: required");
  EXPECT_EQ(err(groups + "wukong { " + mlp + "wukong_layers { lcb_feature_num: 2 fmb_feature_num: 2 } }"),
            "model_config.wukong.wukong_layers[0].feature_num_mlp: required");
  EXPECT_EQ(err(groups + "wukong { " + mlp +
                "wukong_layers { lcb_feature_num: 2 fmb_feature_num: 0 feature_num_mlp { hidden_units: [2] } } }"),
            "model_config.wukong.wukong_layers[0].fmb_feature_num: must be > 0 (the factorization machine block "
            "outputs it)");
  EXPECT_EQ(err(groups + "wukong { " + mlp +
                "wukong_layers { lcb_feature_num: 2 fmb_feature_num: 1 compressed_feature_num: 0 "
                "feature_num_mlp { hidden_units: [2] } } }"),
            "model_config.wukong.wukong_layers[0].compressed_feature_num: must be > 0");
  EXPECT_EQ(err(groups + "wukong { " + mlp +
                "wukong_layers { lcb_feature_num: 2 fmb_feature_num: 1 feature_num_mlp { hidden_units: [0] } } }"),
            "model_config.wukong.wukong_layers[0].feature_num_mlp.hidden_units[0]: must be > 0, got 0");
}

TEST(WuKong, CreatedByTheFactory) {
  auto config = parse_config("data_config { label_fields: 'clk' } " + config_text());
  auto model = create_model(config, features());
  EXPECT_NE(std::dynamic_pointer_cast<WuKong>(model), nullptr);
}

}  // namespace wukong_test
}  // namespace tzrec::models
