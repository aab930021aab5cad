#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/stream_batches.h"
#include "config/testing_pipelines.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace validate_test {

using testing::HasProblem;
using testing::NoProblems;
using testing::NotSupported;
using testing::dump;

using testing::deepfm;
using testing::edited;
using testing::mmoe;
using testing::multi_tower;

TEST(Validate, BaseConfigsAreValid) {
  EXPECT_TRUE(NoProblems(deepfm()));
  EXPECT_TRUE(NoProblems(multi_tower()));
  EXPECT_TRUE(NoProblems(mmoe()));
  EXPECT_TRUE(NoProblems(mmoe("model_config { use_pareto_loss_weight: true }")));
  EXPECT_NO_THROW(check_valid(deepfm()));
}

TEST(Validate, UnsupportedModels) {
  EXPECT_TRUE(NotSupported(deepfm("model_config { simple_multi_task {} }"), "model_config.simple_multi_task"));
}

TEST(Validate, UnsupportedFeatureFields) {
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { kv_dot_product { feature_name: 'x' kv_delimiter: 1 } }"),
                           "feature_configs[4].kv_dot_product.kv_delimiter"));
  // use_mask is checked where features are built (models/model_config_rules_test.cc, SampleMasks).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { sequence_overlap_feature { feature_name: 'x' use_mask: true } }")));
}

TEST(Validate, DataConfigSubset) {
  auto odps = deepfm("data_config { dataset_type: OdpsDataset }");
  EXPECT_TRUE(HasProblem(odps, "data_config.dataset_type",
                         "not supported yet: data_config.dataset_type: OdpsDataset"));
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: ParquetDataset }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: KafkaDataset }")));
  // Samplers are honoured by the config contract; a rank model with one is a config error when the
  // model is built (models/model_registry.cc; train/training_session tests).
  EXPECT_TRUE(NoProblems(
      deepfm("data_config { negative_sampler { input_path: 'x' num_sample: 1 item_id_field: 'c0' } }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { tdm_sampler { item_input_path: 'x' edge_input_path: 'y' "
                                "attr_fields: 'a' item_id_field: 'i' layer_num_sample: [0, 1] } }")));
  EXPECT_TRUE(NotSupported(deepfm("data_config { tdm_sampler { item_input_path: 'x' edge_input_path: 'y' "
                                  "predict_edge_input_path: 'z' attr_fields: 'a' item_id_field: 'i' "
                                  "num_eval_sample: 5 } }"),
                           "data_config.tdm_sampler.num_eval_sample"));
  // Shuffled training (data/shuffle_batch_source.h); a stream keeps its order, as in TorchEasyRec
  // (config/stream_batches.h: accepted, with a warning).
  EXPECT_TRUE(NoProblems(deepfm("data_config { shuffle: true shuffle_buffer_size: 8 }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: KafkaDataset shuffle: true }")));
  // Training masks: honoured fields, checked where features are built (feature/sample_mask.h;
  // models/model_config_rules_test.cc, SampleMasks).
  EXPECT_TRUE(NoProblems(deepfm("data_config { sample_mask_prob: 0.1 negative_sample_mask_prob: 1 }")));
  // input_fields_str is read by data/input_fields.h (its items are checked there).
  EXPECT_TRUE(NoProblems(deepfm("data_config { input_fields_str: 'a:INT64;' }")));
  // Batches cut by cost (data/cost_batch_source.h): the limit needs the cost column; not on streams.
  EXPECT_TRUE(NoProblems(deepfm("data_config { batch_cost_size: 10 sample_cost_field: 'c' }")));
  EXPECT_TRUE(HasProblem(deepfm("data_config { batch_cost_size: 10 }"), "data_config.batch_cost_size",
                         "needs data_config.sample_cost_field"));
  // A stream keeps batch_size rows per batch, as in TorchEasyRec (accepted, with a warning; the
  // cost column is then not needed either).
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: KafkaDataset batch_cost_size: 10 sample_cost_field: 'c' }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { dataset_type: KafkaDataset batch_cost_size: 10 }")));
  EXPECT_FALSE(shuffles_batches(deepfm("data_config { dataset_type: KafkaDataset shuffle: true }").data_config()));
  EXPECT_TRUE(shuffles_batches(deepfm("data_config { shuffle: true }").data_config()));
  EXPECT_FALSE(cuts_batches_by_cost(deepfm("data_config { dataset_type: KafkaDataset batch_cost_size: 10 }").data_config()));
  EXPECT_TRUE(cuts_batches_by_cost(deepfm("data_config { batch_cost_size: 10 sample_cost_field: 'c' }").data_config()));
  EXPECT_TRUE(NoProblems(deepfm("data_config { sample_cost_field: 'c' }")));  // a warning only
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

TEST(Validate, TrainConfigSubset) {
  // The optimizers, schedules, part optimizers, EMA, scaler, mixed precision and clipping are checked
  // where they are built: train/train_config_rules_test.cc.
  EXPECT_TRUE(NoProblems(deepfm("train_config { dense_optimizer { sgd_optimizer { lr: -1 } } }")));
  // TorchEasyRec's validate_delta_embedding_dump_config.
  EXPECT_TRUE(NoProblems(deepfm("train_config { delta_embedding_dump_config {} }")));
  EXPECT_TRUE(NoProblems(deepfm("train_config { delta_embedding_dump_config { dump_interval_minutes: 5 } }")));
  EXPECT_TRUE(HasProblem(deepfm("train_config { delta_embedding_dump_config { dump_interval_steps: 10 "
                                "dump_interval_minutes: 5 } }"),
                         "train_config.delta_embedding_dump_config",
                         "set only one of dump_interval_steps and dump_interval_minutes"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { delta_embedding_dump_config { dump_interval_steps: 0 } }"),
                         "train_config.delta_embedding_dump_config.dump_interval_steps", "must be > 0"));
  EXPECT_TRUE(HasProblem(deepfm("train_config { delta_embedding_dump_config { dump_interval_minutes: 0 } }"),
                         "train_config.delta_embedding_dump_config.dump_interval_minutes", "must be > 0"));
  EXPECT_TRUE(NotSupported(deepfm("train_config { delta_embedding_dump_config { feature_store_config { region: 'r' "
                                  "project_name: 'p' feature_view_name: 'v' } } }"),
                           "train_config.delta_embedding_dump_config.feature_store_config"));
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
  // Event-time checkpoints: the quorum is a fraction of the ranks (TorchEasyRec's rule).
  EXPECT_TRUE(HasProblem(deepfm("train_config { save_checkpoints_timestamp_interval: 60 "
                                "save_checkpoints_timestamp_quorum: 1.5 }"),
                         "train_config.save_checkpoints_timestamp_quorum",
                         "must be in (0, 1] (the fraction of ranks whose event time must pass a "
                         "checkpoint time), got 1.5"));
  EXPECT_TRUE(NoProblems(deepfm("train_config { save_checkpoints_timestamp_quorum: 0 }")));  // no trigger set
}

TEST(Validate, IdFeatureRules) {
  // zch and dynamicemb are honoured on combo features too (feature/combo_feature_test.cc).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { combo_feature { feature_name: 'z' embedding_dim: 4 expression: 'user:a' "
                                "expression: 'user:b' dynamicemb { max_capacity: 10 } } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { combo_feature { feature_name: 'z' embedding_dim: 4 expression: 'user:a' "
                                "expression: 'user:b' zch { zch_size: 10 lfu {} } } }")));
  // dynamicemb is honoured on id features (embedding/dynamic_embedding_bag_collection_test.cc), its
  // init_table too (read by create_dynamicemb_init_ckpt, train/dynamicemb_init_ckpt_test.cc).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 dynamicemb { max_capacity: 10 } } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 dynamicemb { max_capacity: 10 "
                                "init_table: 't.parquet' } } }")));
  // stub_type is honoured (feature/features_test.cc: FG modes and feature groups).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 stub_type: true } }")));
  // vocab_file is honoured (the file is read where the feature is built).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_file: 'v.txt' "
                                "default_bucketize_value: 1 } }")));
  auto weighted = edited(deepfm(), R"({"feature_configs[1].id_feature.weighted": true})");
  EXPECT_TRUE(NoProblems(weighted));  // FG_NONE parses k:w natively
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_list: ['a'] } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { id_feature { feature_name: 'z' embedding_dim: 4 vocab_dict: [{key: 'a' value: 2}] } }")));
  auto fp16 = edited(deepfm(), R"({"feature_configs[1].id_feature.data_type": "FP16"})");
  EXPECT_TRUE(NoProblems(fp16));
  auto fp8 = edited(deepfm(), R"({"feature_configs[1].id_feature.data_type": "FP8"})");
}

TEST(Validate, RawFeatureRules) {
  // Dense embeddings are honoured (their values are checked where the feature is built).
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { raw_feature { feature_name: 'r' embedding_dim: 4 autodis { num_channels: 3 temperature: 0.2 keep_prob: 0.5 } } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { raw_feature { feature_name: 'r' embedding_dim: 4 mlp {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { lookup_feature { feature_name: 'l' map: 'user:m' key: 'item:k' embedding_dim: 4 mlp {} } }")));
  EXPECT_TRUE(NoProblems(deepfm("feature_configs { raw_feature { feature_name: 'r' stub_type: true } }")));
}

TEST(Validate, ReportsEveryProblem) {
  auto c = deepfm("data_config { batch_size: 0 dataset_type: OdpsDataset } train_config { num_epochs: 1 }");
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
    EXPECT_NE(msg.find("train_config: set only one of num_steps, num_epochs"), std::string::npos) << msg;
  }
}

}  // namespace validate_test
}  // namespace tzrec::config
