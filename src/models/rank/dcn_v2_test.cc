// DCNV2: predictions against plain libtorch ops (with and without backbone / deep), TorchEasyRec's
// parameter names, config errors, gradients.
#include "models/rank/dcn_v2.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dcn_v2_test {

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
std::string config_text(const std::string& dcn) {
  return R"(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "all" feature_names: ["a", "b", "price"] group_type: DEEP }
      feature_groups { group_name: "other" feature_names: ["b"] group_type: DEEP }
      dcn_v2 {)" + dcn + R"(}
      losses { binary_cross_entropy {} }
      metrics { auc {} }
    })";
}

std::string dcn_body(bool backbone, bool deep) {
  return std::string(backbone ? "backbone { hidden_units: [6] }" : "") +
         " cross { cross_num: 2 low_rank: 3 } " + (deep ? "deep { hidden_units: [4] }" : "") +
         " final { hidden_units: [2] }";
}

// Random weights; the reference is DCN v2 written with plain ops, for every combination of the
// optional backbone and deep MLPs:
//   h = backbone(x) | x;  h_{l+1} = h_0 * (V_l U_l h_l + c_l) + h_l;  net = cat[h_L, deep(x)] | h_L
//   logits = W_out final(net)
TEST(DCNV2, ForwardMatchesPlainOps) {
  for (bool backbone : {false, true}) {
    for (bool deep : {false, true}) {
      torch::manual_seed(31);
      auto config = parse_config(config_text(dcn_body(backbone, deep)));
      DCNV2 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
      model.eval();
      auto pred = model.predict(testing::ab_price_batch());

      auto t = tables_of(model);
      auto p = dense_of(model);
      torch::NoGradGuard g;
      auto x = torch::cat({pooled(t["a_emb"], kIdsA), pooled(t["b_emb"], kIdsB),
                           torch::tensor({{0.5f}, {1.0f}, {-2.0f}})},
                          1);  // [3, 5]
      auto h0 = backbone ? torch::relu(linear(x, p, "backbone.mlp.0.perceptron.0")) : x;
      auto hl = h0;
      for (const char* l : {"0", "1"}) {
        auto low = torch::matmul(hl, p[std::string("cross.u_kernels.") + l + ".weight"].t());  // [3, 3]
        hl = h0 * linear(low, p, std::string("cross.v_kernels.") + l) + hl;
      }
      auto net = deep ? torch::cat({hl, torch::relu(linear(x, p, "deep.mlp.0.perceptron.0"))}, 1) : hl;
      auto f = torch::relu(linear(net, p, "final.mlp.0.perceptron.0"));
      auto y = torch::matmul(f, p["output_mlp.weight"].t());  // no bias
      EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5))
          << "backbone=" << backbone << " deep=" << deep << "\n" << pred["logits"] << "\n" << y;
      EXPECT_TRUE(torch::allclose(pred["probs"], torch::sigmoid(y.squeeze(1)), 1e-5, 1e-5));
    }
  }
}

// The same through the model's own submodules (child<M>).
TEST(DCNV2, ForwardIsTheCompositionOfItsSubmodules) {
  torch::manual_seed(32);
  auto config = parse_config(config_text(dcn_body(true, true)));
  auto model = std::make_shared<DCNV2>(config.model_config(), testing::ab_price_features(), std::vector<std::string>{"clk"},
                                       std::vector<std::string>{});
  model->eval();
  auto batch = testing::ab_price_batch();
  auto pred = model->predict(batch);
  torch::NoGradGuard g;
  auto x = model->embedding_group()->forward(batch).at("all");
  auto cross = testing::child<nn::CrossV2Impl>(*model, "cross")->forward(
      testing::child<nn::MLPImpl>(*model, "backbone")->forward(x));
  auto deep = testing::child<nn::MLPImpl>(*model, "deep")->forward(x);
  auto f = testing::child<nn::MLPImpl>(*model, "final")->forward(torch::cat({cross, deep}, 1));
  auto y = testing::child<torch::nn::LinearImpl>(*model, "output_mlp")->forward(f);
  EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-6, 1e-6));
}

TEST(DCNV2, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(config_text(dcn_body(true, true)));
  DCNV2 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"backbone.mlp.0.perceptron.0.weight", "backbone.mlp.0.perceptron.0.bias",
                                      "cross.u_kernels.0.weight", "cross.u_kernels.1.weight",
                                      "cross.v_kernels.0.weight", "cross.v_kernels.0.bias",
                                      "cross.v_kernels.1.weight", "cross.v_kernels.1.bias",
                                      "deep.mlp.0.perceptron.0.weight", "deep.mlp.0.perceptron.0.bias",
                                      "final.mlp.0.perceptron.0.weight", "final.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight"}));
  auto p = dense_of(model);
  EXPECT_EQ(p["cross.u_kernels.0.weight"].sizes(), (std::vector<int64_t>{3, 6}));  // on the backbone's 6
  EXPECT_EQ(p["cross.v_kernels.1.weight"].sizes(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(p["deep.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{4, 5}));  // on the group's 5
  EXPECT_EQ(p["final.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 6 + 4}));
  EXPECT_EQ(p["output_mlp.weight"].sizes(), (std::vector<int64_t>{1, 2}));

  auto minimal = parse_config(config_text("cross { } final { hidden_units: [2] }"));
  DCNV2 small(minimal.model_config(), testing::ab_price_features(), {"clk"}, {});
  auto q = dense_of(small);
  EXPECT_EQ(q.size(), 3u * 3u + 2u + 1u);  // 3 cross layers (default) × (u, v, v bias), final, output
  EXPECT_EQ(q["cross.u_kernels.2.weight"].sizes(), (std::vector<int64_t>{32, 5}));  // default low_rank 32
  EXPECT_EQ(q["final.mlp.0.perceptron.0.weight"].sizes(), (std::vector<int64_t>{2, 5}));
}

TEST(DCNV2, GradientsReachEveryParameter) {
  torch::manual_seed(33);
  auto config = parse_config(config_text(dcn_body(true, true)));
  // tanh instead of ReLU: no dead unit can stop a gradient.
  for (auto* mlp : {config.mutable_model_config()->mutable_dcn_v2()->mutable_backbone(),
                    config.mutable_model_config()->mutable_dcn_v2()->mutable_deep(),
                    config.mutable_model_config()->mutable_dcn_v2()->mutable_final()}) {
    mlp->set_activation("nn.Tanh");
  }
  DCNV2 model(config.model_config(), testing::ab_price_features(), {"clk"}, {});
  model.train();
  auto batch = testing::ab_price_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(DCNV2, ConfigErrors) {
  auto err = [](const std::string& text) {
    auto config = parse_config(text);
    return error_of([&] { DCNV2 model(config.model_config(), testing::ab_price_features(), {"clk"}, {}); });
  };
  EXPECT_EQ(err(R"(model_config {
      dcn_v2 { cross {} final { hidden_units: [2] } }
      losses { binary_cross_entropy {} } })"),
            "model_config.feature_groups: DCNV2 needs a feature group (it uses the first one)");
  EXPECT_EQ(err(config_text("cross { cross_num: 0 } final { hidden_units: [2] }")),
            "model_config.dcn_v2.cross.cross_num: must be >= 1, got 0");
  EXPECT_EQ(err(config_text("cross { low_rank: 0 } final { hidden_units: [2] }")),
            "model_config.dcn_v2.cross.low_rank: must be >= 1, got 0");
  EXPECT_EQ(err(config_text("cross { }")), "model_config.dcn_v2.final: required");
  EXPECT_EQ(err(config_text("final { hidden_units: [2] }")), "model_config.dcn_v2.cross: required");
  EXPECT_EQ(err(config_text("backbone { } cross { } final { hidden_units: [2] }")),
            "model_config.dcn_v2.backbone.hidden_units: must not be empty");
  EXPECT_EQ(err(config_text(
                "cross { } deep { hidden_units: [3] use_bn: true use_ln: true } final { hidden_units: [2] }")),
            "model_config.dcn_v2.deep: use_bn and use_ln cannot both be true");
}

}  // namespace dcn_v2_test
}  // namespace tzrec::models
