// WideAndDeep: predictions against plain libtorch ops, TorchEasyRec's parameter names, config
// errors, gradients.
#include "models/rank/wide_and_deep.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace wide_and_deep_test {

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

// Groups: wide [a, b] (WIDE), deep [a, b, price]; wide_embedding_dim 3.
std::string config_text(bool with_final, const std::string& extra = "wide_embedding_dim: 3") {
  return std::string(R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "wide" feature_names: ["a", "b"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a", "b", "price"] group_type: DEEP }
      wide_and_deep {
        deep { hidden_units: [4, 3] }
        )") + (with_final ? "final { hidden_units: [2] }" : "") + extra + R"(
      }
      losses { binary_cross_entropy {} }
      metrics { auc {} }
    })";
}

// Every dense weight 0 and every wide-table entry 0.5 (3 dims per id): the logit is the wide sum,
// 1.5 per id: rows with 2, 1 and 3 ids → 3, 1.5, 4.5.
TEST(WideAndDeep, HandComputedWideSum) {
  auto config = parse_config(config_text(false));
  WideAndDeep model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.eval();
  {
    torch::NoGradGuard g;
    auto t = tables_of(model);
    ASSERT_EQ(t.size(), 4u);
    t["a_emb_wide"].fill_(0.5);
    t["b_emb_wide"].fill_(0.5);
    for (auto& [name, p] : model.dense_parameters()) p.zero_();
  }
  auto pred = model.predict(testing::ab_price_batch());
  ASSERT_EQ(pred.size(), 2u);
  ASSERT_EQ(pred["logits"].sizes(), (std::vector<int64_t>{3}));
  auto want = torch::tensor({3.0f, 1.5f, 4.5f});
  EXPECT_TRUE(torch::allclose(pred["logits"], want, 1e-6, 1e-6)) << pred["logits"];
  EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(want), 1e-6, 1e-6));
}

// Random weights; the reference is the WideAndDeep formula written with plain libtorch ops.
TEST(WideAndDeep, ForwardMatchesPlainOps) {
  for (bool with_final : {false, true}) {
    torch::manual_seed(11);
    auto config = parse_config(config_text(with_final));
    WideAndDeep model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
    model.eval();
    auto pred = model.predict(testing::ab_price_batch());

    auto t = tables_of(model);
    auto p = dense_of(model);
    torch::NoGradGuard g;
    auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB);                              // [3, 2]
    auto y_wide = (pooled(t["a_emb_wide"], kIdsA) + pooled(t["b_emb_wide"], kIdsB)).sum(1, true);  // [3, 1]
    auto deep_in = torch::cat({ea, eb, torch::tensor({{0.5f}, {1.0f}, {-2.0f}})}, 1);              // [3, 5]
    auto h = torch::relu(linear(deep_in, p, "deep_mlp.mlp.0.perceptron.0"));
    auto y_deep = torch::relu(linear(h, p, "deep_mlp.mlp.1.perceptron.0"));  // [3, 3]
    torch::Tensor y;
    if (with_final) {
      auto f = torch::relu(linear(torch::cat({y_wide, y_deep}, 1), p, "final_mlp.mlp.0.perceptron.0"));
      y = linear(f, p, "output_mlp");
    } else {
      y = y_wide + linear(y_deep, p, "output_mlp");
    }
    EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5))
        << "final=" << with_final << "\n" << pred["logits"] << "\n" << y;
    EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(y.squeeze(1)), 1e-5, 1e-5));
  }
}

TEST(WideAndDeep, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text(true));
  WideAndDeep model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"deep_mlp.mlp.0.perceptron.0.weight", "deep_mlp.mlp.0.perceptron.0.bias",
                                      "deep_mlp.mlp.1.perceptron.0.weight", "deep_mlp.mlp.1.perceptron.0.bias",
                                      "final_mlp.mlp.0.perceptron.0.weight", "final_mlp.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight", "output_mlp.bias"}));
  auto p = dense_of(model);
  EXPECT_EQ(p["deep_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(p["final_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 1 + 3}));
  EXPECT_EQ(p["output_mlp.weight"].sizes(), (std::vector<int64_t>{1, 2}));
  std::set<std::string> sparse_names;
  for (const auto& item : model.named_parameters()) {
    if (item.key().rfind("embedding_group.", 0) == 0) sparse_names.insert(item.key());
  }
  EXPECT_EQ(sparse_names, (std::set<std::string>{
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.a_emb.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.b_emb.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.a_emb_wide.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.b_emb_wide.weight"}));
  EXPECT_EQ(tables_of(model)["a_emb_wide"].sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(model.named_parameters().size(), 8u + 4u);

  // Without final: no final_mlp; output_mlp reads the deep MLP; default wide_embedding_dim 4 and
  // wide_init_fn applied to the wide tables.
  auto plain = parse_config(config_text(false, R"(wide_init_fn: "nn.init.constant_,val=0.25")"));
  WideAndDeep small(plain.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(dense_of(small).count("final_mlp.mlp.0.perceptron.0.weight"), 0u);
  EXPECT_EQ(dense_of(small)["output_mlp.weight"].sizes(), (std::vector<int64_t>{1, 3}));
  auto wide = tables_of(small)["b_emb_wide"];
  EXPECT_EQ(wide.sizes(), (std::vector<int64_t>{4, 4}));
  EXPECT_TRUE(torch::all(wide == 0.25f).item<bool>());
}

TEST(WideAndDeep, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto config = parse_config(config_text(true));
  // tanh instead of ReLU: no dead unit can stop a gradient.
  auto* wd = config.mutable_model_config()->mutable_wide_and_deep();
  wd->mutable_deep()->set_activation("nn.Tanh");
  wd->mutable_final()->set_activation("nn.Tanh");
  WideAndDeep model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.train();
  auto batch = testing::ab_price_batch();
  auto losses = model.loss(model.predict(batch), batch);
  ASSERT_EQ(losses.count("binary_cross_entropy"), 1u);
  model.total_loss(losses).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(WideAndDeep, ConfigErrors) {
  auto err = [](const std::string& text) {
    auto config = parse_config(text);
    return error_of([&] { WideAndDeep model(config.model_config(), testing::ab_price_features(), {"clk"}, {}); });
  };
  EXPECT_NE(err(R"(model_config {
      feature_groups { group_name: "deep" feature_names: ["a"] }
      wide_and_deep { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} } })")
                .find("model_config.feature_groups: WideAndDeep needs a feature group named 'wide'"),
            std::string::npos);
  EXPECT_NE(err(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      wide_and_deep { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} } })")
                .find("WideAndDeep needs a feature group named 'deep'"),
            std::string::npos);
  EXPECT_EQ(err(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a"] }
      wide_and_deep { deep { } }
      losses { binary_cross_entropy {} } })"),
            "model_config.wide_and_deep.deep.hidden_units: must not be empty");
  EXPECT_EQ(err(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a"] }
      wide_and_deep { deep { hidden_units: [3] } final { hidden_units: [2, 0] } }
      losses { binary_cross_entropy {} } })"),
            "model_config.wide_and_deep.final.hidden_units[1]: must be > 0, got 0");
}

// create_model builds it from the oneof.
TEST(WideAndDeep, CreatedByTheFactory) {
  auto config = parse_config(config_text(false));
  auto model = create_model(config, testing::ab_price_features());
  ASSERT_NE(std::dynamic_pointer_cast<WideAndDeep>(model), nullptr);
  EXPECT_EQ(model->predict(testing::ab_price_batch()).at("probs").sizes(), (std::vector<int64_t>{3}));
}

}  // namespace wide_and_deep_test
}  // namespace tzrec::models
