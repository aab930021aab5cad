#include "feature/features.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace features_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;

using testing::parse_config;

std::vector<FeatureInfo> infos(const std::string& features, const std::string& data = "") {
  return build_feature_infos(parse_config("data_config { " + data + " } " + features));
}

TEST(BuildFeatureInfos, NumEmbeddingsPrecedence) {
  auto fi = infos(R"(
    feature_configs { id_feature { feature_name: "a" embedding_dim: 8 hash_bucket_size: 100
                                   num_buckets: 7 vocab_list: ["x", "y"] } }
    feature_configs { id_feature { feature_name: "b" embedding_dim: 8 num_buckets: 7
                                   vocab_list: ["x", "y"] } }
    feature_configs { id_feature { feature_name: "c" embedding_dim: 8 vocab_list: ["x", "y", "z"]
                                   vocab_dict: [{key: "x" value: 20}] } }
    feature_configs { id_feature { feature_name: "d" embedding_dim: 8 vocab_list: ["x", "y", "z"]
                                   default_bucketize_value: 0 } }
    feature_configs { id_feature { feature_name: "e" embedding_dim: 8
                                   vocab_dict: [{key: "x" value: 2}, {key: "y" value: 5}] } }
  )");
  ASSERT_EQ(fi.size(), 5u);
  EXPECT_EQ(fi[0].num_embeddings, 100);
  EXPECT_EQ(fi[1].num_embeddings, 7);
  EXPECT_EQ(fi[2].num_embeddings, 5);  // [default, <OOV>, x, y, z]
  EXPECT_EQ(fi[3].num_embeddings, 3);  // list as-is with default_bucketize_value
  EXPECT_EQ(fi[4].num_embeddings, 6);  // max id 5 + 1
  for (const auto& f : fi) {
    EXPECT_TRUE(f.is_sparse);
    EXPECT_EQ(f.type, "id_feature");
  }
}

TEST(BuildFeatureInfos, TableSettings) {
  auto fi = infos(R"(
    feature_configs { id_feature { feature_name: "user_id" embedding_dim: 16 num_buckets: 10 } }
    feature_configs { id_feature { feature_name: "tags" embedding_dim: 4 hash_bucket_size: 50
        embedding_name: "shared_tags" pooling: "MEAN" weighted: true trainable: false
        init_fn: "nn.init.uniform_,a=-0.01,b=0.01" data_type: "FP16" } }
    feature_configs { raw_feature { feature_name: "price" boundaries: [1, 2, 3] embedding_dim: 8 } }
    feature_configs { raw_feature { feature_name: "vec" value_dim: 3 } }
  )");
  ASSERT_EQ(fi.size(), 4u);
  EXPECT_EQ(fi[0].embedding_name, "user_id_emb");
  EXPECT_EQ(fi[0].embedding_dim, 16);
  EXPECT_EQ(fi[0].pooling, "sum");
  EXPECT_FALSE(fi[0].weighted);
  EXPECT_TRUE(fi[0].trainable);
  EXPECT_EQ(fi[0].data_type, "FP32");
  EXPECT_EQ(fi[1].embedding_name, "shared_tags");
  EXPECT_EQ(fi[1].pooling, "mean");
  EXPECT_TRUE(fi[1].weighted);
  EXPECT_FALSE(fi[1].trainable);
  EXPECT_EQ(fi[1].init_fn, "nn.init.uniform_,a=-0.01,b=0.01");
  EXPECT_EQ(fi[1].data_type, "FP16");
  EXPECT_TRUE(fi[2].is_sparse);
  EXPECT_EQ(fi[2].type, "raw_feature");
  EXPECT_EQ(fi[2].num_embeddings, 4);
  EXPECT_EQ(fi[2].embedding_name, "price_emb");
  EXPECT_FALSE(fi[3].is_sparse);
  EXPECT_EQ(fi[3].value_dim, 3);
  EXPECT_EQ(fi[3].num_embeddings, 0);
}

TEST(BuildFeatureInfos, UnsupportedTypesAndOptions) {
  EXPECT_EQ(
      error_of<NotSupportedError>([] {
        infos(
            R"(feature_configs { id_feature { feature_name: "a" expression: "user:a" embedding_dim: 4
                                                      num_buckets: 3 } }
                       feature_configs { overlap_feature { feature_name: "c" query: "user:a"
                                                           title: "item:b" method: "proximity_min_cover" } })",
            "fg_mode: FG_NORMAL");
      }),
      "not supported yet: feature_configs[1].overlap_feature.method 'proximity_min_cover'");
  EXPECT_EQ(error_of<NotSupportedError>([] {
              infos(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5
                           features { combine_feature { feature_name: "c" expression: "item:v" combiner: "gap_max" } }
                           } })",
                    "fg_mode: FG_NORMAL");
            }),
            "not supported yet: feature_configs[0].sequence_feature.features[0].combine_feature.combiner 'gap_max'");
}

// Rules only construction checks (check_config runs it): each error names its field.
TEST(BuildFeatureInfos, FieldRulesOfIdAndRawFeatures) {
  auto config_error = [](const std::string& features, const std::string& data = "") {
    return error_of<ConfigError>([&] { infos(features, data); });
  };
  const std::string fg = "fg_mode: FG_NORMAL";
  EXPECT_NE(config_error(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 3 } })",
                         fg)
                .find("feature_configs[0].id_feature.expression: '' is not 'side:input_name'"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { id_feature { feature_name: "a" expression: "items:a" embedding_dim: 4
                                                            num_buckets: 3 } })",
                         fg)
                .find("feature_configs[0].id_feature.expression: side 'items' of 'items:a' is not user, item, context, feature or const"),
            std::string::npos);
  // FG_DAG: a feature: input names a feature of the config (fg_dag.h).
  EXPECT_NE(config_error(R"(feature_configs { id_feature { feature_name: "a" expression: "feature:b" embedding_dim: 4
                                                            num_buckets: 3 } })",
                         "fg_mode: FG_DAG")
                .find("feature_configs[0].id_feature: input 'feature:b' names no feature"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { raw_feature { feature_name: "r" expression: "user:r"
                                                             normalizer: "method=cube" } })",
                         fg)
                .find("feature_configs[0].raw_feature.normalizer"),
            std::string::npos);
  // embedding_dim unset is not an error here: TorchEasyRec builds a table only for the features a group
  // uses (embedding/embedding_config.h: require_embedding_dim).
  EXPECT_EQ(config_error(R"(feature_configs { id_feature { feature_name: "a" num_buckets: 3 } })"), "<no error of the expected type>");
  EXPECT_NE(config_error(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 3
                                                            data_type: "FP8" } })")
                .find("feature_configs[0].id_feature.data_type: 'FP8' is not FP32 or FP16"),
            std::string::npos);
  EXPECT_EQ(config_error(R"(feature_configs { raw_feature { feature_name: "r" boundaries: [1, 2] } })"), "<no error of the expected type>");
  EXPECT_NE(config_error(R"(feature_configs { raw_feature { feature_name: "r" value_dim: 0 } })")
                .find("feature_configs[0].raw_feature.value_dim: must be >= 1"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { raw_feature { } })").find("feature_configs[0].raw_feature.feature_name"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { })").find("feature_configs[0]: no feature type is set"),
            std::string::npos);
}

// stub_type features do not reach the model (TorchEasyRec's data_parser skips them): no FeatureInfo,
// and a feature group naming one is a config error at the group's entry.
TEST(BuildFeatureInfos, StubFeaturesAreNotModelInputs) {
  const std::string features = R"(
    feature_configs { raw_feature { feature_name: "a" expression: "user:a" stub_type: true } }
    feature_configs { raw_feature { feature_name: "b" expression: "feature:a" boundaries: [1] embedding_dim: 4 } })";
  auto fi = infos(features, "fg_mode: FG_DAG");
  ASSERT_EQ(fi.size(), 1u);
  EXPECT_EQ(fi[0].name, "b");
  std::string msg = error_of<ConfigError>([&] {
    infos(features + R"( model_config { feature_groups { group_name: "deep" feature_names: ["b", "a"] } })",
          "fg_mode: FG_DAG");
  });
  EXPECT_NE(msg.find("model_config.feature_groups[0].feature_names[1]: 'a' is a stub_type feature"), std::string::npos)
      << msg;
}

TEST(BuildFeatureInfos, ConfigErrorsNameTheField) {
  std::string msg = error_of<ConfigError>(
      [] { infos(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 } })"); });
  EXPECT_NE(msg.find("feature_configs[0].id_feature: set one of hash_bucket_size, num_buckets"),
            std::string::npos)
      << msg;
  // embedding_dim unset: accepted for a feature no group uses (the group checks it).
  EXPECT_EQ(infos(R"(feature_configs { id_feature { feature_name: "a" num_buckets: 4 } })")[0].embedding_dim, 0);
  msg = error_of<ConfigError>([] {
    infos(
        R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 pooling: "max" } })");
  });
  EXPECT_NE(msg.find("feature_configs[0].id_feature.pooling: 'max' is not sum or mean"),
            std::string::npos)
      << msg;
  msg = error_of<ConfigError>([] {
    infos(
        R"(feature_configs { raw_feature { feature_name: "p" boundaries: [1, 3, 2] embedding_dim: 4 } })");
  });
  EXPECT_NE(msg.find("feature_configs[0].raw_feature.boundaries: must be strictly increasing"),
            std::string::npos)
      << msg;
  msg = error_of<ConfigError>([] {
    infos(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 } }
             feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 } })");
  });
  EXPECT_NE(msg.find("feature_configs[1].id_feature.feature_name: 'a' is used by another feature"),
            std::string::npos)
      << msg;
  msg = error_of<ConfigError>([] {
    infos(
        R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 embedding_name: "t" } }
             feature_configs { id_feature { feature_name: "b" embedding_dim: 4 num_buckets: 5 embedding_name: "t" } })");
  });
  EXPECT_NE(msg.find("table 't' is shared"), std::string::npos) << msg;
  // FG modes: vocab ids must fit the table; default_bucketize_value too.
  msg = error_of<ConfigError>([] {
    infos(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 expression: "user:a"
                vocab_dict: [{key: "x" value: 2}] default_bucketize_value: 3 } })",
          "fg_mode: FG_NORMAL");
  });
  EXPECT_NE(msg.find("feature_configs[0].id_feature.default_bucketize_value: 3 is outside the "
                     "table [0, 3)"),
            std::string::npos)
      << msg;
  msg = error_of<ConfigError>([] {
    infos(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 4 } })",
          "fg_mode: FG_DAG");
  });
  EXPECT_NE(msg.find("feature_configs[0].id_feature.expression: '' is not 'side:input_name'"),
            std::string::npos)
      << msg;
}

}  // namespace features_test
}  // namespace tzrec::feature
