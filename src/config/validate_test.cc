#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace validate_test {

using testing::HasProblem;
using testing::NoProblems;
using testing::NotSupported;
using testing::dump;

const char kValidateCommon[] = R"(
train_input_path: "train.csv"
eval_input_path: ""
model_dir: "m"
train_config {
  sparse_optimizer { sgd_optimizer { lr: 0.1 } constant_learning_rate {} }
  dense_optimizer { adam_optimizer { lr: 0.01 } constant_learning_rate {} }
  num_steps: 10
}
data_config { batch_size: 8 dataset_type: CsvDataset with_header: true label_fields: "label" }
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 4 } }
feature_configs { raw_feature { feature_name: "b0" boundaries: [1, 2, 3] embedding_dim: 4 } }
)";

const char kDeepFm[] = R"(
model_config {
  feature_groups { group_name: "wide" feature_names: ["c0", "c1", "b0"] group_type: WIDE }
  feature_groups { group_name: "fm" feature_names: ["c0", "c1", "b0"] group_type: DEEP }
  feature_groups { group_name: "deep" feature_names: ["d0", "c0", "c1", "b0"] group_type: DEEP }
  deepfm { deep { hidden_units: [8, 4] } final { hidden_units: [4] } }
  losses { binary_cross_entropy {} }
  metrics { auc {} }
}
)";

const char kMultiTower[] = R"(
model_config {
  feature_groups { group_name: "user" feature_names: ["d0", "c0"] }
  feature_groups { group_name: "item" feature_names: ["c1", "b0"] }
  multi_tower {
    towers { input: "user" mlp { hidden_units: [8] } }
    towers { input: "item" mlp { hidden_units: [8] } }
    final { hidden_units: [4] }
  }
  losses { binary_cross_entropy {} }
}
)";

const char kMMoE[] = R"(
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1", "b0"] }
  mmoe {
    expert_mlp { hidden_units: [8, 4] }
    num_expert: 2
    task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } metrics { auc {} } }
    task_towers { tower_name: "cvr" label_name: "buy" mlp { hidden_units: [4] } losses { l2_loss {} } }
  }
}
)";

// Base DeepFM config with `extra` text merged in (singular fields overwrite, repeated append).
protos::EasyRecConfig deepfm(const std::string& extra = "") {
  return parse_pipeline_config_text(std::string(kValidateCommon) + kDeepFm + extra, "deepfm.config");
}
protos::EasyRecConfig multi_tower(const std::string& extra = "") {
  return parse_pipeline_config_text(std::string(kValidateCommon) + kMultiTower + extra, "mt.config");
}
protos::EasyRecConfig mmoe(const std::string& extra = "") {
  return parse_pipeline_config_text(std::string(kValidateCommon) + kMMoE + "data_config { label_fields: 'buy' }" + extra,
                                    "mmoe.config");
}
protos::EasyRecConfig edited(protos::EasyRecConfig config, const std::string& edits) {
  edit_config(&config, edits);
  return config;
}

TEST(Validate, BaseConfigsAreValid) {
  EXPECT_TRUE(NoProblems(deepfm()));
  EXPECT_TRUE(NoProblems(multi_tower()));
  EXPECT_TRUE(NoProblems(mmoe()));
  EXPECT_TRUE(NoProblems(mmoe("model_config { use_pareto_loss_weight: true }")));
  EXPECT_NO_THROW(check_valid(deepfm()));
}

TEST(Validate, UnsupportedModels) {
  auto c = deepfm("model_config { wukong { final { hidden_units: [4] } } }");
  EXPECT_TRUE(NotSupported(c, "model_config.wukong"));
  EXPECT_TRUE(NotSupported(deepfm("model_config { dc2vr {} }"), "model_config.dc2vr"));
  EXPECT_TRUE(NotSupported(deepfm("model_config { dssm {} }"), "model_config.dssm"));
  auto none = deepfm();
  none.mutable_model_config()->clear_deepfm();
  EXPECT_TRUE(HasProblem(none, "model_config", "needs a model"));
}

TEST(Validate, UnsupportedFeatureTypes) {
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { combo_feature { feature_name: 'x' } }"),
                           "feature_configs[4].combo_feature"));
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { sequence_id_feature { feature_name: 'x' } }"),
                           "feature_configs[4].sequence_id_feature"));
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { sequence_feature { sequence_name: 's' } }"),
                           "feature_configs[4].sequence_feature"));
}

TEST(Validate, DataConfigSubset) {
  auto kafka = deepfm("data_config { dataset_type: KafkaDataset }");
  EXPECT_TRUE(HasProblem(kafka, "data_config.dataset_type",
                         "not supported yet: data_config.dataset_type: KafkaDataset"));
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: ParquetDataset }")));
  EXPECT_TRUE(NotSupported(
      deepfm("data_config { negative_sampler { input_path: 'x' num_sample: 1 item_id_field: 'c0' } }"),
      "data_config.negative_sampler"));
  EXPECT_TRUE(NotSupported(deepfm("data_config { shuffle: true }"), "data_config.shuffle"));
  EXPECT_TRUE(NotSupported(deepfm("data_config { batch_cost_size: 10 }"), "data_config.batch_cost_size"));
  EXPECT_TRUE(NotSupported(deepfm("data_config { sample_mask_prob: 0.1 }"), "data_config.sample_mask_prob"));
  EXPECT_TRUE(NotSupported(deepfm("data_config { input_fields_str: 'a:INT64;' }"),
                           "data_config.input_fields_str"));
  EXPECT_TRUE(NoProblems(deepfm("data_config { sample_weight_fields: 'w' }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { shuffle: false drop_remainder: true }")));
}

TEST(Validate, DataConfigSemantics) {
  EXPECT_TRUE(HasProblem(deepfm("data_config { batch_size: 0 }"), "data_config.batch_size", "must be > 0"));
  auto no_label = deepfm();
  no_label.mutable_data_config()->clear_label_fields();
  EXPECT_TRUE(HasProblem(no_label, "data_config.label_fields", "needs at least one label field"));
  auto no_header = deepfm("data_config { with_header: false }");
  EXPECT_TRUE(HasProblem(no_header, "data_config.input_fields", "needs input_fields"));
  EXPECT_TRUE(NoProblems(deepfm("data_config { with_header: false input_fields { input_name: 'label' } }")));
  auto no_data = deepfm();
  no_data.clear_data_config();
  EXPECT_TRUE(HasProblem(no_data, "data_config", "required"));
}

TEST(Validate, FgModes) {
  // The rules of each feature (expressions, normalizers, buckets, names) are checked when the
  // features are built: feature/features_test.cc, and check_config runs that construction.
  auto with_expr = edited(deepfm("data_config { fg_mode: FG_DAG }"),
                          R"({"feature_configs[0].raw_feature.expression": "user:d0",
                              "feature_configs[1].id_feature.expression": "item:c0",
                              "feature_configs[2].id_feature.expression": "context:c1",
                              "feature_configs[3].raw_feature.expression": "user:b0"})");
  EXPECT_TRUE(NoProblems(with_expr));
}

TEST(Validate, OptimizerSubset) {
  EXPECT_TRUE(NotSupported(
      deepfm("train_config { sparse_optimizer { adadelta_optimizer {} } }"),
      "train_config.sparse_optimizer.adadelta_optimizer"));
  EXPECT_TRUE(NotSupported(
      deepfm("train_config { sparse_optimizer { rmsprop_optimizer {} } }"),
      "train_config.sparse_optimizer.rmsprop_optimizer"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { sparse_optimizer { rowwise_adagrad_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { sparse_optimizer { lamb_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { sparse_optimizer { adam_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { sparse_optimizer { adagrad_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { rmsprop_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { adadelta_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { adamw_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { sgd_optimizer {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { adagrad_optimizer {} } }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { dense_optimizer { sgd_optimizer { lr: -1 } } }"),
                         "train_config.dense_optimizer.sgd_optimizer.lr", "must be >= 0"));
  auto no_opt = deepfm();
  no_opt.mutable_train_config()->mutable_sparse_optimizer()->clear_sgd_optimizer();
  EXPECT_TRUE(HasProblem(no_opt, "train_config.sparse_optimizer", "needs an optimizer"));
}

TEST(Validate, LearningRates) {
  // All schedules are accepted here; their values are checked when the scheduler is built.
  EXPECT_TRUE(NoProblems(deepfm(
      "train_config { sparse_optimizer { exponential_decay_learning_rate { decay_size: 10 } } }")));
  EXPECT_TRUE(NoProblems(
      deepfm("train_config { dense_optimizer { cosine_annealing_learning_rate { T_max: 5 } } }")));
  EXPECT_TRUE(NoProblems(deepfm(
      "train_config { dense_optimizer { manual_step_learning_rate { schedule_sizes: [1] "
      "learning_rates: [0.1] } } }")));
  EXPECT_TRUE(NoProblems(deepfm(
      "train_config { sparse_optimizer { cosine_annealing_warm_restarts_learning_rate { T_0: 3 } } }")));
  auto missing = deepfm();
  missing.mutable_train_config()->mutable_dense_optimizer()->clear_constant_learning_rate();
  EXPECT_TRUE(HasProblem(missing, "train_config.dense_optimizer",
                         "needs a learning_rate, e.g. constant_learning_rate {}"));
}

TEST(Validate, TrainConfigSubset) {
  EXPECT_TRUE(NoProblems(deepfm(
      "train_config { dense_optimizer { part_optimizers { regex_pattern: 'model\\\\.deep.*' "
      "rmsprop_optimizer {} } } }")));
  EXPECT_TRUE(NoProblems(deepfm(
      "train_config { dense_optimizer { part_optimizers { regex_pattern: '.*bias' "
      "sgd_optimizer { lr: 0.1 } constant_learning_rate {} } } }")));
  EXPECT_TRUE(HasProblem(
      deepfm("train_config { dense_optimizer { part_optimizers { regex_pattern: 'x' } } }"),
      "train_config.dense_optimizer.part_optimizers[0]", "needs an optimizer"));
  EXPECT_TRUE(HasProblem(
      deepfm("train_config { dense_optimizer { part_optimizers { regex_pattern: 'x' "
             "adam_optimizer {} } part_optimizers { regex_pattern: '(unclosed' "
             "adam_optimizer {} } } }"),
      "train_config.dense_optimizer.part_optimizers[1].regex_pattern", "not a valid regular expression"));
  EXPECT_TRUE(HasProblem(
      deepfm("train_config { dense_optimizer { part_optimizers { adam_optimizer { lr: -1 } } } }"),
      "train_config.dense_optimizer.part_optimizers[0].regex_pattern", "required"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { ema {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { ema { decay: 0.9 } } }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { dense_optimizer { ema { decay: 1.5 } } }"),
                         "train_config.dense_optimizer.ema.decay", "must be in [0, 1]"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { mixed_precision: 'FP16' }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { mixed_precision: 'FP16' grad_scaler { init_scale: 1024 } }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { mixed_precision: 'FP16' grad_scaler { init_scale: 0 } }"),
                         "train_config.grad_scaler.init_scale", "must be > 0"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { mixed_precision: 'FP16' grad_scaler { growth_factor: 1 } }"),
                         "train_config.grad_scaler.growth_factor", "must be > 1"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { mixed_precision: 'FP16' grad_scaler { backoff_factor: 1 } }"),
                         "train_config.grad_scaler.backoff_factor", "must be in (0, 1)"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { mixed_precision: 'FP16' grad_scaler { growth_interval: 0 } }"),
                         "train_config.grad_scaler.growth_interval", "must be >= 1"));
  // The scaler is only used (and checked) with FP16.
  EXPECT_TRUE(NoProblems(deepfm("train_config { grad_scaler { growth_interval: 0 } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { mixed_precision: 'BF16' }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { mixed_precision: 'bf16' }"), "train_config.mixed_precision",
                         "must be \"BF16\", \"FP16\" or empty, got 'bf16'"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { mixed_precision: '' }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { gradient_accumulation_steps: 2 }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { grad_clipping { clipping_type: 'norm' } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { grad_clipping { clipping_type: 'VALUE' } }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { grad_clipping { clipping_type: 'none' } }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { grad_clipping { clipping_type: 'l2' } }"),
                         "train_config.grad_clipping.clipping_type", "must be norm, value or none"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { fine_tune_checkpoint: 'ckpt' fine_tune_ckpt_param_map: 'map' }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { keep_checkpoint_max: 3 }")));
  EXPECT_TRUE(NotSupported(deepfm("train_config { delta_embedding_dump_config {} }"),
                           "train_config.delta_embedding_dump_config"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { is_profiling: true }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { tensorboard_summaries: ['loss', 'gradient'] }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { tensorboard_summaries: ['parameter', 'gradient_norm', "
                                "'global_gradient_norm', 'gradient'] }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { tensorboard_summaries: ['parameter', 'gradients'] }"),
                         "train_config.tensorboard_summaries[1]", "unknown summary 'gradients'"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { tensorboard_summaries: 'losses' }"),
                         "train_config.tensorboard_summaries[0]", "unknown summary 'losses'"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { tensorboard_summaries: ['loss', 'learning_rate'] }")));
}

TEST(Validate, TrainConfigSemantics) {
  EXPECT_TRUE(HasProblem(deepfm("train_config { num_epochs: 1 }"), "train_config",
                         "set only one of num_steps, num_epochs"));
  auto neither = deepfm();
  neither.mutable_train_config()->clear_num_steps();
  EXPECT_TRUE(HasProblem(neither, "train_config", "needs one of num_steps, num_epochs"));
  auto no_sparse = deepfm();
  no_sparse.mutable_train_config()->clear_sparse_optimizer();
  EXPECT_TRUE(HasProblem(no_sparse, "train_config.sparse_optimizer", "required"));
  auto no_dense = deepfm();
  no_dense.mutable_train_config()->clear_dense_optimizer();
  EXPECT_TRUE(HasProblem(no_dense, "train_config.dense_optimizer", "required"));
}

TEST(Validate, IdFeatureRules) {
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 zch { zch_size: 10 } } }"),
                           "feature_configs[4].id_feature.zch"));
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 dynamicemb { max_capacity: 10 } } }"),
                           "feature_configs[4].id_feature.dynamicemb"));
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_file: 'v.txt' } }"),
                           "feature_configs[4].id_feature.vocab_file"));
  auto weighted = edited(deepfm(), R"({"feature_configs[1].id_feature.weighted": true})");
  EXPECT_TRUE(NoProblems(weighted));  // FG_NONE parses k:w natively
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_list: ['a'] } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_dict: [{key: 'a' value: 2}] } }")));
  auto fp16 = edited(deepfm(), R"({"feature_configs[1].id_feature.data_type": "FP16"})");
  EXPECT_TRUE(NoProblems(fp16));
  auto fp8 = edited(deepfm(), R"({"feature_configs[1].id_feature.data_type": "FP8"})");
}

TEST(Validate, RawFeatureRules) {
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { raw_feature { feature_name: 'r' embedding_dim: 4 autodis { num_channels: 3 } } }"),
                           "feature_configs[4].raw_feature.autodis"));
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { raw_feature { feature_name: 'r' embedding_dim: 4 mlp {} } }"),
                           "feature_configs[4].raw_feature.mlp"));
}

TEST(Validate, FeatureGroups) {
  auto unknown = deepfm("model_config { feature_groups { group_name: 'x' feature_names: ['c0', 'c1', 'd0', 'cat_9'] } }");
  EXPECT_TRUE(HasProblem(unknown, "model_config.feature_groups[3].feature_names[3]", "unknown feature 'cat_9'"));
  auto dup = deepfm("model_config { feature_groups { group_name: 'fm' feature_names: ['c0'] } }");
  EXPECT_TRUE(HasProblem(dup, "model_config.feature_groups[3].group_name",
                         "duplicate group name 'fm' (also model_config.feature_groups[1])"));
  auto empty = deepfm("model_config { feature_groups { group_name: 'e' } }");
  EXPECT_TRUE(HasProblem(empty, "model_config.feature_groups[3].feature_names", "group has no features"));
  auto seq = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] group_type: SEQUENCE } }");
  EXPECT_TRUE(HasProblem(seq, "model_config.feature_groups[3].group_type",
                         "not supported yet: model_config.feature_groups[3].group_type: SEQUENCE"));
  auto jagged = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] group_type: JAGGED_SEQUENCE } }");
  EXPECT_TRUE(NotSupported(jagged, "model_config.feature_groups[3].group_type"));
  auto seq_groups = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] sequence_groups { group_name: 'q' } } }");
  EXPECT_TRUE(NotSupported(seq_groups, "model_config.feature_groups[3].sequence_groups"));
  auto encoders = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] sequence_encoders { pooling_encoder { input: 'q' } } } }");
  EXPECT_TRUE(NotSupported(encoders, "model_config.feature_groups[3].sequence_encoders"));
}

TEST(Validate, DeepFmGroups) {
  auto no_wide = edited(deepfm(), R"({"model_config.feature_groups[0].group_name": "linear"})");
  EXPECT_TRUE(HasProblem(no_wide, "model_config.feature_groups", "DeepFM needs a feature group named 'wide'"));
  auto wide_type = edited(deepfm(), R"({"model_config.feature_groups[0].group_type": "DEEP"})");
  EXPECT_TRUE(HasProblem(wide_type, "model_config.feature_groups[0].group_type", "DeepFM group 'wide' must be WIDE"));
  auto no_deep = edited(deepfm(), R"({"model_config.feature_groups[2].group_name": "mlp"})");
  EXPECT_TRUE(HasProblem(no_deep, "model_config.feature_groups", "DeepFM needs a feature group named 'deep'"));
  auto deep_type = edited(deepfm(), R"({"model_config.feature_groups[2].group_type": "WIDE"})");
  EXPECT_TRUE(HasProblem(deep_type, "model_config.feature_groups[2].group_type", "DeepFM group 'deep' must be DEEP"));
  auto fm_dims = edited(deepfm(), R"({"feature_configs[2].id_feature.embedding_dim": 8})");
  EXPECT_TRUE(HasProblem(fm_dims, "model_config.feature_groups[1].feature_names[1]",
                         "FM needs equal embedding_dim: 'c1' has 8, 'c0' has 4"));
  auto fm_dense = edited(deepfm(), R"({"model_config.feature_groups[1].feature_names": ["c0", "d0"]})");
  EXPECT_TRUE(HasProblem(fm_dense, "model_config.feature_groups[1].feature_names[1]", "'d0' is dense"));
  // Without an fm group the deep group feeds FM, so it must be all sparse.
  auto deep_as_fm = deepfm();
  deep_as_fm.mutable_model_config()->mutable_feature_groups()->DeleteSubrange(1, 1);
  EXPECT_TRUE(HasProblem(deep_as_fm, "model_config.feature_groups[1].feature_names[0]", "'d0' is dense"));
  auto wide_dense = edited(deepfm(), R"({"model_config.feature_groups[0].feature_names": ["c0", "d0"]})");
  EXPECT_TRUE(HasProblem(wide_dense, "model_config.feature_groups[0].feature_names[1]",
                         "WIDE group needs sparse features"));
  auto no_mlp = deepfm();
  no_mlp.mutable_model_config()->mutable_deepfm()->clear_deep();
  EXPECT_TRUE(HasProblem(no_mlp, "model_config.deepfm.deep", "required"));
  auto no_final = deepfm();
  no_final.mutable_model_config()->mutable_deepfm()->clear_final();
  EXPECT_TRUE(NoProblems(no_final));
}

TEST(Validate, MultiTowerRules) {
  auto bad_input = edited(multi_tower(), R"({"model_config.multi_tower.towers[1].input": "items"})");
  EXPECT_TRUE(HasProblem(bad_input, "model_config.multi_tower.towers[1].input", "unknown feature group 'items'"));
  auto no_final = multi_tower();
  no_final.mutable_model_config()->mutable_multi_tower()->clear_final();
  EXPECT_TRUE(HasProblem(no_final, "model_config.multi_tower.final", "required"));
  auto no_tower_mlp = multi_tower();
  no_tower_mlp.mutable_model_config()->mutable_multi_tower()->mutable_towers(0)->clear_mlp();
  EXPECT_TRUE(HasProblem(no_tower_mlp, "model_config.multi_tower.towers[0].mlp", "required"));
  auto no_towers = multi_tower();
  no_towers.mutable_model_config()->mutable_multi_tower()->clear_towers();
  EXPECT_TRUE(HasProblem(no_towers, "model_config.multi_tower.towers", "needs at least one tower"));
}

TEST(Validate, MMoERules) {
  const std::string t = "model_config.mmoe.task_towers";
  auto set = [](const std::string& field, const std::string& value) {
    return edited(mmoe(), "{\"model_config.mmoe." + field + "\": " + value + "}");
  };
  EXPECT_TRUE(HasProblem(set("task_towers[1].label_name", "\"pay\""), t + "[1].label_name",
                         "'pay' is not one of data_config.label_fields"));
  EXPECT_TRUE(HasProblem(set("task_towers[1].tower_name", "\"ctr\""), t + "[1].tower_name",
                         "'ctr' is also the name of model_config.mmoe.task_towers[0]"));
  EXPECT_TRUE(HasProblem(set("task_towers[0].num_class", "2"), t + "[0].losses[0].binary_cross_entropy",
                         "needs num_class 1, got model_config.mmoe.task_towers[0].num_class 2"));
  auto auc_on_l2 = mmoe();
  auc_on_l2.mutable_model_config()->mutable_mmoe()->mutable_task_towers(1)->add_metrics()->mutable_auc();
  EXPECT_TRUE(HasProblem(auc_on_l2, t + "[1].metrics[0].auc", "needs prediction 'probs'"));
  EXPECT_TRUE(HasProblem(set("task_towers[0].sample_weight_name", "\"w\""), t + "[0].sample_weight_name",
                         "'w' is not one of data_config.sample_weight_fields"));
  EXPECT_TRUE(HasProblem(set("task_towers[0].task_space_indicator_label", "\"x\""),
                         t + "[0].task_space_indicator_label", "'x' is not one of data_config.label_fields"));
  EXPECT_TRUE(HasProblem(set("num_expert", "0"), "model_config.mmoe.num_expert", "must be >= 1"));
  auto no_towers = mmoe();
  no_towers.mutable_model_config()->mutable_mmoe()->clear_task_towers();
  EXPECT_TRUE(HasProblem(no_towers, "model_config.mmoe.task_towers", "needs at least one task tower"));
  // Pareto lower bounds: each >= 0, summing (once per task loss) to less than 1.
  auto pareto = mmoe("model_config { use_pareto_loss_weight: true }");
  EXPECT_TRUE(HasProblem(edited(pareto, R"({"model_config.mmoe.task_towers[0].pareto_min_loss_weight": -0.1})"),
                         t + "[0].pareto_min_loss_weight", "must be a finite number >= 0"));
  auto big = edited(pareto, R"({"model_config.mmoe.task_towers[0].pareto_min_loss_weight": 0.5,
                               "model_config.mmoe.task_towers[1].pareto_min_loss_weight": 0.5})");
  EXPECT_TRUE(HasProblem(big, "model_config.use_pareto_loss_weight", "must sum to less than 1"));
  EXPECT_TRUE(NoProblems(edited(big, R"({"model_config.use_pareto_loss_weight": false})")));
}

TEST(Validate, DBMTLRules) {
  const char dbmtl[] = R"(
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1", "b0"] }
  dbmtl {
    bottom_mlp { hidden_units: [8] }
    expert_mlp { hidden_units: [4] }
    task_towers { tower_name: "ctr" losses { binary_cross_entropy {} } }
    task_towers { tower_name: "cvr" label_name: "buy" relation_mlp { hidden_units: [4] } relation_tower_names: "ctr"
                  losses { binary_cross_entropy {} } }
  }
}
data_config { label_fields: "buy" }
)";
  auto base = parse_pipeline_config_text(std::string(kValidateCommon) + dbmtl, "dbmtl.config");
  EXPECT_TRUE(NoProblems(base));
  const std::string t = "model_config.dbmtl.task_towers";
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.dbmtl.task_towers[1].relation_tower_names": ["cvr"]})"),
                         t + "[1].relation_tower_names[0]", "'cvr' is not a tower before this one"));
  auto masked = base;
  masked.mutable_model_config()->mutable_dbmtl()->mutable_mask_net();  // checked as a MaskNetModule
  EXPECT_TRUE(HasProblem(masked, "model_config.dbmtl.mask_net.n_mask_blocks", "must be >= 1"));
  auto three = base;
  auto* extra = three.mutable_model_config()->mutable_dbmtl()->add_task_towers();
  extra->set_tower_name("pay");
  extra->add_losses()->mutable_binary_cross_entropy();
  EXPECT_TRUE(HasProblem(three, t + "[2].label_name", "no field at this tower's position"));
}

TEST(Validate, PLERules) {
  const char ple[] = R"(
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1", "b0"] }
  ple {
    extraction_networks { network_name: "l0" expert_num_per_task: 2 share_num: 1
                          task_expert_net { hidden_units: [8] } share_expert_net { hidden_units: [8] } }
    task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } }
  }
}
)";
  auto base = parse_pipeline_config_text(std::string(kValidateCommon) + ple, "ple.config");
  EXPECT_TRUE(NoProblems(base));
  const std::string n = "model_config.ple.extraction_networks[0]";
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.ple.extraction_networks[0].share_expert_net.hidden_units": [4]})"),
                         n, "must end in the same width"));
  EXPECT_TRUE(NotSupported(edited(base, R"({"model_config.ple.extraction_networks[0].share_num": 0})"), n + ".share_num"));
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.ple.extraction_networks[0].expert_num_per_task": 0})"),
                         n + ".expert_num_per_task", "must be >= 1"));
  auto no_nets = base;
  no_nets.mutable_model_config()->mutable_ple()->clear_extraction_networks();
  EXPECT_TRUE(HasProblem(no_nets, "model_config.ple.extraction_networks", "needs at least one network"));
}

TEST(Validate, MlpRules) {
  const std::string p = "model_config.deepfm.deep";
  auto set_deep = [](const std::string& mlp) {
    return edited(deepfm(), R"({"model_config.deepfm.deep": ")" + mlp + R"("})");
  };
  EXPECT_TRUE(NoProblems(set_deep("hidden_units: [8, 4, 2] dropout_ratio: [0.1, 0.2, 0.3]")));
  EXPECT_TRUE(NoProblems(set_deep("hidden_units: [8, 4, 2] dropout_ratio: 0.5")));
  EXPECT_TRUE(NoProblems(set_deep("hidden_units: [8] activation: 'nn.LeakyReLU(negative_slope=0.1)'")));
  EXPECT_TRUE(NoProblems(set_deep("hidden_units: [8] activation: 'torch.nn.GELU'")));
  // The MLP's own rules (hidden_units, dropout_ratio, activation) are checked when it is built:
  // nn/mlp_test.cc, and check_config vs train_eval in tests/e2e/config_contract_test.sh.
}

TEST(Validate, ModelCommonSubset) {
  // num_class > 1 needs softmax_cross_entropy / jrc_loss; the binary losses need num_class 1.
  EXPECT_TRUE(HasProblem(deepfm("model_config { num_class: 2 }"), "model_config.losses[0].binary_cross_entropy",
                         "needs num_class 1, got model_config.num_class 2"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { num_class: 0 }"), "model_config.num_class", "must be >= 1"));
  EXPECT_TRUE(NoProblems(deepfm("model_config { variational_dropout {} }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { variational_dropout { regularization_lambda: -0.1 } }"),
                         "model_config.variational_dropout.regularization_lambda", "must be a finite number >= 0"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { use_pareto_loss_weight: true }"),
                         "model_config.use_pareto_loss_weight", "weights the losses of several tasks"));
  EXPECT_TRUE(NotSupported(deepfm("model_config { losses { recon_loss {} } }"), "model_config.losses[1].recon_loss"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { recall_at_k {} } }"), "model_config.metrics[1].recall_at_k",
                         "not supported yet: model_config.metrics[1].recall_at_k: needs a match model's similarity"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { recall_at_k {} } }"),
                         "model_config.train_metrics[0].recall_at_k", "needs a match model's similarity"));

  // Softmax / JRC models: the binary loss of kDeepFm is replaced and its auc metric removed.
  auto classifier = [](const std::string& losses, const std::string& extra) {
    std::string text = kDeepFm;
    text.replace(text.find("losses { binary_cross_entropy {} }"), 34, losses);
    text.replace(text.find("metrics { auc {} }"), 18, "");
    return parse_pipeline_config_text(std::string(kValidateCommon) + text + extra, "classifier.config");
  };
  EXPECT_TRUE(NoProblems(classifier("losses { softmax_cross_entropy { label_smoothing: 0.1 } } num_class: 3",
                                    "model_config { metrics { multiclass_auc { average: 'weighted' } } "
                                    "metrics { accuracy { top_k: 2 } } train_metrics { accuracy {} } }")));
  EXPECT_TRUE(NoProblems(classifier("losses { jrc_loss { session_name: 'c1' alpha: 0.3 } } num_class: 2",
                                    "model_config { metrics { normalized_entropy {} } "
                                    "metrics { grouped_auc { grouping_key: 'c0' } } "
                                    "train_metrics { auc {} decay_rate: 0.5 decay_step: 10 } }")));
  EXPECT_TRUE(HasProblem(classifier("losses { softmax_cross_entropy {} }", ""),
                         "model_config.losses[0].softmax_cross_entropy", "needs model_config.num_class > 1"));
  EXPECT_TRUE(HasProblem(classifier("losses { softmax_cross_entropy { label_smoothing: 2 } } num_class: 2", ""),
                         "model_config.losses[0].softmax_cross_entropy.label_smoothing", "must be in [0, 1]"));
  EXPECT_TRUE(HasProblem(classifier("losses { jrc_loss { session_name: 'c1' } } num_class: 3", ""),
                         "model_config.losses[0].jrc_loss", "needs model_config.num_class 2, got 3"));
  EXPECT_TRUE(HasProblem(classifier("losses { jrc_loss { session_name: 'nope' } } num_class: 2", ""),
                         "model_config.losses[0].jrc_loss.session_name", "unknown feature 'nope'"));
  EXPECT_TRUE(HasProblem(classifier("losses { jrc_loss { session_name: 'd0' } } num_class: 2", ""),
                         "model_config.losses[0].jrc_loss.session_name", "'d0' is a dense feature"));
  EXPECT_TRUE(HasProblem(classifier("losses { jrc_loss { session_name: 'c1' alpha: 1.5 } } num_class: 2", ""),
                         "model_config.losses[0].jrc_loss.alpha", "must be in [0, 1]"));
  // auc (kDeepFm's metric) reads a binary prediction: refused with 3 classes.
  EXPECT_TRUE(HasProblem(classifier("losses { softmax_cross_entropy {} } num_class: 3",
                                    "model_config { metrics { auc {} } }"),
                         "model_config.metrics[0].auc", "needs a binary prediction (num_class 1 or 2), got num_class 3"));
  EXPECT_TRUE(HasProblem(classifier("losses { softmax_cross_entropy {} } num_class: 3",
                                    "model_config { metrics { accuracy { top_k: 4 } } }"),
                         "model_config.metrics[0].accuracy.top_k", "must be in [1, num_class = 3]"));
  EXPECT_TRUE(HasProblem(classifier("losses { softmax_cross_entropy {} } num_class: 3",
                                    "model_config { metrics { multiclass_auc { average: 'micro' } } }"),
                         "model_config.metrics[0].multiclass_auc.average", "must be \"macro\" or \"weighted\""));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { multiclass_auc {} } }"),
                         "model_config.metrics[1].multiclass_auc", "needs num_class > 1"));

  // Regression metrics on "y".
  EXPECT_TRUE(NoProblems(deepfm("model_config { losses { l2_loss {} } metrics { xauc { sample_ratio: 0.5 } } "
                                "metrics { grouped_xauc { grouping_key: 'c0' } } train_metrics { xauc {} } "
                                "train_metrics { mean_squared_error {} } train_metrics { mean_absolute_error {} } }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { xauc {} } }"), "model_config.metrics[1].xauc",
                         "add losses { l2_loss {} }"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { l2_loss {} } metrics { xauc { sample_ratio: 0 } } }"),
                         "model_config.metrics[1].xauc.sample_ratio", "must be in (0, 1]"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { l2_loss {} } metrics { grouped_xauc { grouping_key: '' } } }"),
                         "model_config.metrics[1].grouped_xauc.grouping_key", "must name a sparse feature"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { mean_absolute_error {} } }"),
                         "model_config.train_metrics[0].mean_absolute_error", "add losses { l2_loss {} }"));

  // Train metrics.
  EXPECT_TRUE(NoProblems(deepfm("model_config { train_metrics { auc {} } train_metrics { accuracy {} } }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { auc {} decay_rate: 1.5 } }"),
                         "model_config.train_metrics[0].decay_rate", "must be in [0, 1]"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { auc {} decay_step: 0 } }"),
                         "model_config.train_metrics[0].decay_step", "must be >= 1"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { auc { thresholds: 1 } } }"),
                         "model_config.train_metrics[0].auc.thresholds", "must be > 1"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { } }"), "model_config.train_metrics[0]",
                         "no metric type set"));
  EXPECT_TRUE(NoProblems(deepfm("model_config { metrics { grouped_auc { grouping_key: 'c0' } } "
                                "metrics { accuracy {} } metrics { normalized_entropy {} } "
                                "metrics { mean_absolute_error {} } metrics { mean_squared_error {} } "
                                "losses { l2_loss {} } losses { binary_focal_loss {} } }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { mean_squared_error {} } }"),
                         "model_config.metrics[1].mean_squared_error", "add losses { l2_loss {} }"));
  std::string regression = kDeepFm;
  regression.replace(regression.find("binary_cross_entropy {}"), 23, "l2_loss {}");
  EXPECT_TRUE(HasProblem(parse_pipeline_config_text(std::string(kValidateCommon) + regression, "l2.config"),
                         "model_config.metrics[0].auc", "needs prediction 'probs'"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { grouped_auc { grouping_key: '' } } }"),
                         "model_config.metrics[1].grouped_auc.grouping_key", "must name a sparse feature"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { grouped_auc { grouping_key: 'user' } } }"),
                         "model_config.metrics[1].grouped_auc.grouping_key", "unknown feature 'user'"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { accuracy { threshold: 2 } } }"),
                         "model_config.metrics[1].accuracy.threshold", "must be in [0, 1]"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { normalized_entropy { eta: 0.5 } } }"),
                         "model_config.metrics[1].normalized_entropy.eta", "must be in [0, 0.5)"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { binary_focal_loss { alpha: 1.5 } } }"),
                         "model_config.losses[1].binary_focal_loss.alpha", "must be in (0, 1)"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { binary_focal_loss { gamma: -1 } } }"),
                         "model_config.losses[1].binary_focal_loss.gamma", "must be >= 0"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { auc { thresholds: 1 } } }"),
                         "model_config.metrics[1].auc.thresholds", "must be > 1"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { binary_cross_entropy { label_smoothing: 1.5 } } }"),
                         "model_config.losses[1].binary_cross_entropy.label_smoothing", "must be in [0, 1]"));
  EXPECT_TRUE(NoProblems(deepfm("model_config { losses { binary_cross_entropy { label_smoothing: 1.0 } } }")));
  auto no_loss = deepfm();
  no_loss.mutable_model_config()->clear_losses();
  EXPECT_TRUE(HasProblem(no_loss, "model_config.losses", "needs at least one loss"));
}

TEST(Validate, ReportsEveryProblem) {
  auto c = deepfm("data_config { batch_size: 0 dataset_type: OdpsDataset } model_config { num_class: 3 }");
  const auto problems = validate(c);
  EXPECT_EQ(problems.size(), 3u) << dump(problems);
  try {
    check_valid(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("data_config.batch_size: must be > 0\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("data_config.dataset_type: not supported yet: data_config.dataset_type: OdpsDataset\n"),
              std::string::npos) << msg;
    EXPECT_NE(msg.find("model_config.losses[0].binary_cross_entropy: needs num_class 1, got model_config.num_class 3"),
              std::string::npos)
        << msg;
  }
}

}  // namespace validate_test
}  // namespace tzrec::config
