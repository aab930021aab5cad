// The model-config rules, as building the model raises them (check_config and train_eval both
// build it: tests/e2e/config_contract_test.sh). Each rule is written once, where the model, its
// feature groups, losses or metrics are built.
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "models/testing.h"

namespace tzrec::models {
namespace model_config_rules_test {

using config::edit_config;
using config::parse_pipeline_config_text;
using testing::HasProblem;
using testing::NoProblems;
using testing::NotSupported;


using config::testing::deepfm;
using config::testing::edited;
using config::testing::kDeepFm;
using config::testing::kTrainAndData;
using config::testing::kValidateCommon;
using config::testing::mmoe;
using config::testing::multi_tower;

TEST(ModelConfigRules, ModelRequired) {
  auto none = deepfm();
  none.mutable_model_config()->clear_deepfm();
  EXPECT_TRUE(HasProblem(none, "model_config", "no model set"));
  none.clear_model_config();
  EXPECT_TRUE(HasProblem(none, "model_config", "missing"));
}

// Negative samplers feed match models; a rank model with one is a config error (issue: "a sampler
// config on a rank model").
TEST(ModelConfigRules, SamplerNeedsAMatchModel) {
  auto sampled = deepfm("data_config { negative_sampler { input_path: 'x' num_sample: 1 item_id_field: 'c0' } }");
  EXPECT_TRUE(HasProblem(sampled, "data_config.negative_sampler",
                         "negative samplers feed match models (dssm, dssm_v2, dat, mind, hstu_match); deepfm is a rank model"));
}

TEST(ModelConfigRules, FeatureGroups) {
  auto unknown = deepfm("model_config { feature_groups { group_name: 'x' feature_names: ['c0', 'c1', 'd0', 'cat_9'] } }");
  EXPECT_TRUE(HasProblem(unknown, "model_config.feature_groups[3].feature_names[3]", "unknown feature 'cat_9' (group 'x')"));
  auto dup = deepfm("model_config { feature_groups { group_name: 'fm' feature_names: ['c0'] } }");
  EXPECT_TRUE(HasProblem(dup, "model_config.feature_groups[3].group_name",
                         "duplicate group name 'fm' (also model_config.feature_groups[1])"));
  auto empty = deepfm("model_config { feature_groups { group_name: 'e' } }");
  EXPECT_TRUE(HasProblem(empty, "model_config.feature_groups[3].feature_names", "group 'e' has no features"));
  auto seq = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] group_type: SEQUENCE } }");
  EXPECT_TRUE(HasProblem(seq, "model_config.feature_groups[3].feature_names",
                         "sequence group 's' has no sequence feature"));
  auto jagged = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] group_type: JAGGED_SEQUENCE } }");
  EXPECT_TRUE(HasProblem(jagged, "model_config.feature_groups[3].group_type",
                         "group 's' is JAGGED_SEQUENCE, which only TorchEasyRec's generative models"));
  auto seq_groups = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] sequence_groups { group_name: 'q' } } }");
  EXPECT_TRUE(HasProblem(seq_groups, "model_config.feature_groups[3].sequence_encoders",
                         "group 's' has sequence_groups but no sequence_encoders"));
  auto encoders = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] sequence_encoders { pooling_encoder { input: 'q' } } } }");
  EXPECT_TRUE(HasProblem(encoders, "model_config.feature_groups[3].sequence_groups",
                         "group 's' has sequence_encoders but no sequence_groups"));
  auto wide_seq = deepfm("model_config { feature_groups { group_name: 's' feature_names: ['c0'] group_type: WIDE sequence_groups { group_name: 'q' } } }");
  EXPECT_TRUE(HasProblem(wide_seq, "model_config.feature_groups[3].sequence_groups",
                         "group 's' is WIDE; sequence_groups and sequence_encoders belong in a DEEP group"));
}

// Training masks (feature/sample_mask.h), checked where the features are built: use_mask under
// FG_NONE without fg_encoded_default_value takes feature generation's output on empty inputs
// (refused for sequences; a combo feature's is empty), probabilities lie in [0, 1], no masks with
// tdm_sampler.
TEST(ModelConfigRules, SampleMasks) {
  EXPECT_TRUE(NotSupported(deepfm("feature_configs { sequence_feature { sequence_name: 's' features { overlap_feature "
                                  "{ feature_name: 'o' use_mask: true } } } }"),
                           "feature_configs[4].sequence_feature.features[0].overlap_feature.use_mask"));
  EXPECT_TRUE(NoProblems(deepfm("data_config { sample_mask_prob: 0.1 } feature_configs { combo_feature { "
                                "feature_name: 'z' embedding_dim: 4 expression: 'user:a' expression: 'user:b' "
                                "hash_bucket_size: 10 use_mask: true } }")));
  EXPECT_TRUE(NoProblems(deepfm("data_config { sample_mask_prob: 0.1 } feature_configs { id_feature { "
                                "feature_name: 'm' embedding_dim: 4 num_buckets: 5 use_mask: true "
                                "fg_encoded_default_value: '0' } }")));
  EXPECT_TRUE(HasProblem(deepfm("data_config { negative_sample_mask_prob: 1.5 }"), "data_config.negative_sample_mask_prob",
                         "1.5 is not a probability; use a value in [0, 1]"));
  EXPECT_TRUE(NotSupported(deepfm("data_config { sample_mask_prob: 0.5 tdm_sampler { item_input_path: 'x' "
                                  "edge_input_path: 'y' attr_fields: 'a' item_id_field: 'i' } }"),
                           "data_config.sample_mask_prob / negative_sample_mask_prob with data_config.tdm_sampler"));
}

// TorchEasyRec refuses a table name reached under two embedding_name_suffix values
// (modules/embedding.py, _check_emb_name_suffix_collisions): here the fm group's suffix "wide"
// turns c0's table into "c0_emb_wide", the unsuffixed wide group's table of c0.
TEST(ModelConfigRules, EmbeddingNameSuffixCollision) {
  auto collides = edited(deepfm(), R"({"model_config.feature_groups[1].embedding_name_suffix": "wide"})");
  EXPECT_TRUE(HasProblem(collides, "model_config.feature_groups[1].feature_names[0]",
                         "feature 'c0' looks up embedding table 'c0_emb_wide' with embedding_name_suffix 'wide', and "
                         "so does feature 'c0' of model_config.feature_groups[0].feature_names[0] with "
                         "embedding_name_suffix none"));
  EXPECT_TRUE(NoProblems(edited(deepfm(), R"({"model_config.feature_groups[1].embedding_name_suffix": "fm"})")));
}

TEST(ModelConfigRules, DeepFmGroups) {
  auto no_wide = edited(deepfm(), R"({"model_config.feature_groups[0].group_name": "linear"})");
  EXPECT_TRUE(HasProblem(no_wide, "model_config.feature_groups", "DeepFM needs a feature group named 'wide' (group_type: WIDE)"));
  auto wide_type = edited(deepfm(), R"({"model_config.feature_groups[0].group_type": "DEEP"})");
  EXPECT_TRUE(HasProblem(wide_type, "model_config.feature_groups[0].group_type", "DeepFM group 'wide' must be WIDE"));
  auto no_deep = edited(deepfm(), R"({"model_config.feature_groups[2].group_name": "mlp"})");
  EXPECT_TRUE(HasProblem(no_deep, "model_config.feature_groups", "DeepFM needs a feature group named 'deep'"));
  auto deep_type = edited(deepfm(), R"({"model_config.feature_groups[2].group_type": "WIDE",
                                        "model_config.feature_groups[2].feature_names": ["c0", "c1"]})");
  EXPECT_TRUE(HasProblem(deep_type, "model_config.feature_groups[2].group_type", "DeepFM group 'deep' must be DEEP"));
  auto fm_dims = edited(deepfm(), R"({"feature_configs[2].id_feature.embedding_dim": 8})");
  EXPECT_TRUE(HasProblem(fm_dims, "model_config.feature_groups[1].feature_names[1]",
                         "FM needs equal embedding_dim: 'c1' has 8, 'c0' has 4"));
  auto fm_dense = edited(deepfm(), R"({"model_config.feature_groups[1].feature_names": ["c0", "d0"]})");
  EXPECT_TRUE(HasProblem(fm_dense, "model_config.feature_groups[1].feature_names[1]", "FM needs sparse features with equal embedding_dim, 'd0' is dense"));
  // Without an fm group the deep group feeds FM, so it must be all sparse.
  auto deep_as_fm = deepfm();
  deep_as_fm.mutable_model_config()->mutable_feature_groups()->DeleteSubrange(1, 1);
  EXPECT_TRUE(HasProblem(deep_as_fm, "model_config.feature_groups[1].feature_names[0]", "'d0' is dense"));
  auto wide_dense = edited(deepfm(), R"({"model_config.feature_groups[0].feature_names": ["c0", "d0"]})");
  EXPECT_TRUE(HasProblem(wide_dense, "model_config.feature_groups[0].feature_names[1]",
                         "WIDE group needs sparse features (id_feature, or raw_feature with boundaries), 'd0' is dense"));
  auto no_mlp = deepfm();
  no_mlp.mutable_model_config()->mutable_deepfm()->clear_deep();
  EXPECT_TRUE(HasProblem(no_mlp, "model_config.deepfm.deep", "required"));
  auto no_final = deepfm();
  no_final.mutable_model_config()->mutable_deepfm()->clear_final();
  EXPECT_TRUE(NoProblems(no_final));
}

TEST(ModelConfigRules, MultiTowerRules) {
  auto bad_input = edited(multi_tower(), R"({"model_config.multi_tower.towers[1].input": "items"})");
  EXPECT_TRUE(HasProblem(bad_input, "model_config.multi_tower.towers[1].input", "unknown feature group 'items'"));
  // final is optional (TorchEasyRec's MultiTower checks HasField("final")).
  auto no_final = multi_tower();
  no_final.mutable_model_config()->mutable_multi_tower()->clear_final();
  EXPECT_TRUE(NoProblems(no_final));
  auto no_tower_mlp = multi_tower();
  no_tower_mlp.mutable_model_config()->mutable_multi_tower()->mutable_towers(0)->clear_mlp();
  EXPECT_TRUE(HasProblem(no_tower_mlp, "model_config.multi_tower.towers[0].mlp", "required"));
  auto no_towers = multi_tower();
  no_towers.mutable_model_config()->mutable_multi_tower()->clear_towers();
  EXPECT_TRUE(HasProblem(no_towers, "model_config.multi_tower.towers", "needs at least one tower"));
}

TEST(ModelConfigRules, MMoERules) {
  const std::string t = "model_config.mmoe.task_towers";
  auto set = [](const std::string& field, const std::string& value) {
    return edited(mmoe(), "{\"model_config.mmoe." + field + "\": " + value + "}");
  };
  EXPECT_TRUE(HasProblem(set("task_towers[1].label_name", "\"pay\""), t + "[1].label_name",
                         "'pay' is not one of data_config.label_fields"));
  EXPECT_TRUE(HasProblem(set("task_towers[1].tower_name", "\"ctr\""), t + "[1].tower_name",
                         "'ctr' is used by another tower; tower names must be unique"));
  EXPECT_TRUE(HasProblem(set("task_towers[0].num_class", "2"), t + "[0].num_class",
                         "must be 1 with loss binary_cross_entropy, got 2"));
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

TEST(ModelConfigRules, DBMTLRules) {
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
  auto base = parse_pipeline_config_text(kValidateCommon + dbmtl, "dbmtl.config");
  EXPECT_TRUE(NoProblems(base));
  const std::string t = "model_config.dbmtl.task_towers";
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.dbmtl.task_towers[1].relation_tower_names": ["cvr"]})"),
                         t + "[1].relation_tower_names[0]", "'cvr' is not a tower before this one"));
  auto masked = base;
  masked.mutable_model_config()->mutable_dbmtl()->mutable_mask_net();  // checked as a MaskNetModule
  EXPECT_TRUE(HasProblem(masked, "model_config.dbmtl.mask_net.mask_block", "required"));
  auto three = base;
  auto* extra = three.mutable_model_config()->mutable_dbmtl()->add_task_towers();
  extra->set_tower_name("pay");
  extra->add_losses()->mutable_binary_cross_entropy();
  EXPECT_TRUE(HasProblem(three, t + "[2].label_name", "required; name one of data_config.label_fields"));
}

TEST(ModelConfigRules, PLERules) {
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
  auto base = parse_pipeline_config_text(kValidateCommon + ple, "ple.config");
  EXPECT_TRUE(NoProblems(base));
  const std::string n = "model_config.ple.extraction_networks[0]";
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.ple.extraction_networks[0].share_expert_net.hidden_units": [4]})"),
                         n, "must end in the same width"));
  EXPECT_TRUE(NoProblems(edited(base, R"({"model_config.ple.extraction_networks[0].share_num": 0})")));
  EXPECT_TRUE(HasProblem(edited(base, R"({"model_config.ple.extraction_networks[0].expert_num_per_task": 0})"),
                         n + ".expert_num_per_task", "must be >= 1"));
  auto no_nets = base;
  no_nets.mutable_model_config()->mutable_ple()->clear_extraction_networks();
  EXPECT_TRUE(HasProblem(no_nets, "model_config.ple.extraction_networks", "needs at least one extraction network"));
}

TEST(ModelConfigRules, MlpRules) {
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

TEST(ModelConfigRules, ModelCommonSubset) {
  // num_class > 1 needs softmax_cross_entropy / jrc_loss; the binary losses need num_class 1.
  EXPECT_TRUE(HasProblem(deepfm("model_config { num_class: 2 }"), "model_config.num_class",
                         "must be 1 with loss binary_cross_entropy, got 2"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { num_class: 0 }"), "model_config.num_class", "must be >= 1"));
  EXPECT_TRUE(NoProblems(deepfm("model_config { variational_dropout {} }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { variational_dropout { regularization_lambda: -0.1 } }"),
                         "model_config.variational_dropout.regularization_lambda", "must be a finite number >= 0"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { use_pareto_loss_weight: true }"),
                         "model_config.use_pareto_loss_weight", "weights the losses of several tasks"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { recon_loss {} } }"), "model_config.losses[1].recon_loss",
                         "a loss of the semantic-ID models"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { recall_at_k {} } }"), "model_config.metrics[1].recall_at_k",
                         "not supported yet: model_config.metrics[1].recall_at_k: needs a match model's similarity"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { recall_at_k {} } }"),
                         "model_config.train_metrics[0].recall_at_k", "needs a match model's similarity"));

  // Softmax / JRC models: the binary loss of kDeepFm is replaced and its auc metric removed.
  auto classifier = [](const std::string& losses, const std::string& extra) {
    std::string text = kDeepFm;
    text.replace(text.find("losses { binary_cross_entropy {} }"), 34, losses);
    text.replace(text.find("metrics { auc {} }"), 18, "");
    return parse_pipeline_config_text(kValidateCommon + text + extra, "classifier.config");
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
                         "model_config.train_metrics[0].auc.thresholds", "must be >= 2, got 1"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { train_metrics { } }"), "model_config.train_metrics[0]",
                         "no metric set"));
  EXPECT_TRUE(NoProblems(deepfm("model_config { metrics { grouped_auc { grouping_key: 'c0' } } "
                                "metrics { accuracy {} } metrics { normalized_entropy {} } "
                                "metrics { mean_absolute_error {} } metrics { mean_squared_error {} } "
                                "losses { l2_loss {} } losses { binary_focal_loss {} } }")));
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { mean_squared_error {} } }"),
                         "model_config.metrics[1].mean_squared_error", "add losses { l2_loss {} }"));
  std::string regression = kDeepFm;
  regression.replace(regression.find("binary_cross_entropy {}"), 23, "l2_loss {}");
  EXPECT_TRUE(HasProblem(parse_pipeline_config_text(kValidateCommon + regression, "l2.config"),
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
  EXPECT_TRUE(HasProblem(deepfm("model_config { metrics { auc { thresholds: 50 } } }"), "model_config.metrics[1]",
                         "metric auc is configured twice"));
  auto one_auc = deepfm();
  one_auc.mutable_model_config()->mutable_metrics(0)->mutable_auc()->set_thresholds(1);
  EXPECT_TRUE(HasProblem(one_auc, "model_config.metrics[0].auc.thresholds", "must be >= 2, got 1"));
  EXPECT_TRUE(HasProblem(deepfm("model_config { losses { binary_cross_entropy { label_smoothing: 1.5 } } }"),
                         "model_config.losses[1]", "loss binary_cross_entropy is configured twice"));
  auto smoothed = deepfm();
  smoothed.mutable_model_config()->mutable_losses(0)->mutable_binary_cross_entropy()->set_label_smoothing(1.5);
  EXPECT_TRUE(HasProblem(smoothed, "model_config.losses[0].binary_cross_entropy.label_smoothing", "must be in [0, 1]"));
  smoothed.mutable_model_config()->mutable_losses(0)->mutable_binary_cross_entropy()->set_label_smoothing(1.0);
  EXPECT_TRUE(NoProblems(smoothed));
  auto no_loss = deepfm();
  no_loss.mutable_model_config()->clear_losses();
  EXPECT_TRUE(HasProblem(no_loss, "model_config.losses", "at least one loss is required"));
}



const std::string kWideDcnCommon = std::string(kTrainAndData) + R"(
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 8 } }
)";

// `common` + a model_config of `groups` and `model` (its body after the feature groups and before
// the losses), with a binary loss and auc.
protos::EasyRecConfig model_config_with(const std::string& common, const std::string& groups,
                                        const std::string& model) {
  return parse_pipeline_config_text(common + "model_config { " + groups + "\n" + model +
                                        "\n losses { binary_cross_entropy {} } metrics { auc {} } }",
                                    "test.config");
}
protos::EasyRecConfig config_with(const std::string& groups, const std::string& model) {
  return model_config_with(kWideDcnCommon, groups, model);
}

const char kWideDeepGroups[] = R"(
  feature_groups { group_name: "wide" feature_names: ["c0", "c1"] group_type: WIDE }
  feature_groups { group_name: "deep" feature_names: ["d0", "c0", "c1"] group_type: DEEP })";
const char kAllGroup[] = R"(feature_groups { group_name: "all" feature_names: ["d0", "c0", "c1"] })";

TEST(WideAndDeepRules, ValidConfigs) {
  EXPECT_TRUE(NoProblems(config_with(kWideDeepGroups, "wide_and_deep { deep { hidden_units: [8, 4] } }")));
  EXPECT_TRUE(NoProblems(config_with(
      kWideDeepGroups,
      "wide_and_deep { deep { hidden_units: [8] } final { hidden_units: [4] } wide_embedding_dim: 2 }")));
}

TEST(WideAndDeepRules, Problems) {
  const char* model = "wide_and_deep { deep { hidden_units: [8] } }";
  EXPECT_TRUE(HasProblem(config_with(kAllGroup, model), "model_config.feature_groups",
                         "WideAndDeep needs a feature group named 'wide' (group_type: WIDE)"));
  EXPECT_TRUE(HasProblem(
      config_with(R"(feature_groups { group_name: "wide" feature_names: ["c0"] group_type: WIDE })", model),
      "model_config.feature_groups", "WideAndDeep needs a feature group named 'deep' (group_type: DEEP)"));
  EXPECT_TRUE(HasProblem(config_with(R"(
      feature_groups { group_name: "wide" feature_names: ["c0"] group_type: DEEP }
      feature_groups { group_name: "deep" feature_names: ["c0"] group_type: WIDE })",
                                     model),
                         "model_config.feature_groups[0].group_type", "WideAndDeep group 'wide' must be WIDE"));
  EXPECT_TRUE(HasProblem(
      config_with(kWideDeepGroups, "wide_and_deep { deep { hidden_units: [8] } wide_embedding_dim: 0 }"),
                         "model_config.wide_and_deep.wide_embedding_dim", "must be > 0"));
}

TEST(DCNV1Rules, ValidConfig) {
  EXPECT_TRUE(NoProblems(config_with(
      kAllGroup, "dcn_v1 { cross { cross_num: 2 } deep { hidden_units: [8] } final { hidden_units: [4] } }")));
  // The default cross_num (3) is fine.
  EXPECT_TRUE(NoProblems(
      config_with(kAllGroup, "dcn_v1 { cross { } deep { hidden_units: [8] } final { hidden_units: [4] } }")));
}

TEST(DCNV1Rules, Problems) {
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
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v1.cross", "required"));
  c.mutable_model_config()->mutable_dcn_v1()->mutable_cross();
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v1.final", "required"));
}

TEST(DCNV2Rules, ValidConfigs) {
  EXPECT_TRUE(NoProblems(config_with(kAllGroup, "dcn_v2 { cross { } final { hidden_units: [4] } }")));
  EXPECT_TRUE(NoProblems(config_with(kAllGroup, R"(dcn_v2 {
      backbone { hidden_units: [16] } cross { cross_num: 2 low_rank: 4 } deep { hidden_units: [8] }
      final { hidden_units: [4] } })")));
}

TEST(DCNV2Rules, Problems) {
  EXPECT_TRUE(HasProblem(config_with("", "dcn_v2 { cross {} final { hidden_units: [4] } }"),
                         "model_config.feature_groups", "DCNV2 needs a feature group"));
  auto bad = config_with(kAllGroup, "dcn_v2 { cross { cross_num: 0 low_rank: 0 } final { hidden_units: [4] } }");
  EXPECT_TRUE(HasProblem(bad, "model_config.dcn_v2.cross.cross_num", "must be >= 1, got 0"));
  bad.mutable_model_config()->mutable_dcn_v2()->mutable_cross()->set_cross_num(1);
  EXPECT_TRUE(HasProblem(bad, "model_config.dcn_v2.cross.low_rank", "must be >= 1, got 0"));
  protos::EasyRecConfig c = config_with(kAllGroup, "dcn_v2 { cross {} final { hidden_units: [4] } }");
  c.mutable_model_config()->mutable_dcn_v2()->clear_final();
  EXPECT_TRUE(HasProblem(c, "model_config.dcn_v2.final", "required"));
}



const std::string kDlrmCommon = std::string(kTrainAndData) + R"(
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { raw_feature { feature_name: "d1" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c1" hash_bucket_size: 100 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "c2" hash_bucket_size: 100 embedding_dim: 8 } }
)";

protos::EasyRecConfig dlrm_config_with(const std::string& groups, const std::string& model) {
  return model_config_with(kDlrmCommon, groups, model);
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

TEST(DLRMRules, ValidConfigs) {
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

TEST(DLRMRules, Problems) {
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
                         "model_config.feature_groups[1].feature_names[1]",
                         "DLRM's sparse group needs sparse features with equal embedding_dim, 'd1' is dense"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(R"(feature_groups { group_name: "dense" feature_names: ["d0"] }
                                        feature_groups { group_name: "sparse" feature_names: ["c0"] group_type: WIDE })",
                                     kDlrm),
                         "model_config.feature_groups[1].group_type", "DLRM group 'sparse' must be DEEP"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { dense_mlp { hidden_units: [8, 3] } final { hidden_units: [4] } }"),
                         p + ".dense_mlp.hidden_units",
                         "the last hidden unit must equal the embedding dimension of the 'sparse' group (4), got 3"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { final { hidden_units: [4] } }"), p + ".dense_mlp",
                         "required with a 'dense' feature group"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmGroups, "dlrm { dense_mlp { hidden_units: [4] } }"), p + ".final", "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with("", kDlrm), "model_config.feature_groups", "DLRM needs a feature group named 'sparse'"));
}

TEST(XDeepFMRules, ValidConfigs) {
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmWideDeepGroups, kXDeepFM)));
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmWideDeepGroups, "xdeepfm { cin { cin_layer_size: [3] } deep { hidden_units: [8] } "
                                                      "final { hidden_units: [4] } wide_embedding_dim: 4 }")));
}

TEST(XDeepFMRules, Problems) {
  const std::string p = "model_config.xdeepfm";
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmAllGroup, kXDeepFM), "model_config.feature_groups",
                         "xDeepFM needs a feature group named 'wide' (group_type: WIDE)"));
  EXPECT_TRUE(HasProblem(
      dlrm_config_with(R"(feature_groups { group_name: "wide" feature_names: ["c0"] group_type: WIDE })", kXDeepFM),
      "model_config.feature_groups", "xDeepFM needs a feature group named 'deep' (group_type: DEEP)"));
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

TEST(MaskNetRules, ValidConfigs) {
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { n_mask_blocks: 3 mask_block { "
                                                "reduction_ratio: 2 hidden_dim: 16 } top_mlp { hidden_units: [8] } } }")));
  EXPECT_TRUE(NoProblems(dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { n_mask_blocks: 2 use_parallel: false "
                                                "mask_block { reduction_ratio: 0 aggregation_dim: 4 hidden_dim: 16 } } }")));
}

TEST(MaskNetRules, Problems) {
  const std::string p = "model_config.mask_net.mask_net_module";
  auto with = [](const std::string& module) {
    return dlrm_config_with(kDlrmAllGroup, "mask_net { mask_net_module { " + module + " } }");
  };
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 0 mask_block { hidden_dim: 4 }"), p + ".n_mask_blocks", "must be >= 1"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1"), p + ".mask_block", "required"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: 1 }"), p + ".mask_block.hidden_dim",
                         "must be > 0, got 0"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: -1 hidden_dim: 4 }"),
                         p + ".mask_block.reduction_ratio", "must be a finite number >= 0"));
  EXPECT_TRUE(HasProblem(with("n_mask_blocks: 1 mask_block { reduction_ratio: 0 hidden_dim: 4 }"), p + ".mask_block",
                         "set reduction_ratio"));
  EXPECT_TRUE(HasProblem(dlrm_config_with(kDlrmAllGroup, "mask_net { }"), p, "required"));
  EXPECT_TRUE(HasProblem(dlrm_config_with("", "mask_net { mask_net_module { n_mask_blocks: 1 mask_block { hidden_dim: 4 } } }"),
                         "model_config.feature_groups", "MaskNet needs a feature group"));
}

TEST(DBMTLMaskNetRules, CheckedLikeMaskNet) {
  const char towers[] = R"(task_towers { tower_name: "ctr" label_name: "label" losses { binary_cross_entropy {} } })";
  auto dbmtl = [&](const std::string& mask_net) {
    return parse_pipeline_config_text(kDlrmCommon + "model_config { " + kDlrmAllGroup + " dbmtl { " + mask_net +
                                          " bottom_mlp { hidden_units: [8] } " + towers + " } }",
                                      "dbmtl.config");
  };
  EXPECT_TRUE(NoProblems(dbmtl("mask_net { n_mask_blocks: 2 mask_block { hidden_dim: 8 } top_mlp { hidden_units: [8] } }")));
  EXPECT_TRUE(HasProblem(dbmtl("mask_net { n_mask_blocks: 0 mask_block { hidden_dim: 8 } }"),
                         "model_config.dbmtl.mask_net.n_mask_blocks", "must be >= 1"));
  EXPECT_TRUE(HasProblem(dbmtl("mask_net { n_mask_blocks: 1 }"), "model_config.dbmtl.mask_net.mask_block", "required"));
}


}  // namespace model_config_rules_test
}  // namespace tzrec::models
