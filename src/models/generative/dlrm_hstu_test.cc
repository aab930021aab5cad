// DlrmHSTU on a hand-built batch: TorchEasyRec's parameter names, predictions per candidate with
// the candidates per row (kTargetRepeatKey), task labels as bits of the list label, grouping keys
// repeated per candidate, gradients everywhere, and the config rules.
#include "models/generative/dlrm_hstu.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"

namespace tzrec::models {
namespace dlrm_hstu_test {

using testing::error_of;
using testing::make_kjt;
using testing::parse_config;

std::string config(const std::string& hstu_extra = "", const std::string& model_extra = "") {
  return R"pb(
  data_config { label_fields: ["cand_seq__action_weight", "cand_seq__watch_time"] }
  model_config {
    feature_groups { group_name: "contextual" feature_names: ["user_id", "user_level"] group_type: DEEP }
    feature_groups { group_name: "uih" feature_names: "uih_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate" feature_names: "cand_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_action" feature_names: "uih_seq__action_weight" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_timestamp" feature_names: "uih_seq__action_timestamp" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate_timestamp" feature_names: "cand_seq__query_time" group_type: JAGGED_SEQUENCE }
    dlrm_hstu {
      hstu {
        stu { embedding_dim: 8 num_heads: 2 hidden_dim: 4 attention_dim: 4 output_dropout_ratio: 0.0 }
        input_dropout_ratio: 0.0
        attn_num_layers: 2
        positional_encoder { num_position_buckets: 64 num_time_buckets: 16 use_time_encoding: true }
        input_preprocessor {
          contextual_preprocessor {
            action_encoder { simple_action_encoder { action_embedding_dim: 2 action_weights: [1, 2] } }
            action_mlp { simple_mlp { hidden_dim: 6 } }
            content_encoder { slice_content_encoder {} }
            content_mlp { simple_mlp { hidden_dim: 6 } }
          }
        }
        output_postprocessor { timestamp_layernorm_postprocessor {
          time_duration_period_units: [3600, 86400] time_duration_units_per_period: [24, 7] } }
        )pb" + hstu_extra + R"pb(
      }
      fusion_mtl_tower {
        mlp { hidden_units: [8] activation: "nn.SiLU" use_ln: true }
        task_configs { task_name: "is_click" label_name: "cand_seq__action_weight" task_bitmask: 1
                       losses { binary_cross_entropy {} } metrics { grouped_auc { grouping_key: "user_id" } } }
        task_configs { task_name: "is_like" label_name: "cand_seq__action_weight" task_bitmask: 2 num_class: 2
                       losses { jrc_loss { session_name: "user_id" } } }
        task_configs { task_name: "watchtime" label_name: "cand_seq__watch_time"
                       losses { l2_loss {} } metrics { mean_absolute_error {} } }
      }
      max_seq_len: 16
      item_embedding_hidden_dim: 6
      )pb" + model_extra + R"pb(
    }
  })pb";
}

feature::FeatureInfo sequence_feature(feature::FeatureInfo f, const std::string& sequence) {
  f.is_sequence = true;
  f.sequence_name = sequence;
  if (f.is_sparse) f.value_dim = 1;  // one id per item
  return f;
}

std::vector<feature::FeatureInfo> features() {
  auto video = [](const std::string& name) {
    auto f = testing::sparse_feature(name, 20, 8);
    f.embedding_name = "video_id_emb";
    return f;
  };
  return {
      testing::sparse_feature("user_id", 10, 4),
      testing::sparse_feature("user_level", 5, 4),
      sequence_feature(video("uih_seq__video_id"), "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__action_weight", 1), "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__action_timestamp", 1), "uih_seq"),
      sequence_feature(video("cand_seq__video_id"), "cand_seq"),
      sequence_feature(testing::dense_feature("cand_seq__query_time", 1), "cand_seq"),
  };
}

// Two users: histories of 3 and 1 items, 2 and 1 candidates.
sparse::Batch batch() {
  sparse::Batch b;
  b.batch_size = 2;
  b.sparse_features = make_kjt({"user_id", "user_level", "uih_seq__video_id", "cand_seq__video_id"},
                               {{{7}, {3}}, {{1}, {2}}, {{4, 5, 6}, {9}}, {{10, 11}, {12}}});
  const auto lengths = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kInt64); };
  b.sequence_lengths["uih_seq__video_id"] = lengths({3, 1});
  b.sequence_lengths["uih_seq__action_weight"] = lengths({3, 1});
  b.sequence_lengths["uih_seq__action_timestamp"] = lengths({3, 1});
  b.sequence_lengths["cand_seq__video_id"] = lengths({2, 1});
  b.sequence_lengths["cand_seq__query_time"] = lengths({2, 1});
  b.sequence_dense_features["uih_seq__action_weight"] = torch::tensor({1.f, 3.f, 0.f, 2.f}).unsqueeze(1);
  b.sequence_dense_features["uih_seq__action_timestamp"] =
      torch::tensor({1000.f, 5000.f, 9000.f, 2000.f}).unsqueeze(1);
  b.sequence_dense_features["cand_seq__query_time"] = torch::tensor({10000.f, 10000.f, 4000.f}).unsqueeze(1);
  b.jagged_label_values["cand_seq__action_weight"] = torch::tensor({3.f, 0.f, 1.f});
  b.jagged_label_lengths["cand_seq__action_weight"] = lengths({2, 1});
  b.jagged_label_values["cand_seq__watch_time"] = torch::tensor({30.f, 0.f, 12.f});
  b.jagged_label_lengths["cand_seq__watch_time"] = lengths({2, 1});
  return b;
}

std::shared_ptr<Model> build(const std::string& text) {
  auto cfg = parse_config(text);
  std::vector<std::string> labels(cfg.data_config().label_fields().begin(), cfg.data_config().label_fields().end());
  return std::make_shared<DlrmHSTU>(cfg.model_config(), features(), labels, std::vector<std::string>{});
}

TEST(DlrmHSTU, ParameterNamesFollowTorchEasyRec) {
  auto model = build(config());
  auto names = testing::keys_of(model->dense_parameters());
  for (const char* want : {"_hstu_transducer._input_preprocessor._batched_contextual_linear_weights",
                           "_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.0.weight",
                           "_hstu_transducer._input_preprocessor._action_encoder._action_embedding_table",
                           "_hstu_transducer._input_preprocessor._action_embedding_mlp._mlp.3.bias",
                           "_hstu_transducer._positional_encoder._position_embeddings_weight",
                           "_hstu_transducer._positional_encoder._timestamp_embeddings_weight",
                           "_hstu_transducer._stu_module._stu_layers.1._uvqk_weight",
                           "_hstu_transducer._output_postprocessor._time_feature_combiner.weight",
                           "_item_embedding_mlp.1.weight", "_item_embedding_mlp.3.bias",
                           "_multitask_module.tower_mlp.mlp.0.perceptron.0.weight", "_multitask_module.linear.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  // Two contextual features of dim 4: two positions in front of the sequence.
  EXPECT_EQ(model->named_parameters()["_hstu_transducer._input_preprocessor._batched_contextual_linear_weights"].sizes(),
            torch::IntArrayRef({2, 4, 8}));
}

TEST(DlrmHSTU, PredictsEveryCandidateAndLearnsFromBits) {
  torch::manual_seed(0);
  auto model = build(config());
  auto b = batch();
  auto p = model->predict(b);
  EXPECT_TRUE(torch::equal(p.at(kTargetRepeatKey), torch::tensor({2, 1}, torch::kInt64)));
  EXPECT_EQ(p.at("logits_is_click").sizes(), torch::IntArrayRef({3}));
  EXPECT_EQ(p.at("probs_is_like").sizes(), torch::IntArrayRef({3, 2}));
  EXPECT_EQ(p.at("y_watchtime").sizes(), torch::IntArrayRef({3}));
  auto losses = model->loss(p, b);
  // is_click: BCE against bit 1 of 3, 0, 1 → labels 1, 0, 1 (hand-computed).
  auto y = torch::tensor({1.f, 0.f, 1.f});
  auto want = torch::binary_cross_entropy_with_logits(p.at("logits_is_click"), y);
  EXPECT_TRUE(torch::allclose(losses.at("binary_cross_entropy_is_click"), want));
  auto l2 = torch::mse_loss(p.at("y_watchtime"), torch::tensor({30.f, 0.f, 12.f}));
  EXPECT_TRUE(torch::allclose(losses.at("l2_loss_watchtime"), l2));
  ASSERT_TRUE(losses.count("jrc_loss_is_like"));
  model->total_loss(losses).backward();
  testing::expect_gradients_everywhere(*model);
  model->eval();
  torch::NoGradGuard g;
  auto pe = model->predict(b);
  model->update_metrics(pe, b, model->loss(pe, b));
  auto m = model->compute_metrics();
  EXPECT_TRUE(m.count("grouped_auc_is_click"));
  EXPECT_TRUE(m.count("mean_absolute_error_watchtime"));
}

TEST(DlrmHSTU, ConfigAndDataErrorsNameTheirCause) {
  auto cfg = parse_config(config());
  cfg.mutable_model_config()->mutable_feature_groups(0)->set_group_name("ctx");
  std::vector<std::string> labels = {"cand_seq__action_weight", "cand_seq__watch_time"};
  EXPECT_NE(error_of([&] { DlrmHSTU(cfg.model_config(), features(), labels, {}); })
                .find("dlrm_hstu needs a feature group named 'contextual'"),
            std::string::npos);
  auto no_len = parse_config(config());
  no_len.mutable_model_config()->mutable_dlrm_hstu()->set_max_seq_len(0);
  EXPECT_NE(error_of([&] { DlrmHSTU(no_len.model_config(), features(), labels, {}); })
                .find("model_config.dlrm_hstu.max_seq_len"),
            std::string::npos);
  // A label with one number per row cannot label the candidates.
  auto model = build(config());
  auto b = batch();
  b.labels["cand_seq__action_weight"] = torch::tensor({1.f, 0.f});
  b.jagged_label_values.erase("cand_seq__action_weight");
  auto p = model->predict(b);
  EXPECT_EQ(error_of([&] { model->loss(p, b); }),
            "label 'cand_seq__action_weight' has 2 values for 3 predictions (one per candidate); a generative "
            "model's label is a list column with one value per candidate");
}

// UltraHSTU: one transducer per channel over its own history groups, outputs concatenated.
std::string ultra_config(const std::string& second_name) {
  const std::string channel = R"pb(
        stu { embedding_dim: 8 num_heads: 1 hidden_dim: 4 attention_dim: 4 output_dropout_ratio: 0.0 }
        input_dropout_ratio: 0.0 attn_num_layers: 1
        positional_encoder { num_position_buckets: 64 }
        input_preprocessor { contextual_preprocessor {
          content_encoder { slice_content_encoder {} } content_mlp { simple_mlp { hidden_dim: 6 } } } }
        output_postprocessor { layernorm_postprocessor {} })pb";
  return R"pb(
  data_config { label_fields: ["cand_seq__action_weight"] }
  model_config {
    feature_groups { group_name: "contextual" feature_names: ["user_id", "user_level"] group_type: DEEP }
    feature_groups { group_name: "uih_a" feature_names: "uih_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_a_timestamp" feature_names: "uih_seq__action_timestamp" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_b" feature_names: "uih_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "uih_b_timestamp" feature_names: "uih_seq__action_timestamp" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate" feature_names: "cand_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate_timestamp" feature_names: "cand_seq__query_time" group_type: JAGGED_SEQUENCE }
    ultra_hstu {
      hstu { name: "uih_a" )pb" + channel + R"pb( }
      hstu { name: ")pb" + second_name + R"pb(" )pb" + channel + R"pb( }
      fusion_mtl_tower {
        task_configs { task_name: "is_click" label_name: "cand_seq__action_weight" task_bitmask: 1
                       losses { binary_cross_entropy {} } }
      }
      max_seq_len: 16
      item_embedding_hidden_dim: 6
    }
  })pb";
}

TEST(UltraHSTU, OneTransducerPerChannelConcatenated) {
  torch::manual_seed(0);
  auto model = build(ultra_config("uih_b"));
  auto names = testing::keys_of(model->dense_parameters());
  for (const char* want : {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._uvqk_weight",
                           "_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.0.weight",
                           "_hstu_transducer._transducers.1._output_postprocessor._layer_norm.weight"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  // D = 8 + 8: the item MLP and the tower work on the concatenation.
  EXPECT_EQ(model->named_parameters()["_item_embedding_mlp.2.weight"].sizes(), torch::IntArrayRef({16, 6}));
  auto b = batch();
  auto p = model->predict(b);
  EXPECT_EQ(p.at("logits_is_click").sizes(), torch::IntArrayRef({3}));
  model->total_loss(model->loss(p, b)).backward();
  testing::expect_gradients_everywhere(*model);
  EXPECT_NE(error_of([&] { build(ultra_config("uih_a")); }).find("model_config.ultra_hstu.hstu[1].name"),
            std::string::npos);
}

}  // namespace dlrm_hstu_test
}  // namespace tzrec::models
