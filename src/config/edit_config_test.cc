#include <functional>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace edit_config_test {

using testing::error_of;

protos::EasyRecConfig criteo() {
  return load_pipeline_config(std::string(TZREC_SOURCE_DIR) +
                              "/tests/configs/deepfm_criteo_fg_none.config");
}

TEST(EditConfig, DottedScalarPaths) {
  auto config = criteo();
  edit_config(&config, R"({"model_dir": "new_dir", "data_config.batch_size": 32,
                           "train_config.num_epochs": "3", "data_config.with_header": true,
                           "train_config.sparse_optimizer.adagrad_optimizer.lr": 0.05,
                           "data_config.dataset_type": "ParquetDataset"})");
  EXPECT_EQ(config.model_dir(), "new_dir");
  EXPECT_EQ(config.data_config().batch_size(), 32u);
  EXPECT_EQ(config.train_config().num_epochs(), 3u);
  EXPECT_TRUE(config.data_config().with_header());
  EXPECT_FLOAT_EQ(config.train_config().sparse_optimizer().adagrad_optimizer().lr(), 0.05f);
  EXPECT_EQ(config.data_config().dataset_type(), protos::ParquetDataset);
}

TEST(EditConfig, IndexAndRepeatedScalarValue) {
  auto config = criteo();
  edit_config(&config, R"({"feature_configs[0].raw_feature.boundaries": [4, 5, 6, 7],
                           "feature_configs[-1].id_feature.embedding_dim": 4,
                           "model_config.deepfm.deep.hidden_units[1]": 100})");
  const auto& b = config.feature_configs(0).raw_feature().boundaries();
  ASSERT_EQ(b.size(), 4);
  EXPECT_FLOAT_EQ(b[3], 7.0f);
  EXPECT_EQ(config.feature_configs(38).id_feature().embedding_dim(), 4u);
  EXPECT_EQ(config.model_config().deepfm().deep().hidden_units(1), 100u);
  EXPECT_EQ(config.model_config().deepfm().deep().hidden_units(2), 128u);
}

TEST(EditConfig, SliceAll) {
  auto config = criteo();
  edit_config(&config, R"({"model_config.feature_groups[:].group_type": "DEEP"})");
  for (const auto& g : config.model_config().feature_groups()) EXPECT_EQ(g.group_type(), protos::DEEP);
}

TEST(EditConfig, SliceRange) {
  auto config = criteo();
  // Features 13.. are the id features; raw features 0..12 must stay untouched.
  edit_config(&config, R"({"feature_configs[13:15].id_feature.embedding_dim": 8,
                           "feature_configs[-2:].id_feature.embedding_dim": 32})");
  for (int i = 0; i < 13; ++i) EXPECT_TRUE(config.feature_configs(i).has_raw_feature()) << i;
  EXPECT_EQ(config.feature_configs(13).id_feature().embedding_dim(), 8u);
  EXPECT_EQ(config.feature_configs(14).id_feature().embedding_dim(), 8u);
  EXPECT_EQ(config.feature_configs(15).id_feature().embedding_dim(), 16u);
  EXPECT_EQ(config.feature_configs(36).id_feature().embedding_dim(), 16u);
  EXPECT_EQ(config.feature_configs(37).id_feature().embedding_dim(), 32u);
  EXPECT_EQ(config.feature_configs(38).id_feature().embedding_dim(), 32u);
}

TEST(EditConfig, SelectorByStringField) {
  auto config = criteo();
  edit_config(&config, R"({"feature_configs[id_feature.feature_name=cat_3].id_feature.embedding_dim": 64})");
  for (const auto& f : config.feature_configs()) {
    if (feature_name(f) == "cat_3") {
      EXPECT_EQ(f.id_feature().embedding_dim(), 64u);
    } else if (f.has_id_feature()) {
      EXPECT_EQ(f.id_feature().embedding_dim(), 16u);
    } else {
      EXPECT_TRUE(f.has_raw_feature());  // selector evaluation does not create id_feature
    }
  }
  edit_config(&config, R"({"model_config.feature_groups[group_name=fm].group_type": "WIDE"})");
  EXPECT_EQ(config.model_config().feature_groups(1).group_type(), protos::WIDE);
  EXPECT_EQ(config.model_config().feature_groups(2).group_type(), protos::DEEP);
}

TEST(EditConfig, SelectorWithNumericComparison) {
  auto config = criteo();
  edit_config(&config, R"({"feature_configs[id_feature.num_buckets>=5000000].id_feature.embedding_dim": 8})");
  int changed = 0;
  for (const auto& f : config.feature_configs()) {
    if (f.has_id_feature() && f.id_feature().embedding_dim() == 8) {
      ++changed;
      EXPECT_GE(f.id_feature().num_buckets(), 5000000u);
    }
  }
  EXPECT_EQ(changed, 4);
  // String comparison is lexicographic, like Python: only cat_8 and cat_9 are > cat_7.
  edit_config(&config, R"({"feature_configs[id_feature.feature_name>cat_7].id_feature.pooling": "mean"})");
  int mean = 0;
  for (const auto& f : config.feature_configs()) mean += f.has_id_feature() && f.id_feature().pooling() == "mean";
  EXPECT_EQ(mean, 2);
  EXPECT_EQ(config.feature_configs(13 + 8).id_feature().pooling(), "mean");
  EXPECT_EQ(config.feature_configs(13 + 9).id_feature().pooling(), "mean");
}

TEST(EditConfig, MultipleKeysAndValues) {
  auto config = criteo();
  edit_config(&config, R"({"data_config.batch_size;train_config.num_steps": "64;7"})");
  EXPECT_EQ(config.data_config().batch_size(), 64u);
  EXPECT_EQ(config.train_config().num_steps(), 7u);
}

TEST(EditConfig, MessageValues) {
  auto config = criteo();
  edit_config(&config, R"({"model_config.deepfm.deep": "{hidden_units: [32, 16] dropout_ratio: 0.1}",
                           "train_config.sparse_optimizer": "sgd_optimizer { lr: 0.1 } constant_learning_rate {}",
                           "data_config.input_fields": "[{input_name: 'a'}, {input_name: 'b' input_type: STRING}]",
                           "model_config.metrics[0]": "{auc {thresholds: 50}}"})");
  const auto& deep = config.model_config().deepfm().deep();
  ASSERT_EQ(deep.hidden_units_size(), 2);
  EXPECT_EQ(deep.hidden_units(0), 32u);
  EXPECT_TRUE(config.train_config().sparse_optimizer().has_sgd_optimizer());
  EXPECT_FALSE(config.train_config().sparse_optimizer().has_adagrad_optimizer());
  ASSERT_EQ(config.data_config().input_fields_size(), 2);
  EXPECT_EQ(config.data_config().input_fields(1).input_type(), protos::STRING);
  EXPECT_EQ(config.model_config().metrics(0).auc().thresholds(), 50u);
}

TEST(EditConfig, BadPathsAndValues) {
  auto config = criteo();
  std::string err = error_of([&] { edit_config(&config, R"({"data_config.batch_sise": 3})"); });
  EXPECT_NE(err.find("data_config.batch_sise"), std::string::npos) << err;
  EXPECT_NE(err.find("no field 'batch_sise'"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"feature_configs[99].id_feature.embedding_dim": 3})"); });
  EXPECT_NE(err.find("feature_configs[99]"), std::string::npos) << err;
  EXPECT_NE(err.find("out of range"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"data_config.batch_size": "many"})"); });
  EXPECT_NE(err.find("'many'"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"data_config.batch_size": -1})"); });
  EXPECT_NE(err.find("'-1'"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"data_config.with_header": "yes"})"); });
  EXPECT_NE(err.find("not a bool"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"data_config[0].batch_size": 1})"); });
  EXPECT_NE(err.find("not a repeated field"), std::string::npos) << err;
  err = error_of([&] { edit_config(&config, R"({"model_config.deepfm.deep": "{hidden_units: [}"})"); });
  EXPECT_NE(err.find("cannot parse"), std::string::npos) << err;
  EXPECT_THROW(edit_config(&config, "{not json"), ConfigError);
  EXPECT_THROW(edit_config(&config, "[1, 2]"), ConfigError);
}

}  // namespace edit_config_test
}  // namespace tzrec::config
