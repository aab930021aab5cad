// feature_selection (TorchEasyRec's tools/feature_selection, train/feature_selection.h). The
// dropout ratios are sigmoid(feature_p) of hand-set logits; the CSV numbers below are what
// Python prints for PyTorch's float32 sigmoid of them (torch.tensor([2., -1., 0., -3.]).sigmoid()
// .tolist() → 0.8807970285415649, 0.2689414322376251, 0.5, 0.04742587357759476), and the
// selected groups follow from the top-k rule by hand.
#include "train/feature_selection.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/checkpoint.h"
#include "config/feature_util.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "data/testing_util.h"
#include "models/testing.h"

namespace tzrec::train {
namespace feature_selection_test {

using models::testing::error_of;

// DeepFM over d0 (dense), c0, c1, b0: groups wide [c0, c1, b0], fm [c0, c1, b0],
// deep [d0, c0, c1, b0]; plus a stub feature in no group.
protos::EasyRecConfig deepfm() {
  std::string text = config::testing::kValidateCommon +
                     "feature_configs { id_feature { feature_name: \"stub\" num_buckets: 4 embedding_dim: 4 } }\n" +
                     config::testing::kDeepFm;
  text.replace(text.find("deepfm {"), 0, "variational_dropout { regularization_lambda: 0.01 }\n  ");
  return config::parse_pipeline_config_text(text, "deepfm.config");
}

std::map<std::string, torch::Tensor> tensors(bool with_wide) {
  std::map<std::string, torch::Tensor> t = {
      {"group_variational_dropouts.deep.feature_p", torch::tensor({2.0f, -1.0f, 0.0f, -3.0f})},
      {"group_variational_dropouts.fm.feature_p", torch::tensor({0.0f, 1.0f, -1.0f})},
      {"dense.weight", torch::zeros({2, 2})}};
  if (with_wide) t["group_variational_dropouts.wide.feature_p"] = torch::tensor({0.0f, 0.0f, 0.0f});
  return t;
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<std::string>& r) { return {r.begin(), r.end()}; }

std::vector<std::string> feature_names(const protos::EasyRecConfig& c) {
  std::vector<std::string> out;
  for (const auto& f : c.feature_configs()) out.push_back(config::feature_name(f));
  return out;
}

const protos::FeatureGroupConfig& group(const protos::EasyRecConfig& c, const std::string& name) {
  for (const auto& g : c.model_config().feature_groups()) {
    if (g.group_name() == name) return g;
  }
  throw std::runtime_error("no group " + name);
}

using V = std::vector<std::string>;

TEST(FeatureSelection, RatiosAscendingPerGroupInConfigOrder) {
  const auto groups = feature_dropout_ratios(deepfm(), tensors(true), "ckpt");
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].group, "wide");
  EXPECT_EQ(groups[1].group, "fm");
  EXPECT_EQ(groups[2].group, "deep");
  // Ties keep the group's order.
  EXPECT_EQ(groups[0].ratios, (std::vector<std::pair<std::string, double>>{{"c0", 0.5}, {"c1", 0.5}, {"b0", 0.5}}));
  EXPECT_EQ(groups[2].ratios[0].first, "b0");
  EXPECT_EQ(groups[2].ratios[1].first, "c0");
  EXPECT_EQ(groups[2].ratios[2].first, "c1");
  EXPECT_EQ(groups[2].ratios[3].first, "d0");
  EXPECT_EQ(groups[2].ratios[0].second, 0.04742587357759476);
}

TEST(FeatureSelection, TopKOfEachGroupAndWhatOnlyTheDroppedPlacesHeld) {
  const protos::EasyRecConfig config = deepfm();
  // Top 2: deep b0, c0; fm b0, c0; wide c0, c1 (a tie, in group order). d0 was only in deep.
  protos::EasyRecConfig out = select_features(config, feature_dropout_ratios(config, tensors(true), "ckpt"), 2, false);
  EXPECT_EQ(feature_names(out), (V{"c0", "c1", "b0", "stub"}));
  EXPECT_EQ(names(group(out, "deep").feature_names()), (V{"c0", "b0"}));
  EXPECT_EQ(names(group(out, "fm").feature_names()), (V{"c0", "b0"}));
  EXPECT_EQ(names(group(out, "wide").feature_names()), (V{"c0", "c1"}));
  EXPECT_TRUE(out.model_config().has_variational_dropout());
  // Top 1 with a WIDE group without dropout: its features all stay (c1 too), d0 goes.
  out = select_features(config, feature_dropout_ratios(config, tensors(false), "ckpt"), 1, true);
  EXPECT_EQ(feature_names(out), (V{"c0", "c1", "b0", "stub"}));
  EXPECT_EQ(names(group(out, "deep").feature_names()), (V{"b0"}));
  EXPECT_EQ(names(group(out, "fm").feature_names()), (V{"b0"}));
  EXPECT_EQ(names(group(out, "wide").feature_names()), (V{"c0", "c1", "b0"}));
  EXPECT_FALSE(out.model_config().has_variational_dropout());
}

TEST(FeatureSelection, TheCommandWritesTheRatiosAndTheSelectedConfig) {
  data::testing::TempDir dir;
  const std::string config_path = dir.file("deepfm.config");
  config::save_pipeline_config(deepfm(), config_path);
  checkpointing::CheckpointData data;
  data.step = 3;
  data.model = tensors(true);
  checkpointing::save_checkpoint(dir.file("model"), data);
  FeatureSelectionOptions o;
  o.pipeline_config_path = config_path;
  o.model_dir = dir.file("model");
  o.output_dir = dir.file("out");
  o.topk = 3;
  EXPECT_EQ(run_feature_selection(o), dir.file("out/deepfm.config"));
  std::ifstream in(dir.file("out/feature_dropout_ratio_deep.csv"));
  std::stringstream csv;
  csv << in.rdbuf();
  EXPECT_EQ(csv.str(),
            "feature_name,mean_drop_p\n"
            "b0,0.04742587357759476\n"
            "c0,0.2689414322376251\n"
            "c1,0.5\n"
            "d0,0.8807970285415649\n");
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/feature_dropout_ratio_fm.csv")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/feature_dropout_ratio_wide.csv")));
  const protos::EasyRecConfig out = config::load_pipeline_config(dir.file("out/deepfm.config"));
  EXPECT_EQ(names(group(out, "deep").feature_names()), (V{"c0", "c1", "b0"}));
  EXPECT_EQ(feature_names(out), (V{"c0", "c1", "b0", "stub"}));
}

TEST(FeatureSelection, OneErrorLineForEachBadInput) {
  data::testing::TempDir dir;
  const std::string config_path = dir.file("deepfm.config");
  config::save_pipeline_config(deepfm(), config_path);
  FeatureSelectionOptions o;
  o.pipeline_config_path = config_path;
  o.model_dir = dir.file("model");
  o.output_dir = dir.file("out");
  EXPECT_NE(error_of([&] { run_feature_selection(o); }).find("holds no checkpoint"), std::string::npos);
  o.topk = 0;
  EXPECT_EQ(error_of([&] { run_feature_selection(o); }), "--topk must be at least 1, got 0");
  o.topk = 5;
  o.visualize = true;
  EXPECT_NE(error_of([&] { run_feature_selection(o); }).find("not supported yet: feature_selection --visualize"),
            std::string::npos);
  // A checkpoint of another config.
  auto bad = tensors(true);
  bad["group_variational_dropouts.deep.feature_p"] = torch::zeros({3});
  EXPECT_NE(error_of([&] { feature_dropout_ratios(deepfm(), bad, "ckpt"); })
                .find("ckpt: 'group_variational_dropouts.deep.feature_p' has shape [3], but group 'deep' has 4 "
                      "feature(s) and encoder(s) (d0, c0, c1, b0)"),
            std::string::npos);
  bad = {{"user_tower.group_variational_dropouts.user.feature_p", torch::zeros({2})}};
  EXPECT_NE(error_of([&] { feature_dropout_ratios(deepfm(), bad, "ckpt"); }).find("feature group 'user', which the "
                                                                                 "config does not have"),
            std::string::npos);
  protos::EasyRecConfig plain = deepfm();
  plain.mutable_model_config()->clear_variational_dropout();
  EXPECT_NE(error_of([&] { feature_dropout_ratios(plain, {}, "ckpt"); }).find("model_config.variational_dropout is not "
                                                                             "set"),
            std::string::npos);
  EXPECT_NE(error_of([&] { feature_dropout_ratios(deepfm(), {}, "ckpt"); }).find("ckpt holds no variational dropout"),
            std::string::npos);
}

}  // namespace feature_selection_test
}  // namespace tzrec::train
