// Sequence encoders of DEEP groups (sequence_groups / sequence_encoders) in models: the state-dict
// names of TorchEasyRec's EmbeddingGroup ("embedding_group._group_name_to_seq_encoders.<group>.<i>"),
// the group's tensor = its pooled features followed by the encoders' outputs (recomputed here from
// the model's own tables: PoolingEncoder's sum, SimpleAttention's softmax(s·q)-weighted sum), the
// variational dropout covering encoder outputs as TorchEasyRec's group_feature_dims do, and the
// config errors of the factory.
#include "models/sequence_encoders.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace sequence_encoders_test {

using testing::keys_of;
using testing::parse_config;

std::vector<feature::FeatureInfo> features() { return testing::history_features(); }
sparse::Batch make_batch() { return testing::history_batch(); }

std::string multi_tower(const std::string& encoders, const std::string& extra = "") {
  return R"(data_config { label_fields: "clk" }
    model_config {
      feature_groups {
        group_name: "deep" feature_names: ["u"] group_type: DEEP
        sequence_groups { group_name: "seq" feature_names: ["u", "s__i"] }
        )" + encoders + R"(
      }
      multi_tower { towers { input: "deep" mlp { hidden_units: [3] } } }
      losses { binary_cross_entropy {} }
      )" + extra + "\n}";
}

TEST(SequenceEncoders, PoolingAndSimpleAttentionAppendedToTheDeepGroup) {
  auto config = parse_config(multi_tower(R"(sequence_encoders { pooling_encoder { input: "seq" pooling_type: "sum" } }
                                            sequence_encoders { simple_attention { } })"));
  std::shared_ptr<Model> model = create_model(config, features());
  EXPECT_EQ(model->embedding_group()->group_total_dim("deep"), 2 + 2 + 2);
  std::vector<std::string> tables;
  for (const auto& t : model->embedding_tables()) tables.push_back(t.name);
  EXPECT_EQ(tables, (std::vector<std::string>{"u_emb", "sequence.u_emb", "sequence.s__i_emb"}));

  auto w = testing::tables_of(*model);
  auto grouped = model->embedding_group()->forward(make_batch());
  torch::Tensor u = w["u_emb"].detach().index_select(0, torch::tensor({1, 3}));
  torch::Tensor q = w["sequence.u_emb"].detach().index_select(0, torch::tensor({1, 3}));
  torch::Tensor items = w["sequence.s__i_emb"].detach();
  // Row 0 attends over items 2 and 4; row 1 has no history (sum 0, attention 0).
  torch::Tensor sum0 = items[2] + items[4];
  torch::Tensor a = torch::softmax(torch::stack({items[2].dot(q[0]), items[4].dot(q[0])}), 0);
  torch::Tensor att0 = a[0] * items[2] + a[1] * items[4];
  torch::Tensor want = torch::stack({torch::cat({u[0], sum0, att0}), torch::cat({u[1], torch::zeros({4})})});
  EXPECT_TRUE(torch::allclose(grouped.at("deep"), want, 1e-6, 1e-6)) << grouped.at("deep") << want;
}

TEST(SequenceEncoders, DBMTLHasSequenceStateDictAndVariationalDropout) {
  // A fixed seed: with some initial weights every unit of the tiny attention MLP is inactive for
  // this batch and the encoder's gradient is zero.
  torch::manual_seed(5);
  auto config = parse_config(R"(data_config { label_fields: ["clk", "buy"] }
    model_config {
      feature_groups {
        group_name: "all" feature_names: ["u"] group_type: DEEP
        sequence_groups { group_name: "click_seq" feature_names: ["u", "s__i"] }
        sequence_encoders { din_encoder { attn_mlp { hidden_units: [4] } } }
      }
      dbmtl {
        task_towers { tower_name: "ctr" label_name: "clk" losses { binary_cross_entropy {} } }
        task_towers { tower_name: "cvr" label_name: "buy" losses { binary_cross_entropy {} } }
      }
      variational_dropout { regularization_lambda: 0.01 }
    })");
  std::shared_ptr<Model> model = create_model(config, features());
  std::vector<std::string> names = keys_of(model->dense_parameters());
  auto has = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  EXPECT_TRUE(has("embedding_group._group_name_to_seq_encoders.all.0.mlp.mlp.0.perceptron.0.weight"));
  EXPECT_TRUE(has("embedding_group._group_name_to_seq_encoders.all.0.linear.weight"));
  // One dropout probability per feature of the group, the encoder's output counting as one.
  auto dense = testing::dense_of(*model);
  ASSERT_TRUE(dense.count("group_variational_dropouts.all.feature_p"));
  EXPECT_EQ(dense["group_variational_dropouts.all.feature_p"].sizes(), (std::vector<int64_t>{2}));

  sparse::Batch batch = make_batch();
  model->train();
  TensorMap predictions = model->predict(batch);
  model->total_loss(model->loss(predictions, batch)).backward();
  const torch::Tensor& g = dense["embedding_group._group_name_to_seq_encoders.all.0.linear.weight"].grad();
  ASSERT_TRUE(g.defined());
  EXPECT_GT(g.abs().sum().item<double>(), 0.0);
}

TEST(SequenceEncoders, ConfigErrors) {
  auto error = [](const std::string& text) {
    return testing::error_of([&] { create_model(parse_config(text), features()); });
  };
  const std::string p = "model_config.feature_groups[0].sequence_encoders[0]";
  EXPECT_EQ(error(multi_tower("sequence_encoders { }")),
            p + ": set one sequence encoder (din_encoder, simple_attention, pooling_encoder, multi_window_din_encoder, "
                "self_attention_encoder)");
  EXPECT_EQ(error(multi_tower("sequence_encoders { din_encoder { } }")),
            p + ".din_encoder.attn_mlp: required, e.g. attn_mlp { hidden_units: [64] }");
  EXPECT_EQ(error(multi_tower(R"(sequence_encoders { pooling_encoder { pooling_type: "max" } })")).rfind(
                p + ".pooling_encoder", 0),
            0u);
  EXPECT_EQ(error(multi_tower(R"(sequence_encoders { din_encoder { input: "other" attn_mlp { hidden_units: [4] } } })")),
            p + ".input: 'other' is not a sequence group of group 'deep'; use one of: seq");
}

}  // namespace sequence_encoders_test
}  // namespace tzrec::models
