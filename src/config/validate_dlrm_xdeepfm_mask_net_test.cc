// validate() of dlrm, xdeepfm, mask_net and dbmtl.mask_net (validate_dlrm_xdeepfm_mask_net.cc).
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace validate_dlrm_xdeepfm_mask_net_test {

using testing::HasProblem;
using testing::NoProblems;
using testing::NotSupported;

const char kDlrmCommon[] = R"(
train_input_path: "train.csv"
model_dir: "m"
train_config {
  sparse_optimizer { sgd_optimizer { lr: 0.1 } constant_learning_rate {} }
  dense_optimizer { adam_optimizer { lr: 0.01 } constant_learning_rate {} }
  num_steps: 10
}
data_config { batch_size: 8 dataset_type: CsvDataset with_header: true label_fields: "label" }
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { raw_feature { feature_name: "d1" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c2" hash_bucket_size: 100 embedding_dim: 8 } }
)";

// `model` is the body of model_config after its feature groups and before the losses.
protos::EasyRecConfig dlrm_config_with(const std::string& groups, const std::string& model) {
  return parse_pipeline_config_text(std::string(kDlrmCommon) + "model_config { " + groups + "\n" + model +
                                        "\n losses { binary_cross_entropy {} } metrics { auc {} } }",
                                    "test.config");
}

const char kDlrmGroups[] = R"(
  feature_groups { group_name: "dense" feature_names: ["d0", "d1"] }
  feature_groups { group_name: "sparse" feature_names: ["c0", "c1"] })";
const char kDlrm[] = "dlrm { dense_mlp { hidden_units: [8, 4] } final { hidden_units: [4] } }";
const char kDlrmWideDeepGroups[] = R"(
  feature_groups { group_name: "wide" feature_names: ["c0", "c1", "c2"] group_type: WIDE }
  feature_groups { group_name: "deep" feature_names: ["d0", "c0", "c1", "c2"] group_type: DEEP })";
const char kXDeepFM[] =
    "xdeepfm { cin { cin_layer_size: [8, 4] } deep { hidden_units: [8] } final { hidden_units: [4] } }";
const char kDlrmAllGroup[] = R"(feature_groups { group_name: "all" feature_names: ["d0", "c0", "c2"] })";

TEST(ValidateDLRM, ValidConfigs) {
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmGroups, kDlrm)));
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmGroups, "dlrm { dense_mlp { hidden_units: [4] } arch_with_sparse: false "
                                                  "final { hidden_units: [4] } }")));
  // A single group is the sparse group; "sparse" alone (no dense part) too.
  EXPECT_TRUE(NoProblems(dlrm_config_with(R"(feature_groups { group_name: "emb" feature_names: ["c0", "c1"] })",
                                     "dlrm { final { hidden_units: [4] } }")));
  EXPECT_TRUE(NoProblems(dlrm_config_with(R"(feature_groups { group_name: "sparse" feature_names: ["c0", "c1"] }
                                        feature_groups { group_name: "other" feature_names: ["d0"] })",
                                     "dlrm { final { hidden_units: [4] } }")));
}

TEST(ValidateDLRM, Problems) {
  const std::string p = "model_config.dlrm";
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                        feature_groups { group_name: "emb" feature_names: ["c0"] })",
                                     kDlrm),
                         "model_config.feature_groups", "DLRM needs a feature group named 'sparse' (group_type: DEEP)"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                        feature_groups { group_name: "sparse" feature_names: ["c0", "c2"] })",
                                     kDlrm),
                         "model_config.feature_groups[1].feature_names[1]",
                         "DLRM's sparse group needs equal embedding_dim: 'c2' has 8, 'c0' has 4"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                        feature_groups { group_name: "sparse" feature_names: ["c0", "d1"] })",
                                     kDlrm),
                         "model_config.feature_groups[1].feature_names[1]", "'d1' is dense"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                        feature_groups { group_name: "sparse" feature_names: ["c0"] group_type: WIDE })",
                                     kDlrm),
                         "model_config.feature_groups[1].group_type", "DLRM group 'sparse' must be DEEP"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { dense_mlp { hidden_units: [8, 3] } final { hidden_units: [4] } }"),
                         p + ".dense_mlp.hidden_units[1]",
                         "the last hidden unit must equal the embedding_dim of the 'sparse' group (4), got 3"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { final { hidden_units: [4] } }"), p + ".dense_mlp",
                         "required with a 'dense' feature group"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { dense_mlp { hidden_units: [4] } }"), p + ".final", "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with("", kDlrm), "model_config.feature_groups", "DLRM needs feature groups"));
}

TEST(ValidateXDeepFM, ValidConfigs) {
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmWideDeepGroups, kXDeepFM)));
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [3] } deep { hidden_units: [8] } "
                                                      "final { hidden_units: [4] } wide_embedding_dim: 4 }")));
}

TEST(ValidateXDeepFM, Problems) {
  const std::string p = "model_config.xdeepfm";
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmAllGroup, kXDeepFM), "model_config.feature_groups",
                         "xDeepFM needs a feature group named 'wide' (group_type: WIDE)"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmAllGroup, kXDeepFM), "model_config.feature_groups",
                         "xDeepFM needs a feature group named 'deep' (group_type: DEEP)"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(
      feature_groups { group_name: "wide" feature_names: ["c0"] group_type: DEEP }
      feature_groups { group_name: "deep" feature_names: ["c0"] })",
                                     kXDeepFM),
                         "model_config.feature_groups[0].group_type", "xDeepFM group 'wide' must be WIDE"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { } deep { hidden_units: [8] } final { hidden_units: [4] } }"),
                         p + ".cin.cin_layer_size", "needs at least one layer"));
  EXPECT_TRUE(HasProblem(
      dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [4, 0] } deep { hidden_units: [8] } final { hidden_units: [4] } }"),
      p + ".cin.cin_layer_size[1]", "must be > 0"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { deep { hidden_units: [8] } final { hidden_units: [4] } }"),
                         p + ".cin", "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [4] } final { hidden_units: [4] } }"),
                         p + ".deep", "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [4] } deep { hidden_units: [8] } }"),
                         p + ".final", "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [4] } deep { hidden_units: [8] } "
                                                      "final { hidden_units: [4] } wide_embedding_dim: 0 }"),
                         p + ".wide_embedding_dim", "must be > 0"));
}

TEST(ValidateMaskNet, ValidConfigs) {
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { n_mask_blocks: 3 mask_block { "
                                                "reduction_ratio: 2 hidden_dim: 16 } top_mlp { hidden_units: [8] } } }")));
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { n_mask_blocks: 2 use_parallel: false "
                                                "mask_block { reduction_ratio: 0 aggregation_dim: 4 hidden_dim: 16 } } }")));
}

TEST(ValidateMaskNet, Problems) {
  const std::string p = "model_config.mask_net.mask_net_module";
  auto with = [](const std::string& module) {
    return dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { " + module + " } }");
  };
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 0 mask_block { hidden_dim: 4 }"), p + ".n_mask_blocks", "must be >= 1"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1"), p + ".mask_block", "required"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: 1 }"), p + ".mask_block.hidden_dim",
                         "must be >= 1"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: -1 hidden_dim: 4 }"),
                         p + ".mask_block.reduction_ratio", "must be a finite number >= 0"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: 0 hidden_dim: 4 }"), p + ".mask_block",
                         "set reduction_ratio"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmAllGroup, "mask_net { }"), p, "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with("", "mask_net { mask_net_module { n_mask_blocks: 1 mask_block { hidden_dim: 4 } } }"),
                         "model_config.feature_groups", "MaskNet needs a feature group"));
}

TEST(ValidateDBMTLMaskNet, CheckedLikeMaskNet) {
  const char towers[] = R"(task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } })";
  auto dbmtl = [&](const std::string& mask_net) {
    return parse_pipeline_config_text(std::string(kDlrmCommon) + "model_config { " + kDlrmAllGroup + " dbmtl { " + mask_net +
                                          " bottom_mlp { hidden_units: [8] } " + towers + " } }",
                                      "dbmtl.config");
  };
  EXPECT_TRUE(NoProblems(dbmtl("mask_net { n_mask_blocks: 2 mask_block { hidden_dim: 8 } top_mlp { hidden_units: [8] } }")));
  EXPECT_TRUE(HasProblem(dbmtl("mask_net { n_mask_blocks: 0 mask_block { hidden_dim: 8 } }"),
                         "model_config.dbmtl.mask_net.n_mask_blocks", "must be >= 1"));
  EXPECT_TRUE(HasProblem(dbmtl("mask_net { n_mask_blocks: 1 }"), "model_config.dbmtl.mask_net.mask_block", "required"));
}

}  // namespace validate_dlrm_xdeepfm_mask_net_test
}  // namespace tzrec::config
