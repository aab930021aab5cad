// TDM: parameter names as TorchEasyRec's (multiwindow_din, deep_mlp, output_mlp), its prediction
// recomputed with plain ops from its own tables and weights (the multi-window attention as
// nn/multi_window_din_encoder.h defines it), and its config errors.
#include "models/rank/tdm.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace tdm_test {

using testing::keys_of;
using testing::parse_config;

const char* kConfig = R"pb(
  data_config { label_fields: "clk" }
  model_config {
    feature_groups { group_name: "seq" feature_names: ["u", "s__i"] group_type: SEQUENCE }
    feature_groups { group_name: "deep" feature_names: ["u"] group_type: DEEP }
    tdm {
      multiwindow_din { windows_len: [1, 2] attn_mlp { hidden_units: [4] } }
      final { hidden_units: [3] }
    }
    num_class: 2
    losses { softmax_cross_entropy {} }
  })pb";

std::vector<feature::FeatureInfo> features() { return testing::history_features(); }

TEST(TDM, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(kConfig);
  TDM model(config.model_config(), features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"multiwindow_din.mlp.mlp.0.perceptron.0.weight",
                                      "multiwindow_din.mlp.mlp.0.perceptron.0.bias", "multiwindow_din.linear.weight",
                                      "multiwindow_din.linear.bias", "multiwindow_din.active.weight",
                                      "deep_mlp.mlp.0.perceptron.0.weight", "deep_mlp.mlp.0.perceptron.0.bias",
                                      "output_mlp.weight", "output_mlp.bias"}));
  std::vector<std::string> buffers;
  for (const auto& b : model.named_buffers()) buffers.push_back(b.key());
  EXPECT_NE(std::find(buffers.begin(), buffers.end(), "multiwindow_din.windows_len"), buffers.end());
}

TEST(TDM, PredictionByHand) {
  auto config = parse_config(kConfig);
  torch::manual_seed(5);
  TDM model(config.model_config(), features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(testing::history_batch());
  auto t = testing::tables_of(model);
  auto p = testing::dense_of(model);
  torch::NoGradGuard no_grad;
  auto lin = [&](const torch::Tensor& x, const std::string& prefix) {
    return torch::matmul(x, p[prefix + ".weight"].t()) + p[prefix + ".bias"];
  };
  // Row 0: query u = 1 (the SEQUENCE group's own table), history s__i = [2, 4]; row 1: u = 3, no history.
  const float slope = p["multiwindow_din.active.weight"].item<float>();
  auto attn = [&](const torch::Tensor& q, const torch::Tensor& s) {
    torch::Tensor h = torch::relu(lin(torch::cat({s, q * s, q}).unsqueeze(0), "multiwindow_din.mlp.mlp.0.perceptron.0"));
    torch::Tensor a = lin(h, "multiwindow_din.linear").squeeze();
    return a.item<float>() >= 0 ? a : a * slope;
  };
  torch::Tensor q0 = t["sequence.u_emb"][1];
  torch::Tensor s0 = t["sequence.s__i_emb"][2], s1 = t["sequence.s__i_emb"][4];
  // windows [1, 2]: window 0 = step 0 (divisor 1), window 1 = steps 1..2 of which the row has one (divisor 1).
  torch::Tensor mw0 = torch::cat({attn(q0, s0) * s0, attn(q0, s1) * s1, q0});
  torch::Tensor mw1 = torch::cat({torch::zeros({4}), t["sequence.u_emb"][3]});
  torch::Tensor deep = torch::stack({t["u_emb"][1], t["u_emb"][3]});
  torch::Tensor x = torch::cat({torch::stack({mw0, mw1}), deep}, 1);
  torch::Tensor y = lin(torch::relu(lin(x, "deep_mlp.mlp.0.perceptron.0")), "output_mlp");
  EXPECT_TRUE(torch::allclose(pred["logits"], y, 1e-5, 1e-5)) << pred["logits"] << "\n" << y;
}

// The embedding package (TorchEasyRec's TDMEmbedding): the query feature u as a DEEP group named
// "seq" predicts item_emb = u's row; with the scorer's SEQUENCE table copied in (as export does)
// it equals the query the scorer's encoder reads.
TEST(TDM, EmbeddingPackagePredictsTheQuery) {
  auto config = parse_config(R"pb(
    data_config { label_fields: "clk" }
    model_config {
      feature_groups { group_name: "seq" feature_names: ["u"] group_type: DEEP }
      tdm {
        multiwindow_din { windows_len: [1, 2] attn_mlp { hidden_units: [4] } }
        final { hidden_units: [3] }
      }
      num_class: 2
      losses { softmax_cross_entropy {} }
    })pb");
  TDM embedding(config.model_config(), features(), {"clk"}, {}, TDM::kEmbeddingTower);
  EXPECT_TRUE(embedding.dense_parameters().empty());
  EXPECT_EQ(embedding.embeddings().parameter_name_of("u_emb"),
            "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight");
  auto scorer_config = parse_config(kConfig);
  TDM scorer(scorer_config.model_config(), features(), {"clk"}, {});
  torch::NoGradGuard no_grad;
  testing::tables_of(embedding)["u_emb"].copy_(testing::tables_of(scorer)["sequence.u_emb"]);
  embedding.eval();
  auto pred = embedding.predict(testing::history_batch());
  ASSERT_EQ(pred.size(), 1u);
  ASSERT_EQ(pred.count("item_emb"), 1u);
  const torch::Tensor q = testing::tables_of(scorer)["sequence.u_emb"];
  EXPECT_TRUE(torch::equal(pred["item_emb"], torch::stack({q[1], q[3]})));
  EXPECT_NE(testing::error_of([&] { TDM bad(config.model_config(), features(), {"clk"}, {}, "user_tower"); })
                .find("not 'user_tower'"),
            std::string::npos);
}

TEST(TDM, ConfigErrors) {
  auto err = [](const std::string& groups, const std::string& body) {
    auto config = parse_config(R"(model_config { )" + groups + R"( tdm { )" + body + R"( }
        num_class: 2 losses { softmax_cross_entropy {} } })");
    return testing::error_of([&] { TDM model(config.model_config(), features(), {"clk"}, {}); });
  };
  const std::string seq = R"(feature_groups { group_name: "seq" feature_names: ["u", "s__i"] group_type: SEQUENCE })";
  const std::string mw = R"(multiwindow_din { windows_len: [1] attn_mlp { hidden_units: [4] } })";
  EXPECT_EQ(err(R"(feature_groups { group_name: "deep" feature_names: ["u"] })", mw + " final { hidden_units: [2] }"),
            "model_config.feature_groups: tdm needs a feature group with group_type: SEQUENCE (the tree node's item "
            "features and the user's history)");
  EXPECT_EQ(err(seq, "final { hidden_units: [2] }"),
            "model_config.tdm.multiwindow_din: required, e.g. multiwindow_din { windows_len: [1, 2, 5] attn_mlp { "
            "hidden_units: [36] } }");
  EXPECT_EQ(err(seq, mw), "model_config.tdm.final: required, e.g. final { hidden_units: [64, 32] }");
  EXPECT_NE(err(seq, R"(multiwindow_din { attn_mlp { hidden_units: [4] } } final { hidden_units: [2] })")
                .find("model_config.tdm.multiwindow_din.windows_len"),
            std::string::npos);
}

}  // namespace tdm_test
}  // namespace tzrec::models
