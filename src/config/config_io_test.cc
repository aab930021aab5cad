#include <filesystem>
#include <fstream>
#include <regex>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace config_io_test {

using testing::error_of;

std::string fixture(const std::string& name) {
  return std::string(TZREC_SOURCE_DIR) + "/tests/configs/" + name;
}

TEST(ConfigIo, LoadsCriteoDeepFmFixture) {
  auto config = load_pipeline_config(fixture("deepfm_criteo_fg_none.config"));
  EXPECT_EQ(config.train_input_path(), "data/criteo/train_*.csv");
  ASSERT_EQ(config.feature_configs_size(), 39);
  EXPECT_EQ(feature_name(config.feature_configs(0)), "int_0");
  EXPECT_EQ(feature_type_name(config.feature_configs(0)), "raw_feature");
  EXPECT_EQ(feature_name(config.feature_configs(38)), "cat_25");
  EXPECT_EQ(feature_type_name(config.feature_configs(38)), "id_feature");
  EXPECT_EQ(config.data_config().delimiter(), "\t");
  EXPECT_EQ(config.data_config().input_fields_size(), 40);
  const auto& model = config.model_config();
  ASSERT_TRUE(model.has_deepfm());
  ASSERT_EQ(model.deepfm().deep().hidden_units_size(), 3);
  EXPECT_EQ(model.deepfm().deep().hidden_units(0), 512u);
  EXPECT_EQ(model.deepfm().final().hidden_units(0), 64u);
  EXPECT_EQ(model.feature_groups(0).group_type(), protos::WIDE);
  EXPECT_EQ(model.feature_groups(2).feature_names_size(), 39);
  EXPECT_TRUE(validate(config).empty());
}

TEST(ConfigIo, LoadsMultiTowerFgNormalFixture) {
  auto config = load_pipeline_config(fixture("multi_tower_fg_normal.config"));
  EXPECT_EQ(config.data_config().fg_mode(), protos::FG_NORMAL);
  const auto& gender = config.feature_configs(2).id_feature();
  EXPECT_EQ(gender.vocab_dict().at("2"), 3u);
  EXPECT_EQ(config.feature_configs(1).id_feature().vocab_list_size(), 6);
  EXPECT_EQ(config.feature_configs(6).raw_feature().boundaries_size(), 5);
  EXPECT_EQ(config.model_config().multi_tower().towers_size(), 2);
  for (const auto& p : validate(config)) ADD_FAILURE() << p.path << ": " << p.message;
}

TEST(ConfigIo, LoadsJsonFixture) {
  auto config = load_pipeline_config(fixture("deepfm_small.json"));
  EXPECT_EQ(config.data_config().batch_size(), 32u);
  EXPECT_EQ(config.data_config().dataset_type(), protos::CsvDataset);
  EXPECT_EQ(config.feature_configs(1).id_feature().num_buckets(), 100u);
  EXPECT_TRUE(config.feature_configs(2).id_feature().weighted());
  EXPECT_EQ(config.model_config().feature_groups(2).group_type(), protos::DEEP);
  EXPECT_FLOAT_EQ(config.train_config().dense_optimizer().sgd_optimizer().momentum(), 0.0f);
  for (const auto& p : validate(config)) ADD_FAILURE() << p.path << ": " << p.message;
}

TEST(ConfigIo, DefaultsMatchTorchEasyRec) {
  auto config = parse_pipeline_config_text(
      "data_config {} train_config { dense_optimizer { sgd_optimizer {} } "
      "sparse_optimizer { sgd_optimizer {} } } eval_config {} export_config {} "
      "feature_configs { id_feature {} } feature_configs { raw_feature {} } "
      "model_config { feature_groups {} metrics { auc {} } }",
      "defaults.config");
  const auto& data = config.data_config();
  EXPECT_EQ(data.batch_size(), 1024u);
  EXPECT_EQ(data.dataset_type(), protos::OdpsDataset);
  EXPECT_EQ(data.fg_encoded_multival_sep(), "\x03");
  EXPECT_EQ(data.num_workers(), 8u);
  EXPECT_TRUE(data.pin_memory());
  EXPECT_EQ(data.delimiter(), ",");
  EXPECT_EQ(data.fg_threads(), 1u);
  EXPECT_EQ(data.fg_mode(), protos::FG_NONE);
  EXPECT_EQ(data.shuffle_buffer_size(), 32u);
  EXPECT_EQ(data.odps_data_quota_name(), "pay-as-you-go");
  EXPECT_TRUE(data.in_order());
  const auto& train = config.train_config();
  EXPECT_FLOAT_EQ(train.dense_optimizer().sgd_optimizer().momentum(), 0.9f);
  EXPECT_FLOAT_EQ(train.dense_optimizer().sgd_optimizer().lr(), 0.002f);
  EXPECT_FLOAT_EQ(train.sparse_optimizer().sgd_optimizer().lr(), 0.002f);
  EXPECT_FLOAT_EQ(train.sparse_optimizer().sgd_optimizer().max_gradient(), 1.0f);
  EXPECT_EQ(train.save_checkpoints_steps(), 1000u);
  EXPECT_EQ(train.log_step_count_steps(), 100u);
  EXPECT_TRUE(train.use_tensorboard());
  EXPECT_EQ(train.grad_clipping().clipping_type(), "none");
  EXPECT_FLOAT_EQ(train.grad_scaler().init_scale(), 65536.0f);
  EXPECT_EQ(train.grad_scaler().growth_interval(), 2000u);
  EXPECT_FLOAT_EQ(train.save_checkpoints_timestamp_quorum(), 0.5f);
  EXPECT_EQ(config.eval_config().log_step_count_steps(), 10u);
  EXPECT_EQ(config.export_config().exporter_type(), "latest");
  EXPECT_EQ(config.export_config().best_exporter_metric(), "auc");
  const auto& id = config.feature_configs(0).id_feature();
  EXPECT_EQ(id.separator(), "\x1d");
  EXPECT_EQ(id.pooling(), "sum");
  EXPECT_EQ(id.data_type(), "FP32");
  EXPECT_TRUE(id.trainable());
  EXPECT_EQ(id.sequence_delim(), ";");
  const auto& raw = config.feature_configs(1).raw_feature();
  EXPECT_EQ(raw.default_value(), "0");
  EXPECT_EQ(raw.value_dim(), 1u);
  const auto& model = config.model_config();
  EXPECT_EQ(model.num_class(), 1u);
  EXPECT_EQ(model.kernel(), protos::PYTORCH);
  EXPECT_EQ(model.feature_groups(0).group_type(), protos::DEEP);
  EXPECT_EQ(model.metrics(0).auc().thresholds(), 200u);
  EXPECT_EQ(protos::MLP().activation(), "nn.ReLU");
  EXPECT_FLOAT_EQ(protos::ExponentialDecayLR().decay_factor(), 0.95f);
  EXPECT_FLOAT_EQ(protos::EMAConfig().decay(), 0.999f);
  EXPECT_EQ(protos::DeepFM().wide_embedding_dim(), 4u);
  EXPECT_EQ(protos::xDeepFM().wide_embedding_dim(), 16u);
  EXPECT_EQ(protos::DSSM().similarity(), protos::INNER_PRODUCT);
  EXPECT_EQ(protos::STU().contextual_seq_len(), -1);
  EXPECT_EQ(protos::TrainMetricConfig().decay_step(), 100u);
}

TEST(ConfigIo, FieldNumbersMatchTorchEasyRec) {
  auto number = [](const google::protobuf::Descriptor* d, const char* name) {
    const auto* f = d->FindFieldByName(name);
    return f ? f->number() : -1;
  };
  EXPECT_EQ(number(protos::ModelConfig::descriptor(), "deepfm"), 101);
  EXPECT_EQ(number(protos::ModelConfig::descriptor(), "sid_rqkmeans"), 601);
  EXPECT_EQ(number(protos::ModelConfig::descriptor(), "use_pareto_loss_weight"), 13);
  EXPECT_EQ(protos::ModelConfig::descriptor()->FindOneofByName("model")->field_count(), 27);
  EXPECT_EQ(number(protos::FeatureConfig::descriptor(), "sequence_combine_feature"), 113);
  EXPECT_EQ(number(protos::DataConfig::descriptor(), "fg_mode"), 20);
  EXPECT_EQ(number(protos::DataConfig::descriptor(), "tdm_sampler"), 105);
  EXPECT_EQ(number(protos::DenseOptimizer::descriptor(), "ema"), 202);
  EXPECT_EQ(number(protos::PartOptimizer::descriptor(), "rmsprop_optimizer"), 7);
  EXPECT_EQ(number(protos::SparseOptimizer::descriptor(),
                   "cosine_annealing_warm_restarts_learning_rate"), 105);
  EXPECT_EQ(number(protos::IdFeature::descriptor(), "embedding_constraints"), 50);
  EXPECT_EQ(number(protos::TaskTower::descriptor(), "train_metrics"), 20);
}

TEST(ConfigIo, PartialMessagesAreAccepted) {
  // group_name / group_type / expression / embedding_dim are proto2-required.
  auto config = parse_pipeline_config_text(
      "model_config { feature_groups { feature_names: 'a' } }\n"
      "feature_configs { id_feature { feature_name: 'a' } }\n",
      "partial.config");
  EXPECT_FALSE(config.IsInitialized());
  EXPECT_EQ(config.model_config().feature_groups(0).feature_names(0), "a");
}

TEST(ConfigIo, TextSyntaxUsedByShippedConfigs) {
  auto config = parse_pipeline_config_text(
      "# leading comment\n"
      "model_dir: 'single quoted'  # trailing comment\n"
      "data_config {\n"
      "  label_fields: ['clk', \"buy\"],\n"  // list + trailing comma
      "  fg_encoded_multival_sep: \"\\x02\";\n"
      "}\n"
      "feature_configs {\n"
      "  id_feature {\n"
      "    feature_name: \"cat\",\n"
      "    vocab_dict: [{key:\"a\" value:2}, {key: 'b', value: 3}]\n"
      "    vocab_list: []\n"
      "  }\n"
      "}\n"
      "feature_configs { raw_feature { feature_name: 'p' boundaries: [1.1, 2, 3e2] } }\n"
      "feature_configs { sequence_feature { sequence_name: 's' features: [{id_feature {feature_name: 'x'}}] } }\n"
      "model_config: { deepfm { deep { hidden_units: [512, 256] } } }\n",
      "syntax.config");
  EXPECT_EQ(config.model_dir(), "single quoted");
  ASSERT_EQ(config.data_config().label_fields_size(), 2);
  EXPECT_EQ(config.data_config().label_fields(1), "buy");
  EXPECT_EQ(config.data_config().fg_encoded_multival_sep(), "\x02");
  EXPECT_EQ(config.feature_configs(0).id_feature().vocab_dict().at("b"), 3u);
  ASSERT_EQ(config.feature_configs(1).raw_feature().boundaries_size(), 3);
  EXPECT_FLOAT_EQ(config.feature_configs(1).raw_feature().boundaries(2), 300.0f);
  EXPECT_EQ(feature_name(config.feature_configs(2)), "s");
  EXPECT_EQ(feature_type_name(config.feature_configs(2)), "sequence_feature");
  EXPECT_EQ(config.model_config().deepfm().deep().hidden_units(1), 256u);
}

TEST(ConfigIo, UnknownFieldReportsLineAndColumn) {
  const std::string err = error_of([] {
    parse_pipeline_config_text("model_dir: 'x'\ndata_config {\n  batch_sise: 3\n}\n", "my.config");
  });
  EXPECT_EQ(err.rfind("my.config:3:3: ", 0), 0u) << err;
  EXPECT_NE(err.find("batch_sise"), std::string::npos) << err;
}

TEST(ConfigIo, SyntaxErrorReportsLineAndColumn) {
  const std::string err = error_of([] {
    parse_pipeline_config_text("model_dir: 'x'\ndata_config {\n  batch_size 3\n}\n", "bad.config");
  });
  EXPECT_TRUE(std::regex_search(err, std::regex("^bad\\.config:3:[0-9]+: "))) << err;
  const std::string err2 = error_of([] {
    parse_pipeline_config_text("data_config { dataset_type: NoSuchDataset }", "enum.config");
  });
  EXPECT_EQ(err2.rfind("enum.config:1:", 0), 0u) << err2;
  EXPECT_NE(err2.find("NoSuchDataset"), std::string::npos) << err2;
}

TEST(ConfigIo, MissingFileNamesThePath) {
  const std::string err = error_of([] { load_pipeline_config("/nonexistent/dir/pipeline.config"); });
  EXPECT_NE(err.find("/nonexistent/dir/pipeline.config"), std::string::npos) << err;
}

TEST(ConfigIo, JsonErrorsNameFileAndPosition) {
  const std::string syntax = error_of([] {
    parse_pipeline_config_text("{\n  \"model_dir\": \"x\",\n  \"data_config\": {\n}", "a.json");
  });
  EXPECT_TRUE(std::regex_search(syntax, std::regex("^a\\.json:[0-9]+:[0-9]+: invalid JSON"))) << syntax;
  const std::string unknown = error_of([] {
    parse_pipeline_config_text("{\n  \"model_dir\": \"x\",\n  \"data_config\": {\"batch_sise\": 3}\n}",
                               "b.json");
  });
  EXPECT_EQ(unknown.rfind("b.json:", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("batch_sise"), std::string::npos) << unknown;
}

TEST(ConfigIo, FgEncodedRewrite) {
  auto mode = [](const std::string& data) {
    return parse_pipeline_config_text("data_config { " + data + " }", "x.config").data_config().fg_mode();
  };
  EXPECT_EQ(mode("fg_encoded: true fg_mode: FG_DAG"), protos::FG_NONE);
  EXPECT_EQ(mode("fg_encoded: false"), protos::FG_DAG);  // fg_threads defaults to 1
  EXPECT_EQ(mode("fg_encoded: false fg_threads: 0"), protos::FG_NORMAL);
  EXPECT_EQ(mode("fg_mode: FG_DAG"), protos::FG_DAG);  // fg_encoded unset: untouched
  auto json = parse_pipeline_config_text("{\"data_config\": {\"fg_encoded\": false, \"fg_threads\": 0}}",
                                         "x.json");
  EXPECT_EQ(json.data_config().fg_mode(), protos::FG_NORMAL);
}

TEST(ConfigIo, TextRoundTripAndSave) {
  auto config = load_pipeline_config(fixture("multi_tower_fg_normal.config"));
  config.set_model_dir("实验/模型");  // UTF-8 stays readable in the saved file
  const std::string text = to_text(config);
  EXPECT_NE(text.find("model_dir: \"实验/模型\""), std::string::npos);
  auto again = parse_pipeline_config_text(text, "roundtrip.config");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(config, again));

  const auto dir = std::filesystem::temp_directory_path() /
                   ("tzrec_config_test_" + std::to_string(::getpid())) / "nested";
  const std::string path = (dir / "pipeline.config").string();
  save_pipeline_config(config, path);
  auto loaded = load_pipeline_config(path);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(config, loaded));
  std::filesystem::remove_all(dir.parent_path());
}

TEST(ConfigIo, FeatureHelpers) {
  protos::FeatureConfig none;
  EXPECT_EQ(feature_name(none), "");
  EXPECT_EQ(feature_type_name(none), "");
  EXPECT_EQ(feature_message(none), nullptr);
  protos::FeatureConfig seq;
  seq.mutable_sequence_id_feature()->set_feature_name("click_seq");
  EXPECT_EQ(feature_name(seq), "click_seq");
  EXPECT_EQ(feature_type_name(seq), "sequence_id_feature");
  protos::FeatureConfig raw;
  raw.mutable_raw_feature()->set_feature_name("price");
  EXPECT_FALSE(is_sparse_feature(raw));
  raw.mutable_raw_feature()->add_boundaries(1.0f);
  raw.mutable_raw_feature()->set_embedding_dim(8);
  EXPECT_TRUE(is_sparse_feature(raw));
  EXPECT_EQ(feature_embedding_dim(raw), 8u);
  EXPECT_EQ(feature_message(raw)->GetDescriptor()->name(), "RawFeature");
}

}  // namespace config_io_test
}  // namespace tzrec::config
