// DlrmHSTU and UltraHSTU against dlrm_hstu_reference.py (independent plain-PyTorch versions in training, values
// and gradients), and on a hand-built batch: TorchEasyRec's parameter names, predictions per candidate with
// the candidates per row (kTargetRepeatKey), task labels as bits of the list label, grouping keys
// repeated per candidate, gradients everywhere, and the config rules.
#include "models/generative/dlrm_hstu.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/testing.h"
#include "nn/testing.h"

namespace tzrec::models {
namespace dlrm_hstu_test {

using testing::error_of;
using testing::sequence_feature;
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

// The whole model against dlrm_hstu_reference.py, on the inputs of src/nn/gr/gr_modules_reference.py
// (three users: histories of 2, 0 and 3 items, 1, 2 and 1 candidates; actions with a watch-time
// bit; two contextual features), in training (targets interleaved with their actions).
// The HSTU settings of the reference (one channel's), and the config of DlrmHSTU or of UltraHSTU
// with two channels "uih_a" / "uih_b" over the same history (dlrm_hstu_reference.py [ultra]).
const char* kReferenceHstu = R"pb(
        stu { embedding_dim: 4 num_heads: 2 hidden_dim: 3 attention_dim: 2 output_dropout_ratio: 0.0 }
        input_dropout_ratio: 0.0
        attn_num_layers: 2
        positional_encoder { num_position_buckets: 16 num_time_buckets: 8 use_time_encoding: true }
        input_preprocessor {
          contextual_interleave_preprocessor {
            action_encoder { simple_action_encoder { action_embedding_dim: 2 action_weights: [1, 2, 4]
                                                     watchtime_to_action_thresholds: [10]
                                                     watchtime_to_action_weights: [8] } }
            action_mlp { parameterized_mlp { hidden_dim: 5 contextual_dropout_ratio: 0.0 } }
            content_encoder { slice_content_encoder {} }
            content_mlp { simple_mlp { hidden_dim: 6 } }
          }
        }
        output_postprocessor { timestamp_layernorm_postprocessor {
          time_duration_period_units: [3600, 86400] time_duration_units_per_period: [24, 7] } })pb";

std::string reference_config(bool ultra = false) {
  std::string groups;
  for (const std::string channel : ultra ? std::vector<std::string>{"uih_a", "uih_b"} : std::vector<std::string>{"uih"}) {
    groups += R"pb(feature_groups { group_name: ")pb" + channel +
              R"pb(" feature_names: "uih_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: ")pb" + channel +
              R"pb(_action" feature_names: "uih_seq__action_weight" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: ")pb" + channel +
              R"pb(_watchtime" feature_names: "uih_seq__watch_time" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: ")pb" + channel +
              R"pb(_timestamp" feature_names: "uih_seq__action_timestamp" group_type: JAGGED_SEQUENCE }
    )pb";
  }
  const std::string hstu = ultra ? std::string("hstu { name: \"uih_a\" ") + kReferenceHstu + " }\n      hstu { name: \"uih_b\" " +
                                       kReferenceHstu + " }"
                                 : std::string("hstu { ") + kReferenceHstu + " }";
  return R"pb(
  data_config { label_fields: ["cand_seq__action_weight", "cand_seq__watch_time"] }
  model_config {
    feature_groups { group_name: "contextual" feature_names: ["user_id", "user_level"] group_type: DEEP }
    feature_groups { group_name: "candidate" feature_names: "cand_seq__video_id" group_type: JAGGED_SEQUENCE }
    feature_groups { group_name: "candidate_timestamp" feature_names: "cand_seq__query_time" group_type: JAGGED_SEQUENCE }
    )pb" + groups + (ultra ? "ultra_hstu" : "dlrm_hstu") + R"pb( {
      )pb" + hstu + R"pb(
      fusion_mtl_tower {
        mlp { hidden_units: [5] activation: "nn.SiLU" }
        task_configs { task_name: "is_click" label_name: "cand_seq__action_weight" task_bitmask: 1
                       losses { binary_cross_entropy {} } }
        task_configs { task_name: "watchtime" label_name: "cand_seq__watch_time" losses { l2_loss {} } }
      }
      max_seq_len: 10
      item_embedding_hidden_dim: 5
    }
  })pb";
}

std::vector<feature::FeatureInfo> reference_features() {
  auto uih_video = testing::sparse_feature("uih_seq__video_id", 20, 4);
  uih_video.embedding_name = "uih_video_emb";
  auto cand_video = testing::sparse_feature("cand_seq__video_id", 20, 6);
  cand_video.embedding_name = "cand_video_emb";
  return {
      testing::sparse_feature("user_id", 10, 3),
      testing::sparse_feature("user_level", 5, 3),
      sequence_feature(uih_video, "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__action_weight", 1), "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__watch_time", 1), "uih_seq"),
      sequence_feature(testing::dense_feature("uih_seq__action_timestamp", 1), "uih_seq"),
      sequence_feature(cand_video, "cand_seq"),
      sequence_feature(testing::dense_feature("cand_seq__query_time", 1), "cand_seq"),
  };
}

sparse::Batch reference_batch() {
  sparse::Batch b;
  b.batch_size = 3;
  b.sparse_features = make_kjt({"user_id", "user_level", "uih_seq__video_id", "cand_seq__video_id"},
                               {{{7}, {3}, {1}}, {{1}, {2}, {0}}, {{4, 5}, {}, {6, 7, 8}}, {{10}, {11, 12}, {13}}});
  const auto lengths = [](std::vector<int64_t> v) { return torch::tensor(v, torch::kInt64); };
  const auto column = [](std::vector<float> v) { return torch::tensor(v).unsqueeze(1); };
  for (const char* f : {"uih_seq__video_id", "uih_seq__action_weight", "uih_seq__watch_time",
                        "uih_seq__action_timestamp"}) {
    b.sequence_lengths[f] = lengths({2, 0, 3});
  }
  b.sequence_lengths["cand_seq__video_id"] = lengths({1, 2, 1});
  b.sequence_lengths["cand_seq__query_time"] = lengths({1, 2, 1});
  b.sequence_dense_features["uih_seq__action_weight"] = column({1, 6, 3, 0, 5});
  b.sequence_dense_features["uih_seq__watch_time"] = column({12, 3, 10, 9, 0});
  b.sequence_dense_features["uih_seq__action_timestamp"] = column({1000, 4600, 200, 90000, 100000});
  b.sequence_dense_features["cand_seq__query_time"] = column({8200, 1000, 1300, 190000});
  b.jagged_label_values["cand_seq__action_weight"] = torch::tensor({1.f, 2.f, 3.f, 0.f});
  b.jagged_label_lengths["cand_seq__action_weight"] = lengths({1, 2, 1});
  b.jagged_label_values["cand_seq__watch_time"] = torch::tensor({30.f, 0.f, 12.f, 5.f});
  b.jagged_label_lengths["cand_seq__watch_time"] = lengths({1, 2, 1});
  return b;
}

TEST(DlrmHSTU, MatchesThePythonReference) {
  // Expected values: /usr/bin/python3 src/models/generative/dlrm_hstu_reference.py
  auto cfg = parse_config(reference_config());
  DlrmHSTU model(cfg.model_config(), reference_features(), {"cand_seq__action_weight", "cand_seq__watch_time"}, {});
  model.train();
  testing::set_reference_parameters(model);
  const sparse::Batch b = reference_batch();
  auto p = model.predict(b);
  EXPECT_TRUE(torch::allclose(p.at("logits_is_click"), torch::tensor({-0.30169963, -0.29843217, -0.29620125, -0.29814456}), 1e-5, 2e-5))
      << p.at("logits_is_click");
  EXPECT_TRUE(torch::allclose(p.at("y_watchtime"), torch::tensor({-0.37112312, -0.36931583, -0.36777458, -0.36895540}), 1e-5, 2e-5))
      << p.at("y_watchtime");
  auto losses = model.loss(p, b);
  EXPECT_NEAR(losses.at("binary_cross_entropy_is_click").item<double>(), 0.70441870, 2e-5);
  EXPECT_NEAR(losses.at("l2_loss_watchtime").item<double>(), 276.08226103, 2e-3);
  model.total_loss(losses).backward();
  const std::map<std::string, double> want = {
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.bias", -0.00017003},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.weight", -0.00075307},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._attn_weights_norm.bias", 0.00016937},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._attn_weights_norm.weight", 0.00107110},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._dense_features_compress.bias", 0.00010833},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._dense_features_compress.weight", 0.00012535},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.0.bias", -0.00028586},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.0.weight", -0.00014407},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.1.bias", -0.00005830},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.1.weight", -0.00006149},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.2.bias", 0.00013626},
      {"_hstu_transducer._input_preprocessor._action_embedding_mlp._res_weights.2.weight", -0.00081720},
      {"_hstu_transducer._input_preprocessor._action_encoder._action_embedding_table", 0.00072048},
      {"_hstu_transducer._input_preprocessor._action_encoder._target_action_embedding_table", 0.00000000},
      {"_hstu_transducer._input_preprocessor._batched_contextual_linear_bias", 0.00058605},
      {"_hstu_transducer._input_preprocessor._batched_contextual_linear_weights", 0.00020390},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.0.bias", 0.04180786},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.0.weight", -0.00262133},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.1.bias", 0.00284913},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.1.weight", 0.00705756},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.2.bias", 0.00325760},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.2.weight", -0.05243356},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.3.bias", 0.01257010},
      {"_hstu_transducer._input_preprocessor._content_embedding_mlp._mlp.3.weight", -0.08866875},
      {"_hstu_transducer._output_postprocessor._layer_norm.bias", -0.46325904},
      {"_hstu_transducer._output_postprocessor._layer_norm.weight", 0.52913258},
      {"_hstu_transducer._output_postprocessor._time_feature_combiner.bias", -0.00374443},
      {"_hstu_transducer._output_postprocessor._time_feature_combiner.weight", -0.36087359},
      {"_hstu_transducer._positional_encoder._position_embeddings_weight", -0.01530267},
      {"_hstu_transducer._positional_encoder._timestamp_embeddings_weight", 0.00578920},
      {"_hstu_transducer._stu_module._stu_layers.0._input_norm_bias", -0.00829116},
      {"_hstu_transducer._stu_module._stu_layers.0._input_norm_weight", 0.00098600},
      {"_hstu_transducer._stu_module._stu_layers.0._output_norm_bias", -0.00031928},
      {"_hstu_transducer._stu_module._stu_layers.0._output_norm_weight", -0.00158389},
      {"_hstu_transducer._stu_module._stu_layers.0._output_weight", -0.00195909},
      {"_hstu_transducer._stu_module._stu_layers.0._uvqk_beta", 0.00711965},
      {"_hstu_transducer._stu_module._stu_layers.0._uvqk_weight", -0.00055595},
      {"_hstu_transducer._stu_module._stu_layers.1._input_norm_bias", 0.00276203},
      {"_hstu_transducer._stu_module._stu_layers.1._input_norm_weight", -0.01168314},
      {"_hstu_transducer._stu_module._stu_layers.1._output_norm_bias", -0.00028029},
      {"_hstu_transducer._stu_module._stu_layers.1._output_norm_weight", 0.00485582},
      {"_hstu_transducer._stu_module._stu_layers.1._output_weight", 0.00863203},
      {"_hstu_transducer._stu_module._stu_layers.1._uvqk_beta", 0.01231127},
      {"_hstu_transducer._stu_module._stu_layers.1._uvqk_weight", -0.00277561},
      {"_item_embedding_mlp.0.bias", 0.01343983},
      {"_item_embedding_mlp.0.weight", -0.01670846},
      {"_item_embedding_mlp.1.bias", -0.00348553},
      {"_item_embedding_mlp.1.weight", 0.00727251},
      {"_item_embedding_mlp.2.bias", 0.00474298},
      {"_item_embedding_mlp.2.weight", 0.07261018},
      {"_item_embedding_mlp.3.bias", 0.34506027},
      {"_item_embedding_mlp.3.weight", -0.47766123},
      {"_multitask_module.linear.bias", -12.09080057},
      {"_multitask_module.linear.weight", 2.35333401},
      {"_multitask_module.tower_mlp.mlp.0.perceptron.0.bias", -10.09765654},
      {"_multitask_module.tower_mlp.mlp.0.perceptron.0.weight", -0.03859904},
      {"sequence.cand_video_emb", 0.01353041},
      {"sequence.uih_video_emb", -0.00001179},
      {"user_id_emb", 0.00028702},
      {"user_level_emb", 0.00017090},
  };
  testing::expect_gradient_checksums(model, want);
}

TEST(UltraHSTU, MatchesThePythonReference) {
  // Expected values: /usr/bin/python3 src/models/generative/dlrm_hstu_reference.py ultra
  auto cfg = parse_config(reference_config(/*ultra=*/true));
  UltraHSTU model(cfg.model_config(), reference_features(), {"cand_seq__action_weight", "cand_seq__watch_time"}, {});
  model.train();
  testing::set_reference_parameters(model);
  const sparse::Batch b = reference_batch();
  auto p = model.predict(b);
  EXPECT_TRUE(torch::allclose(p.at("logits_is_click"), torch::tensor({0.21051584, 0.21529452, 0.19495508, 0.21084090}), 1e-5, 2e-5))
      << p.at("logits_is_click");
  EXPECT_TRUE(torch::allclose(p.at("y_watchtime"), torch::tensor({-0.20894889, -0.21927715, -0.21291174, -0.21259546}), 1e-5, 2e-5))
      << p.at("y_watchtime");
  auto losses = model.loss(p, b);
  EXPECT_NEAR(losses.at("binary_cross_entropy_is_click").item<double>(), 0.70113078, 2e-5);
  EXPECT_NEAR(losses.at("l2_loss_watchtime").item<double>(), 272.23876002, 2e-3);
  model.total_loss(losses).backward();
  const std::map<std::string, double> want = {
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.bias", -0.00006453},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.weight", -0.00038453},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._attn_weights_norm.bias", 0.00010031},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._attn_weights_norm.weight", 0.00043379},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._dense_features_compress.bias", 0.00006457},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._dense_features_compress.weight", 0.00005622},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.0.bias", -0.00008711},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.0.weight", -0.00004337},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.1.bias", -0.00001824},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.1.weight", -0.00001929},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.2.bias", 0.00005653},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_embedding_mlp._res_weights.2.weight", -0.00031277},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_encoder._action_embedding_table", 0.00026426},
      {"_hstu_transducer._transducers.0._input_preprocessor._action_encoder._target_action_embedding_table", 0.00000000},
      {"_hstu_transducer._transducers.0._input_preprocessor._batched_contextual_linear_bias", 0.00143198},
      {"_hstu_transducer._transducers.0._input_preprocessor._batched_contextual_linear_weights", 0.00020341},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.0.bias", -0.09459695},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.0.weight", 0.00439753},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.1.bias", -0.00941230},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.1.weight", -0.01839296},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.2.bias", 0.00133610},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.2.weight", 0.04779538},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.3.bias", 0.20907493},
      {"_hstu_transducer._transducers.0._input_preprocessor._content_embedding_mlp._mlp.3.weight", 0.12293987},
      {"_hstu_transducer._transducers.0._output_postprocessor._layer_norm.bias", 0.65593229},
      {"_hstu_transducer._transducers.0._output_postprocessor._layer_norm.weight", -0.00623139},
      {"_hstu_transducer._transducers.0._output_postprocessor._time_feature_combiner.bias", 0.01813595},
      {"_hstu_transducer._transducers.0._output_postprocessor._time_feature_combiner.weight", 0.57184700},
      {"_hstu_transducer._transducers.0._positional_encoder._position_embeddings_weight", -0.09136810},
      {"_hstu_transducer._transducers.0._positional_encoder._timestamp_embeddings_weight", 0.10487029},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._input_norm_bias", 0.00199472},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._input_norm_weight", -0.00058647},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._output_norm_bias", 0.00175300},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._output_norm_weight", 0.01578265},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._output_weight", -0.01943395},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._uvqk_beta", -0.00470697},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.0._uvqk_weight", -0.00377221},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._input_norm_bias", -0.01304523},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._input_norm_weight", 0.01312830},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._output_norm_bias", 0.00151718},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._output_norm_weight", -0.01484958},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._output_weight", -0.02501322},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._uvqk_beta", -0.02231796},
      {"_hstu_transducer._transducers.0._stu_module._stu_layers.1._uvqk_weight", -0.00848580},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.bias", -0.00000154},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._attn_raw_weights.0.weight", 0.00000429},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._attn_weights_norm.bias", 0.00000251},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._attn_weights_norm.weight", -0.00000080},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._dense_features_compress.bias", -0.00000343},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._dense_features_compress.weight", 0.00000213},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.0.bias", -0.00000508},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.0.weight", 0.00000183},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.1.bias", 0.00000016},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.1.weight", -0.00000133},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.2.bias", -0.00000022},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_embedding_mlp._res_weights.2.weight", 0.00000469},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_encoder._action_embedding_table", 0.00001273},
      {"_hstu_transducer._transducers.1._input_preprocessor._action_encoder._target_action_embedding_table", 0.00000000},
      {"_hstu_transducer._transducers.1._input_preprocessor._batched_contextual_linear_bias", 0.00001590},
      {"_hstu_transducer._transducers.1._input_preprocessor._batched_contextual_linear_weights", -0.00000626},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.0.bias", 0.00004896},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.0.weight", 0.00005609},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.1.bias", 0.00001227},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.1.weight", -0.00001227},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.2.bias", 0.00000596},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.2.weight", 0.00011193},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.3.bias", -0.00410771},
      {"_hstu_transducer._transducers.1._input_preprocessor._content_embedding_mlp._mlp.3.weight", 0.00062278},
      {"_hstu_transducer._transducers.1._output_postprocessor._layer_norm.bias", -0.08983819},
      {"_hstu_transducer._transducers.1._output_postprocessor._layer_norm.weight", 0.11512350},
      {"_hstu_transducer._transducers.1._output_postprocessor._time_feature_combiner.bias", 0.00036636},
      {"_hstu_transducer._transducers.1._output_postprocessor._time_feature_combiner.weight", 0.00122740},
      {"_hstu_transducer._transducers.1._positional_encoder._position_embeddings_weight", 0.00202282},
      {"_hstu_transducer._transducers.1._positional_encoder._timestamp_embeddings_weight", 0.00059255},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._input_norm_bias", 0.00011975},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._input_norm_weight", 0.00031658},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._output_norm_bias", -0.00002431},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._output_norm_weight", -0.00005236},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._output_weight", -0.00015976},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._uvqk_beta", -0.00052499},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.0._uvqk_weight", 0.00041534},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._input_norm_bias", -0.00017890},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._input_norm_weight", 0.00023134},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._output_norm_bias", -0.00012741},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._output_norm_weight", 0.00034254},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._output_weight", -0.00037525},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._uvqk_beta", 0.00023725},
      {"_hstu_transducer._transducers.1._stu_module._stu_layers.1._uvqk_weight", 0.00001310},
      {"_item_embedding_mlp.0.bias", -0.56490810},
      {"_item_embedding_mlp.0.weight", 0.09357322},
      {"_item_embedding_mlp.1.bias", -0.02652092},
      {"_item_embedding_mlp.1.weight", -0.18230456},
      {"_item_embedding_mlp.2.bias", 0.18798450},
      {"_item_embedding_mlp.2.weight", 0.19842843},
      {"_item_embedding_mlp.3.bias", -0.39335280},
      {"_item_embedding_mlp.3.weight", -0.04843435},
      {"_multitask_module.linear.bias", -11.87963428},
      {"_multitask_module.linear.weight", -4.83893436},
      {"_multitask_module.tower_mlp.mlp.0.perceptron.0.bias", 3.02221879},
      {"_multitask_module.tower_mlp.mlp.0.perceptron.0.weight", 0.14257551},
      {"sequence.cand_video_emb", -0.04420305},
      {"sequence.uih_video_emb", -0.00003270},
      {"user_id_emb", 0.00048445},
      {"user_level_emb", -0.00005264},
  };
  testing::expect_gradient_checksums(model, want);
}

}  // namespace dlrm_hstu_test
}  // namespace tzrec::models
