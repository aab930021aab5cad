#include "models/rank/deepfm.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace deepfm_test {

using testing::dense_of;
using testing::kIdsA;
using testing::kIdsB;
using testing::keys_of;
using testing::linear;
using testing::make_kjt;
using testing::parse_config;
using testing::pooled;
using testing::tables_of;

// Groups: wide [a, b] (WIDE), deep [a, b, price], fm [a, b]; wide_embedding_dim 3.
std::string config_text(bool with_final) {
  return std::string(R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "wide" feature_names: ["a", "b"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a", "b", "price"] group_type: DEEP }
      feature_groups { group_name: "fm" feature_names: ["a", "b"] group_type: DEEP }
      deepfm {
        deep { hidden_units: [4, 3] }
        )") + (with_final ? "final { hidden_units: [2] }" : "") + R"(
        wide_embedding_dim: 3
      }
      losses { binary_cross_entropy {} }
      metrics { auc {} }
    })";
}

// With every dense weight 0 the logit is y_wide + Σ y_fm, computed here by hand:
// a_emb[i] = [i, 1], b_emb[i] = [1, i], every wide-table entry 0.5 (3 dims per id).
//   row 0: a=[1,1], b=[1,2] → fm 1 + 2 = 3; wide 2 ids × 1.5 = 3            → logit 6
//   row 1: a=[3,1], b=[0,0] → fm 0;         wide 1 id × 1.5                 → logit 1.5
//   row 2: a=[0,1]+[4,1]=[4,2], b=[1,1] → fm 4 + 2 = 6; wide 3 ids × 1.5    → logit 10.5
TEST(DeepFM, HandComputedWideAndFm) {
  auto config = parse_config(config_text(false));
  DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.eval();
  {
    torch::NoGradGuard g;
    auto t = tables_of(model);
    ASSERT_EQ(t.size(), 4u);
    t["a_emb"].copy_(torch::stack({torch::arange(5.0f), torch::ones({5})}, 1));
    t["b_emb"].copy_(torch::stack({torch::ones({4}), torch::arange(4.0f)}, 1));
    t["a_emb_wide"].fill_(0.5);
    t["b_emb_wide"].fill_(0.5);
    for (auto& [name, p] : model.dense_parameters()) p.zero_();
  }
  auto pred = model.predict(testing::ab_price_batch());
  ASSERT_EQ(pred.size(), 2u);
  ASSERT_EQ(pred["logits"].sizes(), (std::vector<int64_t>{3}));
  ASSERT_EQ(pred["probs"].sizes(), (std::vector<int64_t>{3}));
  auto want = torch::tensor({6.0f, 1.5f, 10.5f});
  EXPECT_TRUE(torch::allclose(pred["logits"], want, 1e-6, 1e-6)) << pred["logits"];
  EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(want), 1e-6, 1e-6));
}

// Random weights; the reference is the DeepFM formula written with plain libtorch ops.
TEST(DeepFM, ForwardMatchesPlainOps) {
  for (bool with_final : {false, true}) {
    torch::manual_seed(7);
    auto config = parse_config(config_text(with_final));
    DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
    model.eval();
    auto pred = model.predict(testing::ab_price_batch());

    auto t = tables_of(model);
    auto p = dense_of(model);
    torch::NoGradGuard g;
    auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB);  // [3, 2]
    auto y_wide = (pooled(t["a_emb_wide"], kIdsA) + pooled(t["b_emb_wide"], kIdsB)).sum(1, true);  // [3, 1]
    auto price = torch::tensor({{0.5f}, {1.0f}, {-2.0f}});
    auto deep_in = torch::cat({ea, eb, price}, 1);  // [3, 5]
    auto h = torch::relu(linear(deep_in, p, "deep_mlp.mlp.0.perceptron.0"));
    auto y_deep = torch::relu(linear(h, p, "deep_mlp.mlp.1.perceptron.0"));  // [3, 3]
    auto y_fm = ea * eb;  // two features: the only pair, [3, 2]
    torch::Tensor y;
    if (with_final) {
      auto f = torch::relu(linear(torch::cat({y_wide, y_fm, y_deep}, 1), p, "final_mlp.mlp.0.perceptron.0"));
      y = linear(f, p, "output_mlp");
    } else {
      y = y_wide + y_fm.sum(1, true) + linear(y_deep, p, "output_mlp");
    }
    EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5))
        << "final=" << with_final << "\n" << pred["logits"] << "\n" << y;
    EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(y.squeeze(1)), 1e-5, 1e-5));
  }
}

// model_config.variational_dropout: one dropout per group of more than one feature; in eval every
// feature is scaled by its keep probability. With all rates 0.5 and the weights of
// HandComputedWideAndFm the wide part halves and the FM (quadratic) quarters:
//   logits 3/2 + 3/4 = 2.25, 1.5/2 + 0 = 0.75, 4.5/2 + 6/4 = 3.75.
TEST(DeepFM, VariationalDropoutPerGroup) {
  auto config = parse_config(config_text(false));
  config.mutable_model_config()->mutable_variational_dropout()->set_regularization_lambda(0.3f);
  DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  auto p = dense_of(model);
  ASSERT_EQ(p.count("group_variational_dropouts.wide.feature_p"), 1u) << ::testing::PrintToString(keys_of(model.dense_parameters()));
  EXPECT_EQ(p["group_variational_dropouts.wide.feature_p"].sizes(), (std::vector<int64_t>{2}));
  EXPECT_EQ(p["group_variational_dropouts.deep.feature_p"].sizes(), (std::vector<int64_t>{3}));
  EXPECT_EQ(p["group_variational_dropouts.fm.feature_p"].sizes(), (std::vector<int64_t>{2}));
  model.eval();
  {
    torch::NoGradGuard g;
    auto t = tables_of(model);
    t["a_emb"].copy_(torch::stack({torch::arange(5.0f), torch::ones({5})}, 1));
    t["b_emb"].copy_(torch::stack({torch::ones({4}), torch::arange(4.0f)}, 1));
    t["a_emb_wide"].fill_(0.5);
    t["b_emb_wide"].fill_(0.5);
    for (auto& [name, param] : model.dense_parameters()) param.zero_();
  }
  auto batch = testing::ab_price_batch();
  auto pred = model.predict(batch);
  EXPECT_TRUE(torch::allclose(pred["logits"], torch::tensor({2.25f, 0.75f, 3.75f}), 1e-6, 1e-6)) << pred["logits"];
  auto losses = model.loss(pred, batch);
  // λ / B · Σ (1 - 0.5): wide and fm 0.3 / 3 · 1, deep 0.3 / 3 · 1.5.
  ASSERT_EQ(losses.count("deep_feature_p_loss"), 1u);
  EXPECT_NEAR(losses["wide_feature_p_loss"].item<double>(), 0.1, 1e-7);
  EXPECT_NEAR(losses["deep_feature_p_loss"].item<double>(), 0.15, 1e-7);
  EXPECT_NEAR(losses["fm_feature_p_loss"].item<double>(), 0.1, 1e-7);
  EXPECT_EQ(losses.size(), 4u);  // + binary_cross_entropy

  // Training: the rates get gradients from the task loss and the penalty.
  model.train();
  {
    torch::NoGradGuard g;
    for (auto& [name, param] : model.dense_parameters()) param.normal_();
  }
  pred = model.predict(batch);
  losses = model.loss(pred, batch);
  torch::Tensor total = torch::zeros({});
  for (auto& [name, value] : losses) total = total + value;
  total.backward();
  for (const char* group : {"wide", "deep", "fm"}) {
    auto grad = dense_of(model)[std::string("group_variational_dropouts.") + group + ".feature_p"].grad();
    ASSERT_TRUE(grad.defined()) << group;
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << group;
  }
}

TEST(DeepFM, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text(true));
  DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"deep_mlp.mlp.0.perceptron.0.weight", "deep_mlp.mlp.0.perceptron.0.bias",
                                      "deep_mlp.mlp.1.perceptron.0.weight", "deep_mlp.mlp.1.perceptron.0.bias",
                                      "final_mlp.mlp.0.perceptron.0.weight", "final_mlp.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight", "output_mlp.bias"}));
  auto p = dense_of(model);
  EXPECT_EQ(p["deep_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(p["final_mlp.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 1 + 2 + 3}));
  EXPECT_EQ(p["output_mlp.weight"].sizes(), (std::vector<int64_t>{1, 2}));
  // Embedding tables live under embedding_group.emb_impls.__BASE__.ebc.embedding_bags.<table>.
  std::set<std::string> sparse_names;
  for (const auto& item : model.named_parameters()) {
    if (item.key().rfind("embedding_group.", 0) == 0) sparse_names.insert(item.key());
  }
  EXPECT_EQ(sparse_names, (std::set<std::string>{
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.a_emb.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.b_emb.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.a_emb_wide.weight",
                              "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.b_emb_wide.weight"}));
  auto t = tables_of(model);
  EXPECT_EQ(t["a_emb_wide"].sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(model.named_parameters().size(), 8u + 4u);
}

TEST(DeepFM, FmFallsBackToDeepGroup) {
  auto config = parse_config(R"(
    model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a", "b"] group_type: DEEP }
      deepfm { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} }
    })");
  torch::manual_seed(3);
  DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(testing::ab_price_batch());
  auto t = tables_of(model);
  auto p = dense_of(model);
  torch::NoGradGuard g;
  auto ea = pooled(t["a_emb"], kIdsA), eb = pooled(t["b_emb"], kIdsB);
  auto y_wide = pooled(t["a_emb_wide"], kIdsA).sum(1, true);
  EXPECT_EQ(t["a_emb_wide"].size(1), 4);  // default wide_embedding_dim
  auto y_deep = torch::relu(linear(torch::cat({ea, eb}, 1), p, "deep_mlp.mlp.0.perceptron.0"));
  auto y = y_wide + (ea * eb).sum(1, true) + linear(y_deep, p, "output_mlp");
  EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5));
}

void expect_error_with(const std::string& text, const std::string& fragment, bool not_supported = false) {
  auto config = parse_config(text);
  try {
    DeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
    ADD_FAILURE() << "no error, expected " << fragment;
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(not_supported) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  } catch (const ConfigError& e) {
    EXPECT_FALSE(not_supported) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(DeepFM, ConfigErrors) {
  expect_error_with(R"(model_config {
      feature_groups { group_name: "deep" feature_names: ["a"] }
      deepfm { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} } })",
                    "DeepFM needs a feature group named 'wide'");
  // FM over the deep group, which mixes dims 2 and 1.
  expect_error_with(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a", "price"] }
      deepfm { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} } })",
                    "model_config.feature_groups[1].feature_names[1]: FM needs sparse features with equal embedding_dim, 'price' "
                    "is dense");
  expect_error_with(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a"] }
      deepfm { deep { } }
      losses { binary_cross_entropy {} } })",
                    "model_config.deepfm.deep.hidden_units: must not be empty");
  expect_error_with(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a"] }
      deepfm { deep { hidden_units: [3] } }
      losses { softmax_cross_entropy {} } })",
                    "model_config.losses[0].softmax_cross_entropy: needs model_config.num_class > 1");
  expect_error_with(R"(model_config {
      feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
      feature_groups { group_name: "seq" feature_names: ["a"] group_type: JAGGED_SEQUENCE }
      deepfm { deep { hidden_units: [3] } }
      losses { binary_cross_entropy {} } })",
                    "model_config.feature_groups[1].group_type: group 'seq' is JAGGED_SEQUENCE");
}

}  // namespace deepfm_test
}  // namespace tzrec::models
