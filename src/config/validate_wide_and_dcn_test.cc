// validate() of wide_and_deep, dcn_v1 and dcn_v2 (validate_wide_and_dcn.cc).
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace validate_wide_and_dcn_test {

using testing::HasProblem;
using testing::NoProblems;
using testing::NotSupported;

const char kWideDcnCommon[] = R"(
train_input_path: "train.csv"
model_dir: "m"
train_config {
  sparse_optimizer { sgd_optimizer { lr: 0.1 } constant_learning_rate {} }
  dense_optimizer { adam_optimizer { lr: 0.01 } constant_learning_rate {} }
  num_steps: 10
}
data_config { batch_size: 8 dataset_type: CsvDataset with_header: true label_fields: "label" }
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 8 } }
)";

// `model` is the body of model_config after its feature groups and before the losses.
protos::EasyRecConfig config_with(const std::string& groups, const std::string& model) {
  return parse_pipeline_config_text(std::string(kWideDcnCommon) + "model_config { " + groups + "\n" + model +
                                        "\n losses { binary_cross_entropy {} } metrics { auc {} } }",
                                    "test.config");
}

const char kWideDeepGroups[] = R"(
  feature_groups { group_name: "wide" feature_names: ["c0", "c1"] group_type: WIDE }
  feature_groups { group_name: "deep" feature_names: ["d0", "c0", "c1"] group_type: DEEP })";
const char kAllGroup[] = R"(feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1"] })";

TEST(ValidateWideAndDeep, ValidConfigs) {
  EXPECT_TRUE(NoProblems(config_with(kWideDeepGroups, "wide_and_deep { deep { hidden_units: [8, 4] } }")));
  EXPECT_TRUE(NoProblems(config_with(
      kWideDeepGroups,
      "wide_and_deep { deep { hidden_units: [8] } final { hidden_units: [4] } wide_embedding_dim: 2 }")));
}

TEST(ValidateWideAndDeep, Problems) {
  const char* model = "wide_and_deep { deep { hidden_units: [8] } }";
  EXPECT_TRUE(HasProblem(config_with(kAllGroup, model), "model_config.feature_groups",
                         "WideAndDeep needs a feature group named 'wide' (group_type: WIDE)"));
  EXPECT_TRUE(HasProblem(config_with(kAllGroup, model), "model_config.feature_groups",
                         "WideAndDeep needs a feature group named 'deep' (group_type: DEEP)"));
  EXPECT_TRUE(HasProblem(config_with(R"(
      feature_groups { group_name: "wide" feature_names: ["c0"] group_type: DEEP }
      feature_groups { group_name: "deep" feature_names: ["c0"] group_type: WIDE })",
                                     model),
                         "model_config.feature_groups[0].group_type", "WideAndDeep group 'wide' must be WIDE"));
  EXPECT_TRUE(HasProblem(
      config_with(kWideDeepGroups, "wide_and_deep { deep { hidden_units: [8] } wide_embedding_dim: 0 }"),
                         "model_config.wide_and_deep.wide_embedding_dim", "must be > 0"));
}

TEST(ValidateDCNV1, ValidConfig) {
  EXPECT_TRUE(NoProblems(config_with(
      kAllGroup, "dcn_v1 { cross { cross_num: 2 } deep { hidden_units: [8] } final { hidden_units: [4] } }")));
  // The default cross_num (3) is fine.
  EXPECT_TRUE(NoProblems(
      config_with(kAllGroup, "dcn_v1 { cross { } deep { hidden_units: [8] } final { hidden_units: [4] } }")));
}

TEST(ValidateDCNV1, Problems) {
  EXPECT_TRUE(HasProblem(config_with("", "dcn_v1 { cross {} deep { hidden_units: [8] } final { hidden_units: [4] } }"),
                         "model_config.feature_groups", "DCNV1 needs a feature group (it uses the first one)"));
  EXPECT_TRUE(HasProblem(
      config_with(kAllGroup,
                  "dcn_v1 { cross { cross_num: 0 } deep { hidden_units: [8] } final { hidden_units: [4] } }"),
      "model_config.dcn_v1.cross.cross_num", "must be >= 1, got 0"));
  // Missing required messages (the text parser of tests accepts partial messages).
  protos::EasyRecConfig c =
      config_with(kAllGroup, "dcn_v1 { cross {} deep { hidden_units: [8] } final { hidden_units: [4] } }");
  c.mutable_model_config()->mutable_dcn_v1()->clear_final();
  c.mutable_model_config()->mutable_dcn_v1()->clear_cross();
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v1.final", "required"));
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v1.cross", "required"));
}

TEST(ValidateDCNV2, ValidConfigs) {
  EXPECT_TRUE(NoProblems(config_with(kAllGroup, "dcn_v2 { cross { } final { hidden_units: [4] } }")));
  EXPECT_TRUE(NoProblems(config_with(kAllGroup, R"(dcn_v2 {
      backbone { hidden_units: [16] } cross { cross_num: 2 low_rank: 4 } deep { hidden_units: [8] }
      final { hidden_units: [4] } })")));
}

TEST(ValidateDCNV2, Problems) {
  EXPECT_TRUE(HasProblem(config_with("", "dcn_v2 { cross {} final { hidden_units: [4] } }"),
                         "model_config.feature_groups", "DCNV2 needs a feature group"));
  auto bad = config_with(kAllGroup, "dcn_v2 { cross { cross_num: 0 low_rank: 0 } final { hidden_units: [4] } }");
  EXPECT_TRUE(HasProblem(bad, "model_config.dcn_v2.cross.cross_num", "must be >= 1, got 0"));
  EXPECT_TRUE(HasProblem(bad, "model_config.dcn_v2.cross.low_rank", "must be >= 1, got 0"));
  protos::EasyRecConfig c = config_with(kAllGroup, "dcn_v2 { cross {} final { hidden_units: [4] } }");
  c.mutable_model_config()->mutable_dcn_v2()->clear_final();
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v2.final", "required"));
}

}  // namespace validate_wide_and_dcn_test
}  // namespace tzrec::config
