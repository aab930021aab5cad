// MultiTowerDIN: parameter names as TorchEasyRec's, and its prediction recomputed by hand from its
// own tables and weights — the DEEP tower, the DIN attention of TorchEasyRec's DINEncoder
// (attention MLP over [q, s, q − s, q · s], softmax over the valid steps, weighted sum; an empty
// history gives zeros), final MLP and output layer.
#include "models/rank/multi_tower_din.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace multi_tower_din_test {

using testing::keys_of;
using testing::parse_config;

const char* kConfig = R"pb(
  data_config { label_fields: "clk" }
  model_config {
    feature_groups { group_name: "deep" feature_names: ["u"] group_type: DEEP }
    feature_groups { group_name: "seq" feature_names: ["u", "s__i"] group_type: SEQUENCE }
    multi_tower_din {
      towers { input: "deep" mlp { hidden_units: [3] } }
      din_towers { input: "seq" attn_mlp { hidden_units: [4] } }
      final { hidden_units: [2] }
    }
    losses { binary_cross_entropy {} }
  })pb";

std::vector<feature::FeatureInfo> features() { return testing::history_features(); }
sparse::Batch make_batch() { return testing::history_batch(); }

TEST(MultiTowerDIN, ParameterNamesAsTorchEasyRec) {
  auto config = parse_config(kConfig);
  MultiTowerDIN model(config.model_config(), features(), {"clk"}, {});
  EXPECT_EQ(keys_of(model.dense_parameters()),
            (std::vector<std::string>{"towers.deep.mlp.0.perceptron.0.weight", "towers.deep.mlp.0.perceptron.0.bias",
                                      "din_towers.0.mlp.mlp.0.perceptron.0.weight",
                                      "din_towers.0.mlp.mlp.0.perceptron.0.bias", "din_towers.0.linear.weight",
                                      "din_towers.0.linear.bias", "final_mlp.mlp.0.perceptron.0.weight",
                                      "final_mlp.mlp.0.perceptron.0.bias", "output_mlp.weight", "output_mlp.bias"}));
  std::vector<std::string> tables;
  for (const auto& t : model.embedding_tables()) tables.push_back(t.name);
  // The query feature "u" has its own table in the SEQUENCE group, as in TorchEasyRec.
  EXPECT_EQ(tables, (std::vector<std::string>{"u_emb", "sequence.u_emb", "sequence.s__i_emb"}));
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters()) {
    if (item.key().rfind("embedding_group.", 0) == 0) names.push_back(item.key());
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"embedding_group.emb_impls.__BASE__.ebc.embedding_bags.u_emb.weight",
                                      "embedding_group.seq_emb_impls.__BASE__.ec_dict.2.embeddings.u_emb.weight",
                                      "embedding_group.seq_emb_impls.__BASE__.ec_dict.2.embeddings.s__i_emb.weight"}));
}

TEST(MultiTowerDIN, PredictionByHand) {
  auto config = parse_config(kConfig);
  torch::manual_seed(3);
  MultiTowerDIN model(config.model_config(), features(), {"clk"}, {});
  model.eval();
  auto pred = model.predict(make_batch());
  std::map<std::string, torch::Tensor> t, p;
  for (const auto& tb : model.embedding_tables()) t[tb.name] = tb.weight.detach();
  for (const auto& [k, v] : model.dense_parameters()) p[k] = v.detach();
  auto lin = [&](const torch::Tensor& x, const std::string& prefix) {
    return torch::matmul(x, p[prefix + ".weight"].t()) + p[prefix + ".bias"];
  };
  torch::NoGradGuard no_grad;
  torch::Tensor deep = torch::relu(lin(torch::stack({t["u_emb"][1], t["u_emb"][3]}), "towers.deep.mlp.0.perceptron.0"));
  // DIN, row 0: q = the SEQUENCE table's row of u = 1; steps s__i 2 and 4. Row 1 has no history: 0.
  torch::Tensor q = t["sequence.u_emb"][1];
  std::vector<torch::Tensor> scores;
  for (int64_t id : {2, 4}) {
    torch::Tensor s = t["sequence.s__i_emb"][id];
    torch::Tensor h = torch::relu(lin(torch::cat({q, s, q - s, q * s}).unsqueeze(0), "din_towers.0.mlp.mlp.0.perceptron.0"));
    scores.push_back(lin(h, "din_towers.0.linear").squeeze());
  }
  torch::Tensor w = torch::softmax(torch::stack(scores), 0);
  torch::Tensor din0 = w[0] * t["sequence.s__i_emb"][2] + w[1] * t["sequence.s__i_emb"][4];
  torch::Tensor din = torch::stack({din0, torch::zeros({2})});
  torch::Tensor y = lin(torch::relu(lin(torch::cat({deep, din}, 1), "final_mlp.mlp.0.perceptron.0")), "output_mlp");
  EXPECT_TRUE(torch::allclose(pred["logits"], y.squeeze(1), 1e-5, 1e-5)) << pred["logits"] << "\n" << y;
}

TEST(MultiTowerDIN, GradientsReachEveryParameter) {
  // A fixed seed: with some initial weights every ReLU unit of the tiny towers is inactive for this
  // batch and their gradients are zero.
  torch::manual_seed(3);
  auto config = parse_config(kConfig);
  MultiTowerDIN model(config.model_config(), features(), {"clk"}, {});
  model.train();
  auto batch = make_batch();
  model.total_loss(model.loss(model.predict(batch), batch)).backward();
  testing::expect_gradients_everywhere(model);
}

TEST(MultiTowerDIN, ConfigErrors) {
  auto err = [](const std::string& body) {
    auto config = parse_config(R"(model_config {
        feature_groups { group_name: "deep" feature_names: ["u"] }
        feature_groups { group_name: "seq" feature_names: ["u", "s__i"] group_type: SEQUENCE }
        multi_tower_din { )" + body + R"( }
        losses { binary_cross_entropy {} } })");
    return testing::error_of([&] { MultiTowerDIN model(config.model_config(), features(), {"clk"}, {}); });
  };
  EXPECT_EQ(err(R"(din_towers { input: "deep" attn_mlp { hidden_units: [4] } })"),
            "model_config.multi_tower_din.din_towers[0].input: 'deep' is not a SEQUENCE feature group; a DIN tower "
            "attends over a group with group_type: SEQUENCE");
  EXPECT_EQ(err(R"(din_towers { input: "seq" })"),
            "model_config.multi_tower_din.din_towers[0].attn_mlp: required, e.g. attn_mlp { hidden_units: [64] }");
  EXPECT_EQ(err(""), "model_config.multi_tower_din: needs at least one tower or din_tower");
  EXPECT_EQ(err(R"(towers { input: "seq" mlp { hidden_units: [4] } })"),
            "model_config.multi_tower_din.towers[0].input: unknown feature group 'seq'");
}

}  // namespace multi_tower_din_test
}  // namespace tzrec::models
