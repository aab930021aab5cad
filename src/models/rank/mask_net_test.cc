// MaskNet: predictions against its MaskNetModule (itself tested against plain ops in
// nn/mask_net_test.cc) over the plainly pooled group input and a bias-free output Linear;
// state-dict names, TorchEasyRec's aggregation-dim arithmetic, gradients and config errors.
#include "models/rank/mask_net.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace mask_net_test {

using testing::child;
using testing::error_of;
using testing::keys_of;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;

std::string config_text(const std::string& module_body) {
  return R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "all" feature_names: ["u", "i", "price"] }
      feature_groups { group_name: "other" feature_names: ["i"] }
      mask_net { mask_net_module { )" + module_body + R"( } }
      losses { binary_cross_entropy {} }
    })";
}

const char kParallel[] = R"(n_mask_blocks: 2 mask_block { reduction_ratio: 0.5 hidden_dim: 4 } top_mlp { hidden_units: [3] })";

std::vector<feature::FeatureInfo> features() {
  return {testing::sparse_feature("u", 6, 3), testing::sparse_feature("i", 5, 2), testing::dense_feature("price", 1)};
}

const std::vector<std::vector<int64_t>> kIdsU = {{1}, {3}, {0, 4}, {5}};
const std::vector<std::vector<int64_t>> kIdsI = {{2}, {}, {1}, {0, 4}};

sparse::Batch make_batch() {
  sparse::Batch batch;
  batch.batch_size = 4;
  batch.sparse_features = make_kjt({"u", "i"}, {kIdsU, kIdsI});
  batch.dense_features =
      sparse::KeyedTensor::from_tensors({"price"}, {torch::tensor({{0.5f}, {1.0f}, {-2.0f}, {0.25f}})});
  batch.labels["clk"] = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f});
  return batch;
}

TEST(MaskNet, ForwardMatchesItsModuleOnTheFirstGroup) {
  for (const std::string body :
       {std::string(kParallel), std::string("n_mask_blocks: 3 use_parallel: false mask_block { hidden_dim: 5 } "
                                            "top_mlp { hidden_units: [4, 2] }")}) {
    torch::manual_seed(9);
    auto config = parse_config(config_text(body));
    auto holder = std::make_shared<MaskNet>(config.model_config(), features(), std::vector<std::string>{"clk"},
                                            std::vector<std::string>{});
    MaskNet& model = *holder;  // child<> walks named_modules(), which needs the model in a shared_ptr
    model.eval();
    auto pred = model.predict(make_batch());
    std::map<std::string, torch::Tensor> t;
    for (const auto& tab : model.embedding_tables()) t[tab.name] = tab.weight;
    torch::NoGradGuard g;
    auto all = torch::cat({pooled(t["u_emb"], kIdsU), pooled(t["i_emb"], kIdsI),
                           torch::tensor({{0.5f}, {1.0f}, {-2.0f}, {0.25f}})},
                          1);  // [4, 6]
    auto hidden = child<nn::MaskNetModuleImpl>(model, "mask_net_layer")->forward(all);
    auto out = child<torch::nn::LinearImpl>(model, "output_linear");
    EXPECT_FALSE(out->bias.defined());
    auto y = hidden.matmul(out->weight.t()).squeeze(1);
    EXPECT_TRUE(torch::allclose(pred.at("logits"), y, 1e-5, 1e-6)) << body << pred.at("logits") << y;
    EXPECT_TRUE(torch::allclose(pred.at("probs"), torch::sigmoid(y), 1e-5, 1e-6));
  }
}

TEST(MaskNet, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text(kParallel));
  MaskNet model(config.model_config(), features(), {"clk"}, {});
  std::vector<std::string> want = {"mask_net_layer.ln_emb.weight", "mask_net_layer.ln_emb.bias"};
  for (const char* block : {"0", "1"}) {
    for (const char* part : {"mask_generator.0", "mask_generator.2", "ffn.0", "ffn.1"}) {
      for (const char* w : {"weight", "bias"}) {
        want.push_back(std::string("mask_net_layer.mask_blocks.") + block + "." + part + "." + w);
      }
    }
  }
  for (const char* s : {"mask_net_layer.top_mlp.mlp.0.perceptron.0.weight", "mask_net_layer.top_mlp.mlp.0.perceptron.0.bias",
                        "output_linear.weight"}) {
    want.push_back(s);
  }
  EXPECT_EQ(keys_of(model.dense_parameters()), want);
  std::map<std::string, torch::Tensor> p;
  for (const auto& [k, v] : model.dense_parameters()) p[k] = v;
  EXPECT_EQ(p["mask_net_layer.mask_blocks.1.mask_generator.0.weight"].sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(p["mask_net_layer.top_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(p["output_linear.weight"].sizes(), (std::vector<int64_t>{1, 3}));
}

// TorchEasyRec passes reduction_ratio through protobuf's json_format (the shortest decimal of the
// float32, 0.7 for 0.7f) and takes int(input_dim * ratio): int(10 * 0.7) = 7, where the float32
// value 0.69999999 would give 6. aggregation_dim only counts with reduction_ratio: 0.
TEST(MaskNet, AggregationDimAsTorchEasyRec) {
  protos::MaskNetModule cfg;
  cfg.set_n_mask_blocks(1);
  cfg.mutable_mask_block()->set_hidden_dim(4);
  cfg.mutable_mask_block()->set_reduction_ratio(0.7f);
  cfg.mutable_mask_block()->set_aggregation_dim(3);
  nn::MaskNetOptions o = to_mask_net_options(cfg, "m");
  EXPECT_EQ(o.mask_block.reduction_ratio, 0.7);
  EXPECT_EQ(nn::MaskNetModule(10, o)->named_parameters()["mask_blocks.0.mask_generator.0.weight"].size(0), 7);
  cfg.mutable_mask_block()->set_reduction_ratio(0.0f);
  o = to_mask_net_options(cfg, "m");
  EXPECT_EQ(nn::MaskNetModule(10, o)->named_parameters()["mask_blocks.0.mask_generator.0.weight"].size(0), 3);
  cfg.mutable_mask_block()->clear_reduction_ratio();  // default 1.0
  o = to_mask_net_options(cfg, "m");
  EXPECT_EQ(nn::MaskNetModule(10, o)->named_parameters()["mask_blocks.0.mask_generator.0.weight"].size(0), 10);
}

TEST(MaskNet, WithoutTopMlpTheOutputReadsTheBlocks) {
  auto config = parse_config(config_text("n_mask_blocks: 3 mask_block { hidden_dim: 4 }"));
  MaskNet model(config.model_config(), features(), {"clk"}, {});
  std::map<std::string, torch::Tensor> p;
  for (const auto& [k, v] : model.dense_parameters()) p[k] = v;
  EXPECT_EQ(p["output_linear.weight"].sizes(), (std::vector<int64_t>{1, 12}));
  EXPECT_EQ(model.predict(make_batch()).at("logits").sizes(), (std::vector<int64_t>{4}));
}

TEST(MaskNet, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto config = parse_config(config_text(kParallel));
  MaskNet model(config.model_config(), features(), {"clk"}, {});
  model.train();
  auto batch = make_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(MaskNet, ConfigErrors) {
  auto err = [](const std::string& body) {
    auto config = parse_config(config_text(body));
    return error_of([&] { MaskNet model(config.model_config(), features(), {"clk"}, {}); });
  };
  const std::string p = "model_config.mask_net.mask_net_module";
  EXPECT_EQ(err("n_mask_blocks: 0 mask_block { hidden_dim: 4 }"), p + ".n_mask_blocks: must be >= 1, got 0");
  EXPECT_EQ(err("n_mask_blocks: 1"), p + ".mask_block: required, e.g. mask_block { hidden_dim: 256 }");
  EXPECT_EQ(err("n_mask_blocks: 1 mask_block { }"), p + ".mask_block.hidden_dim: must be > 0, got 0");
  EXPECT_NE(err("n_mask_blocks: 1 mask_block { hidden_dim: 2 reduction_ratio: 0 }")
                .find(p + ".mask_block: set reduction_ratio or aggregation_dim"),
            std::string::npos);
  EXPECT_NE(err("n_mask_blocks: 1 mask_block { hidden_dim: 2 reduction_ratio: 0.1 }")
                .find(p + ".mask_block: the aggregation dim must be > 0, got 0"),
            std::string::npos);
  EXPECT_EQ(err("n_mask_blocks: 1 mask_block { hidden_dim: 2 } top_mlp { }"),
            p + ".top_mlp.hidden_units: must not be empty");
  auto no_module = parse_config(R"(model_config { feature_groups { group_name: "all" feature_names: ["u"] }
                                   mask_net { } losses { binary_cross_entropy {} } })");
  EXPECT_EQ(error_of([&] { MaskNet model(no_module.model_config(), features(), {"clk"}, {}); }),
            p + ": required");
}

TEST(MaskNet, CreatedByTheFactory) {
  auto model = create_model(parse_config(config_text(kParallel)), features());
  EXPECT_NE(std::dynamic_pointer_cast<MaskNet>(model), nullptr);
}

}  // namespace mask_net_test
}  // namespace tzrec::models
