// add_feature_info_to_config (TorchEasyRec's tools/add_feature_info_to_config,
// train/add_feature_info.h). The expected configs follow by hand from the tool's steps in
// TorchEasyRec's source: drops (features, sub-features, emptied sequences), then embedding_dim and
// boundary / hash_bucket_size per remaining feature with a row, then the dropped names out of the
// feature groups, emptied sequence groups and their encoders removed.
#include "train/add_feature_info.h"

#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "data/testing_util.h"
#include "models/testing.h"

namespace tzrec::train {
namespace add_feature_info_test {

using models::testing::error_of;
using V = std::vector<std::string>;

protos::EasyRecConfig config() {
  return config::parse_pipeline_config_text(R"(
    feature_configs { id_feature { feature_name: "a" expression: "user:a" hash_bucket_size: 10 embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "b" expression: "item:b" boundaries: [1, 2] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "c" expression: "item:c" num_buckets: 5 embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "d" expression: "item:d" num_buckets: 5 embedding_dim: 4 } }
    feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: ";"
      features { id_feature { feature_name: "x" expression: "item:x" hash_bucket_size: 10 embedding_dim: 4 } }
      features { id_feature { feature_name: "y" expression: "item:y" hash_bucket_size: 10 embedding_dim: 4 } } } }
    feature_configs { sequence_feature { sequence_name: "s2" sequence_length: 5 sequence_delim: ";"
      features { id_feature { feature_name: "z" expression: "item:z" hash_bucket_size: 10 embedding_dim: 4 } } } }
    model_config {
      feature_groups { group_name: "deep" feature_names: ["a", "b", "c", "d"] group_type: DEEP
        sequence_groups { group_name: "g1" feature_names: ["c", "s__x", "s__y"] }
        sequence_groups { group_name: "g2" feature_names: ["s2__z"] }
        sequence_encoders { din_encoder { input: "g1" attn_mlp { hidden_units: [4] } } }
        sequence_encoders { din_encoder { input: "g2" attn_mlp { hidden_units: [4] } } } }
      feature_groups { group_name: "only_c" feature_names: ["c"] group_type: DEEP }
      deepfm { deep { hidden_units: [4] } final { hidden_units: [4] } }
    })",
                                            "t.config");
}

FeatureInfoTable table() {
  FeatureInfoTable t;
  t.infos["a"] = {nlohmann::json::parse(R"({"embedding_dim": "32", "hash_bucket_size": "1000"})"), "t.csv line 2"};
  t.infos["b"] = {nlohmann::json::parse(R"({"embedding_dim": 8, "boundary": ["0.5", 3, "10"]})"), "t.csv line 3"};
  t.infos["c"] = {nlohmann::json::parse(R"({"embedding_dim": "8"})"), "t.csv line 4"};
  t.infos["s__x"] = {nlohmann::json::parse(R"({"embedding_dim": "16", "hash_bucket_size": 77})"), "t.csv line 5"};
  t.drops = {"c", "s__y", "s2__z"};
  return t;
}

TEST(AddFeatureInfo, DropsEditsAndGroupsAsTorchEasyRec) {
  protos::EasyRecConfig c = config();
  const AddFeatureInfoSummary s = apply_feature_info(table(), &c);
  EXPECT_EQ(s.dropped, 3);
  EXPECT_EQ(s.edited, 3);  // a, b, s__x; d has no row and stays as it was
  ASSERT_EQ(c.feature_configs_size(), 4);
  EXPECT_EQ(config::feature_name(c.feature_configs(0)), "a");
  EXPECT_EQ(c.feature_configs(0).id_feature().embedding_dim(), 32u);
  EXPECT_EQ(c.feature_configs(0).id_feature().hash_bucket_size(), 1000u);
  EXPECT_EQ(c.feature_configs(1).raw_feature().embedding_dim(), 8u);
  EXPECT_EQ(std::vector<float>(c.feature_configs(1).raw_feature().boundaries().begin(),
                               c.feature_configs(1).raw_feature().boundaries().end()),
            (std::vector<float>{0.5f, 3, 10}));
  EXPECT_EQ(config::feature_name(c.feature_configs(2)), "d");
  EXPECT_EQ(c.feature_configs(2).id_feature().embedding_dim(), 4u);
  const auto& seq = c.feature_configs(3).sequence_feature();
  EXPECT_EQ(seq.sequence_name(), "s");
  ASSERT_EQ(seq.features_size(), 1);
  EXPECT_EQ(seq.features(0).id_feature().feature_name(), "x");
  EXPECT_EQ(seq.features(0).id_feature().embedding_dim(), 16u);
  EXPECT_EQ(seq.features(0).id_feature().hash_bucket_size(), 77u);
  const auto& deep = c.model_config().feature_groups(0);
  EXPECT_EQ(V(deep.feature_names().begin(), deep.feature_names().end()), (V{"a", "b", "d"}));
  ASSERT_EQ(deep.sequence_groups_size(), 1);
  EXPECT_EQ(V(deep.sequence_groups(0).feature_names().begin(), deep.sequence_groups(0).feature_names().end()),
            (V{"s__x"}));
  ASSERT_EQ(deep.sequence_encoders_size(), 1);
  EXPECT_EQ(deep.sequence_encoders(0).din_encoder().input(), "g1");
  // A group left empty stays (with a warning).
  EXPECT_EQ(c.model_config().feature_groups(1).feature_names_size(), 0);
}

TEST(AddFeatureInfo, BadInfoNamesTheRowOrTheField) {
  auto fails = [](const std::string& feature, const std::string& info) {
    FeatureInfoTable t;
    t.infos[feature] = {nlohmann::json::parse(info), "t.csv line 7"};
    protos::EasyRecConfig c = config();
    return error_of([&] { apply_feature_info(t, &c); });
  };
  EXPECT_EQ(fails("a", R"({"hash_bucket_size": 5})"), "t.csv line 7: feature a: feature_info has no \"embedding_dim\"");
  EXPECT_EQ(fails("a", R"({"embedding_dim": "4.5"})"),
            "t.csv line 7: feature a: feature_info \"embedding_dim\" is \"4.5\"; it must be a non-negative integer");
  EXPECT_EQ(fails("b", R"({"embedding_dim": 4, "boundary": [1, "x"]})"),
            "t.csv line 7: feature b: feature_info \"boundary\" is [1,\"x\"]; it must be a list of numbers");
  EXPECT_EQ(fails("a", R"({"embedding_dim": 4, "boundary": [1]})"),
            "feature_configs[0].id_feature: IdFeature has no boundaries but t.csv line 7 sets it for feature a; fix "
            "the table's feature_info");
  EXPECT_EQ(fails("b", R"({"embedding_dim": 4, "hash_bucket_size": 9})"),
            "feature_configs[1].raw_feature: RawFeature has no hash_bucket_size but t.csv line 7 sets it for feature "
            "b; fix the table's feature_info");
}

TEST(AddFeatureInfo, TheCommandReadsACsvTableAndWritesTheConfig) {
  data::testing::TempDir dir;
  config::save_pipeline_config(config(), dir.file("t.config"));
  {
    std::ofstream t(dir.file("info.csv"));
    t << "feature,feature_info,message\n"
      << "a,\"{\"\"embedding_dim\"\": \"\"12\"\", \"\"hash_bucket_size\"\": \"\"300\"\"}\",\n"
      << "c,\"{\"\"embedding_dim\"\": \"\"8\"\"}\",\"low coverage, DROP IT\"\n"
      << "s__y,{},DROP IT\n";
  }
  AddFeatureInfoOptions o;
  o.template_model_config_path = dir.file("t.config");
  o.model_config_path = dir.file("out.config");
  o.config_table_path = dir.file("info.csv");
  const AddFeatureInfoSummary s = add_feature_info_to_config(o);
  EXPECT_EQ(s.dropped, 2);
  EXPECT_EQ(s.edited, 1);
  const protos::EasyRecConfig out = config::load_pipeline_config(dir.file("out.config"));
  EXPECT_EQ(out.feature_configs(0).id_feature().embedding_dim(), 12u);
  EXPECT_EQ(out.feature_configs(0).id_feature().hash_bucket_size(), 300u);
  EXPECT_EQ(out.feature_configs_size(), 5);  // a, b, d, s (x), s2 (z)
  // A feature_info that is not a JSON object, and the default OdpsReader for another path.
  {
    std::ofstream t(dir.file("bad.csv"));
    t << "feature,feature_info,message\n" << "a,[1],\n";
  }
  o.config_table_path = dir.file("bad.csv");
  const std::string bad = error_of([&] { add_feature_info_to_config(o); });
  EXPECT_NE(bad.find("bad.csv line 2 column feature_info: feature a: feature_info \"[1]\" is not a JSON object"), std::string::npos)
      << bad;
  o.config_table_path = "odps://project/tables/feature_info";
  EXPECT_THROW(add_feature_info_to_config(o), NotSupportedError);
}

}  // namespace add_feature_info_test
}  // namespace tzrec::train
