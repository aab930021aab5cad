// xDeepFM: predictions against the formula written with plain libtorch ops on a real batch (CIN
// as TorchEasyRec's einsum + Conv1d over the wide embeddings, deep MLP, final MLP, output),
// state-dict names, gradients and config errors.
#include "models/rank/xdeepfm.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace xdeepfm_test {

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

// Groups: wide [a, b] (WIDE, wide_embedding_dim 3), deep [a, b, price].
std::string config_text(const std::string& extra = "wide_embedding_dim: 3") {
  return R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "wide" feature_names: ["a", "b"] group_type: WIDE }
      feature_groups { group_name: "deep" feature_names: ["a", "b", "price"] group_type: DEEP }
      xdeepfm {
        cin { cin_layer_size: [4, 2] }
        deep { hidden_units: [5, 3] }
        final { hidden_units: [2] }
        )" + extra + R"(
      }
      losses { binary_cross_entropy {} }
    })";
}

TEST(XDeepFM, ForwardMatchesPlainOps) {
  torch::manual_seed(7);
  auto config = parse_config(config_text());
  XDeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(testing::ab_price_batch());

  auto t = tables_of(model);
  auto p = dense_of(model);
  torch::NoGradGuard g;
  // CIN over [B, F=2, 3]: x_{k+1} = conv1d(einsum("bhd,bfd->bhfd", x_k, x_0) as [B, H·F, 3]).
  auto x0 = torch::stack({pooled(t["a_emb_wide"], kIdsA), pooled(t["b_emb_wide"], kIdsB)}, 1);
  auto x = x0;
  std::vector<torch::Tensor> cin_out;
  for (int k = 0; k < 2; ++k) {
    auto z = torch::einsum("bhd,bfd->bhfd", {x, x0}).reshape({3, -1, 3});
    const std::string pre = "cin.cin_layers." + std::to_string(k);
    x = torch::conv1d(z, p[pre + ".weight"], p[pre + ".bias"]);
    cin_out.push_back(x.sum(2));
  }
  auto y_cin = torch::cat(cin_out, 1);  // [3, 6]
  auto deep_in = torch::cat({pooled(t["a_emb"], kIdsA), pooled(t["b_emb"], kIdsB),
                             torch::tensor({{0.5f}, {1.0f}, {-2.0f}})}, 1);
  auto y_deep = torch::relu(linear(torch::relu(linear(deep_in, p, "deep.mlp.0.perceptron.0")), p,
                                   "deep.mlp.1.perceptron.0"));  // [3, 3]
  auto f = torch::relu(linear(torch::cat({y_cin, y_deep}, 1), p, "final.mlp.0.perceptron.0"));
  auto y = linear(f, p, "output_mlp").squeeze(1);
  EXPECT_TRUE(torch::allclose(pred.at("logits"), y, 1e-5, 1e-5)) << pred.at("logits") << y;
  EXPECT_TRUE(torch::allclose(pred.at("probs"), torch::sigmoid(y), 1e-5, 1e-5));
}

TEST(XDeepFM, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text());
  XDeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"deep.mlp.0.perceptron.0.weight", "deep.mlp.0.perceptron.0.bias",
                                      "deep.mlp.1.perceptron.0.weight", "deep.mlp.1.perceptron.0.bias",
                                      "cin.cin_layers.0.weight", "cin.cin_layers.0.bias", "cin.cin_layers.1.weight",
                                      "cin.cin_layers.1.bias", "final.mlp.0.perceptron.0.weight",
                                      "final.mlp.0.perceptron.0.bias", "output_mlp.weight", "output_mlp.bias"}));
  auto p = dense_of(model);
  EXPECT_EQ(p["cin.cin_layers.0.weight"].sizes(), (std::vector<int64_t>{4, 4, 1}));  // F·F = 4 channels
  EXPECT_EQ(p["cin.cin_layers.1.weight"].sizes(), (std::vector<int64_t>{2, 8, 1}));  // F·4
  EXPECT_EQ(p["final.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 3 + 6}));
  EXPECT_EQ(tables_of(model)["a_emb_wide"].sizes(), (std::vector<int64_t>{5, 3}));
}

TEST(XDeepFM, DefaultWideEmbeddingDimIs16) {
  auto config = parse_config(config_text(""));
  XDeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(tables_of(model)["b_emb_wide"].sizes(), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(model.predict(testing::ab_price_batch()).at("logits").sizes(), (std::vector<int64_t>{3}));
}

TEST(XDeepFM, GradientsReachEveryParameter) {
  torch::manual_seed(5);
  auto config = parse_config(config_text());
  XDeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.train();
  auto batch = testing::ab_price_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(XDeepFM, ConfigErrors) {
  auto err = [](const std::string& model_body) {
    auto config = parse_config("model_config { " + model_body + " losses { binary_cross_entropy {} } }");
    return error_of([&] { XDeepFM model(config.model_config(), testing::ab_price_features(), {"clk"}, {}); });
  };
  const std::string groups = R"(feature_groups { group_name: "wide" feature_names: ["a", "b"] group_type: WIDE }
                                feature_groups { group_name: "deep" feature_names: ["a"] } )";
  EXPECT_EQ(err(R"(feature_groups { group_name: "deep" feature_names: ["a"] }
                   xdeepfm { cin { cin_layer_size: [2] } deep { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups: xDeepFM needs a feature group named 'wide' (group_type: WIDE)");
  EXPECT_EQ(err(R"(feature_groups { group_name: "wide" feature_names: ["a"] group_type: WIDE }
                   xdeepfm { cin { cin_layer_size: [2] } deep { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups: xDeepFM needs a feature group named 'deep' (group_type: DEEP)");
  EXPECT_EQ(err(R"(feature_groups { group_name: "wide" feature_names: ["a", "b"] }
                   feature_groups { group_name: "deep" feature_names: ["a"] }
                   xdeepfm { cin { cin_layer_size: [2] } deep { hidden_units: [3] } final { hidden_units: [2] } })"),
            "model_config.feature_groups[0].group_type: xDeepFM group 'wide' must be WIDE");
  EXPECT_EQ(err(groups + "xdeepfm { cin { } deep { hidden_units: [3] } final { hidden_units: [2] } }"),
            "model_config.xdeepfm.cin.cin_layer_size: needs at least one layer, e.g. cin_layer_size: [64, 64]");
  EXPECT_EQ(err(groups + "xdeepfm { cin { cin_layer_size: [2, 0] } deep { hidden_units: [3] } final { hidden_units: [2] } }"),
            "model_config.xdeepfm.cin.cin_layer_size[1]: must be > 0, got 0");
  EXPECT_EQ(err(groups + "xdeepfm { cin { cin_layer_size: [2] } final { hidden_units: [2] } }"),
            "model_config.xdeepfm.deep: required");
  EXPECT_EQ(err(groups + "xdeepfm { cin { cin_layer_size: [2] } deep { hidden_units: [3] } }"),
            "model_config.xdeepfm.final: required");
}

TEST(XDeepFM, CreatedByTheFactory) {
  auto model = create_model(parse_config(config_text()), testing::ab_price_features());
  EXPECT_NE(std::dynamic_pointer_cast<XDeepFM>(model), nullptr);
}

}  // namespace xdeepfm_test
}  // namespace tzrec::models
