#include "feature/dense_embedding_settings.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace dense_embedding_settings_test {

using testing::error_of;
using testing::parse_config;

std::vector<FeatureInfo> infos(const std::string& features) {
  return build_feature_infos(parse_config("data_config { } " + features));
}

// The first ConfigError building `features` raises.
std::string config_error(const std::string& features) {
  return error_of<ConfigError>([&] { infos(features); });
}

TEST(DenseEmbeddingSettings, AutoDisAndMlpOfEachType) {
  auto fi = infos(R"pb(
    feature_configs { raw_feature { feature_name: "price" embedding_dim: 16 autodis { num_channels: 3 } } }
    feature_configs { raw_feature { feature_name: "pic" value_dim: 4 embedding_dim: 8 mlp {} } }
    feature_configs { lookup_feature { feature_name: "cnt" map: "user:kv" key: "item:cate" embedding_dim: 6
                                       autodis { num_channels: 5 temperature: 0.5 keep_prob: 0.25 } } }
    feature_configs { match_feature { feature_name: "hit" nested_map: "user:kkv" pkey: "item:cate" skey: "item:brand"
                                      embedding_dim: 4 mlp {} } }
    feature_configs { expr_feature { feature_name: "diff" expression: "a - b" variables: ["user:a", "item:b"]
                                     embedding_dim: 4 mlp {} } }
    feature_configs { raw_feature { feature_name: "plain" embedding_dim: 4 } }
  )pb");
  ASSERT_EQ(fi.size(), 6u);
  EXPECT_EQ(fi[0].dense_embedding, "autodis");
  EXPECT_FALSE(fi[0].is_sparse);
  EXPECT_EQ(fi[0].embedding_dim, 16);
  EXPECT_EQ(fi[0].value_dim, 1);
  EXPECT_EQ(fi[0].autodis_num_channels, 3);
  EXPECT_EQ(fi[0].autodis_temperature, 0.1f);  // TorchEasyRec's defaults
  EXPECT_EQ(fi[0].autodis_keep_prob, 0.8f);
  EXPECT_EQ(fi[1].dense_embedding, "mlp");
  EXPECT_EQ(fi[1].value_dim, 4);
  EXPECT_EQ(fi[1].embedding_dim, 8);
  EXPECT_EQ(fi[2].dense_embedding, "autodis");
  EXPECT_EQ(fi[2].autodis_num_channels, 5);
  EXPECT_EQ(fi[2].autodis_temperature, 0.5f);
  EXPECT_EQ(fi[2].autodis_keep_prob, 0.25f);
  EXPECT_EQ(fi[3].dense_embedding, "mlp");
  EXPECT_EQ(fi[3].value_dim, 1);
  EXPECT_EQ(fi[4].dense_embedding, "mlp");
  EXPECT_EQ(fi[5].dense_embedding, "");
}

// Where TorchEasyRec ignores the dense embedding (a warning says so here): sparse features, and
// raw / expr sequences.
TEST(DenseEmbeddingSettings, IgnoredWhereTorchEasyRecIgnoresIt) {
  auto fi = infos(R"pb(
    feature_configs { raw_feature { feature_name: "b" boundaries: [1, 2] embedding_dim: 4 autodis { num_channels: 3 } } }
    feature_configs { lookup_feature { feature_name: "l" map: "user:kv" key: "item:c" num_buckets: 10 embedding_dim: 4
                                       mlp {} } }
    feature_configs { sequence_raw_feature { feature_name: "s" sequence_length: 5 embedding_dim: 4 mlp {} } }
    feature_configs { sequence_feature { sequence_name: "click" sequence_length: 5
      features { expr_feature { feature_name: "e" expression: "a" variables: ["item:a"] embedding_dim: 4
                                autodis { num_channels: 2 } } } } }
  )pb");
  ASSERT_EQ(fi.size(), 4u);
  for (const FeatureInfo& f : fi) EXPECT_EQ(f.dense_embedding, "") << f.name;
  EXPECT_TRUE(fi[0].is_sparse);
  EXPECT_TRUE(fi[1].is_sparse);
  EXPECT_TRUE(fi[2].is_sequence);
}

TEST(DenseEmbeddingSettings, ConfigErrorsNameTheField) {
  EXPECT_EQ(config_error(R"pb(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 } }
      feature_configs { raw_feature { feature_name: "r" embedding_dim: 4 autodis { } } })pb"),
            "feature_configs[1].raw_feature.autodis.num_channels: must be > 0");
  EXPECT_EQ(config_error(R"pb(feature_configs { raw_feature { feature_name: "r" autodis { num_channels: 3 } } })pb"),
            "feature_configs[0].raw_feature.embedding_dim: must be > 0 with autodis (the width of the feature's dense "
            "embedding)");
  EXPECT_EQ(config_error(R"pb(feature_configs { raw_feature { feature_name: "r" value_dim: 2 embedding_dim: 4
                                                              autodis { num_channels: 3 } } })pb"),
            "feature_configs[0].raw_feature.autodis: value_dim is 2; AutoDis embeds one value per feature (as in "
            "TorchEasyRec) — use mlp for vectors");
  EXPECT_EQ(config_error(R"pb(feature_configs { raw_feature { feature_name: "r" embedding_dim: 4
                                                              autodis { num_channels: 3 temperature: 0 } } })pb"),
            "feature_configs[0].raw_feature.autodis.temperature: must be a finite number > 0, got 0");
  EXPECT_EQ(config_error(R"pb(feature_configs { raw_feature { feature_name: "r" embedding_dim: 4
                                                              autodis { num_channels: 3 keep_prob: nan } } })pb"),
            "feature_configs[0].raw_feature.autodis.keep_prob: must be a finite number, got nan");
  EXPECT_EQ(config_error(R"pb(feature_configs { lookup_feature { feature_name: "l" map: "user:kv" key: "item:c"
                                                                 value_dim: 0 embedding_dim: 4 mlp {} } })pb"),
            "feature_configs[0].lookup_feature.value_dim: 0 with mlp; the MLP embedding maps value_dim >= 1 numbers, "
            "set it");
  EXPECT_EQ(config_error(R"pb(feature_configs { raw_feature { feature_name: "r.x" embedding_dim: 4 mlp {} } })pb"),
            "feature_configs[0].raw_feature.feature_name: 'r.x' contains '.'; a feature with mlp names its parameters "
            "after itself (\"proj_w_<feature>.weight\"), so rename it");
  // Lookup and match sequences cannot run with a dense embedding in TorchEasyRec.
  EXPECT_EQ(config_error(R"pb(feature_configs { sequence_lookup_feature { feature_name: "l" map: "user:kv"
                                                  key: "item:c" sequence_length: 5 embedding_dim: 4 mlp {} } })pb"),
            "feature_configs[0].sequence_lookup_feature.mlp: sequence features have no dense embedding (TorchEasyRec's "
            "sequence groups take their value_dim floats per item); remove it");
  const std::string grouped = config_error(R"pb(feature_configs { sequence_feature { sequence_name: "click"
      sequence_length: 5 features { match_feature { feature_name: "m" nested_map: "user:kkv" pkey: "item:c"
                                                     skey: "item:b" embedding_dim: 4 autodis { num_channels: 2 } } } } })pb");
  EXPECT_EQ(grouped.rfind("feature_configs[0].sequence_feature.features[0].match_feature.autodis: sequence features", 0),
            0u)
      << grouped;
}

}  // namespace dense_embedding_settings_test
}  // namespace tzrec::feature
