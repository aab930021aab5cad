// DCNV1: predictions against plain libtorch ops, TorchEasyRec's parameter names, config errors,
// gradients.
#include "models/rank/dcn_v1.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dcn_v1_test {

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

// First group "all" = [a, b, price] (d = 5); a second group the model must ignore.
std::string config_text(const std::string& dcn = R"(
        cross { cross_num: 2 }
        deep { hidden_units: [4, 3] }
        final { hidden_units: [2] })",
                        const std::string& extra = "losses { binary_cross_entropy {} } metrics { auc {} }") {
  return R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "price"] group_type: DEEP }
      feature_groups { group_name: "other" feature_names: ["b"] group_type: DEEP }
      dcn_v1 {)" + dcn + R"(}
      )" + extra + "\n    }";
}

// Random weights (non-zero cross biases); the reference is DCN v1 written with plain ops:
//   x_{l+1} = (x_l · w_l) x_0 + b_l + x_l; logits = W_out final(cat[x_L, deep(x_0)]).
TEST(DCNV1, ForwardMatchesPlainOps) {
  torch::manual_seed(21);
  auto config = parse_config(config_text());
  DCNV1 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.eval();
  {
    torch::NoGradGuard g;
    for (auto& [name, p] : model.dense_parameters()) {
      if (name.rfind("cross.b.", 0) == 0) p.normal_();
    }
  }
  auto pred = model.predict(testing::ab_price_batch());
  ASSERT_EQ(pred.size(), 2u);

  auto t = tables_of(model);
  auto p = dense_of(model);
  torch::NoGradGuard g;
  auto x0 = torch::cat({pooled(t["a_emb"], kIdsA), pooled(t["b_emb"], kIdsB),
                        torch::tensor({{0.5f}, {1.0f}, {-2.0f}})},
                       1);  // [3, 5]
  auto xl = x0;
  for (const char* l : {"0", "1"}) {
    auto s = torch::matmul(xl, p[std::string("cross.w.") + l + ".weight"].t());  // [3, 1]
    xl = s * x0 + p[std::string("cross.b.") + l] + xl;
  }
  auto h = torch::relu(linear(x0, p, "deep.mlp.0.perceptron.0"));
  auto deep = torch::relu(linear(h, p, "deep.mlp.1.perceptron.0"));  // [3, 3]
  auto f = torch::relu(linear(torch::cat({xl, deep}, 1), p, "final_dnn.mlp.0.perceptron.0"));
  auto y = torch::matmul(f, p["output_linear.weight"].t());  // no bias
  EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5)) << pred["logits"] << "\n" << y;
  EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(y.squeeze(1)), 1e-5, 1e-5));
}

// The same through the model's own submodules (child<M>).
TEST(DCNV1, ForwardIsTheCompositionOfItsSubmodules) {
  torch::manual_seed(22);
  auto config = parse_config(config_text());
  auto model = std::make_shared<DCNV1>(config.model_config(), testing::ab_price_features(), std::vector<std::string>{"clk"},
                                       std::vector<std::string>{});
  model->eval();
  auto batch = testing::ab_price_batch();
  auto pred = model->predict(batch);
  torch::NoGradGuard g;
  auto x = model->embedding_group()->forward(batch).at("all");
  auto cross = testing::child<nn::CrossImpl>(*model, "cross")->forward(x);
  auto deep = testing::child<nn::MLPImpl>(*model, "deep")->forward(x);
  auto f = testing::child<nn::MLPImpl>(*model, "final_dnn")->forward(torch::cat({cross, deep}, 1));
  auto y = testing::child<torch::nn::LinearImpl>(*model, "output_linear")->forward(f);
  EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-6, 1e-6));
}

TEST(DCNV1, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text());
  DCNV1 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"cross.w.0.weight", "cross.w.1.weight", "cross.b.0", "cross.b.1",
                                      "deep.mlp.0.perceptron.0.weight", "deep.mlp.0.perceptron.0.bias",
                                      "deep.mlp.1.perceptron.0.weight", "deep.mlp.1.perceptron.0.bias",
                                      "final_dnn.mlp.0.perceptron.0.weight", "final_dnn.mlp.0.perceptron.0.bias",
                                      "output_linear.weight"}));
  auto p = dense_of(model);
  EXPECT_EQ(p["cross.w.1.weight"].sizes(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(p["cross.b.0"].sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(p["deep.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(p["final_dnn.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 5 + 3}));
  EXPECT_EQ(p["output_linear.weight"].sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p["cross.b.1"].abs().sum().item<double>(), 0.0);  // zeros init, as tzrec
}

// num_class 2 with softmax: logits [B, 2], probs, probs1; every parameter gets a gradient.
TEST(DCNV1, MultiClassAndGradients) {
  torch::manual_seed(23);
  auto config = parse_config(config_text(R"(
        cross { }
        deep { hidden_units: [4] }
        final { hidden_units: [3] })",
                                         "num_class: 2 losses { softmax_cross_entropy {} }"));
  // tanh instead of ReLU: no dead unit can stop a gradient.
  config.mutable_model_config()->mutable_dcn_v1()->mutable_deep()->set_activation("nn.Tanh");
  config.mutable_model_config()->mutable_dcn_v1()->mutable_final()->set_activation("nn.Tanh");
  DCNV1 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(dense_of(model).count("cross.w.2.weight"), 1u);  // default cross_num 3
  EXPECT_EQ(dense_of(model)["output_linear.weight"].sizes(), (std::vector<int64_t>{2, 3}));
  model.train();
  auto batch = testing::ab_price_batch();
  auto pred = model.predict(batch);
  EXPECT_EQ(pred.at("logits").sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(pred.at("probs1").sizes(), (std::vector<int64_t>{3}));
  model.total_loss(model.loss(pred, batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(DCNV1, ConfigErrors) {
  auto err = [](const std::string& text) {
    auto config = parse_config(text);
    return error_of([&] { DCNV1 model(config.model_config(), testing::ab_price_features(), {"clk"}, {}); });
  };
  EXPECT_EQ(err(R"(model_config {
      dcn_v1 { cross {} deep { hidden_units: [3] } final { hidden_units: [2] } }
      losses { binary_cross_entropy {} } })"),
            "model_config.feature_groups: DCNV1 needs a feature group (it uses the first one)");
  EXPECT_EQ(err(config_text(R"(cross { cross_num: 0 } deep { hidden_units: [3] } final { hidden_units: [2] })")),
            "model_config.dcn_v1.cross.cross_num: must be >= 1, got 0");
  EXPECT_EQ(err(config_text(R"(cross { } deep { hidden_units: [3] })")), "model_config.dcn_v1.final: required");
  EXPECT_EQ(err(config_text(R"(deep { hidden_units: [3] } final { hidden_units: [2] })")),
            "model_config.dcn_v1.cross: required");
  EXPECT_EQ(err(config_text(
                R"(cross { } deep { hidden_units: [3] dropout_ratio: [0.1, 0.2] } final { hidden_units: [2] })")),
            "model_config.dcn_v1.deep.dropout_ratio: has 2 values; give 0, 1 or one per hidden unit (1)");
  EXPECT_EQ(err(config_text(
                    R"(cross { } deep { hidden_units: [3] } final { hidden_units: [2] activation: "nn.Nope" })"))
                .rfind("model_config.dcn_v1.final.activation: ", 0),
            0u);
}

}  // namespace dcn_v1_test
}  // namespace tzrec::models
