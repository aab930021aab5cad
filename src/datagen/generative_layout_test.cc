#include "datagen/generative_layout.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "base/scoped_env.h"
#include "config/pipeline_config.h"
#include "data/testing_util.h"
#include "datagen/column_plan.h"

namespace tzrec::datagen {
namespace generative_layout_test {

std::string config_text(const std::string& name) {
  std::ifstream in(std::string(TZREC_SOURCE_DIR) + "/tests/configs/torcheasyrec/" + name + ".config");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ColumnPlan plan_of(const std::string& text) {
  return plan_columns(config::parse_pipeline_config_text(text, "test.config"));
}

std::string name_of(const ColumnPlan& plan, int column) {
  return column < 0 ? std::string("(none)") : plan.columns[static_cast<size_t>(column)].name;
}

std::vector<std::string> names_of(const ColumnPlan& plan, const std::vector<int>& columns) {
  std::vector<std::string> out;
  for (int c : columns) out.push_back(name_of(plan, c));
  return out;
}

TEST(GenerativeLayout, DlrmHstuKuaiRand) {
  const ColumnPlan plan = plan_of(config_text("dlrm_hstu_kuairand_1k"));
  const GenerativeLayout& g = plan.generative;
  ASSERT_TRUE(g.enabled());
  ASSERT_EQ(g.channels.size(), 1u);
  const HistoryChannel& uih = g.channels[0];
  EXPECT_EQ(uih.group, "uih");
  EXPECT_EQ(name_of(plan, uih.item_column), "uih_seq__video_id");
  EXPECT_EQ(name_of(plan, uih.timestamp_column), "uih_seq__action_timestamp");
  EXPECT_EQ(name_of(plan, uih.action_column), "uih_seq__action_weight");
  EXPECT_EQ(name_of(plan, uih.watch_time_column), "uih_seq__watch_time");
  EXPECT_TRUE(uih.attribute_columns.empty());
  EXPECT_EQ(uih.sequence_length, 8000);
  EXPECT_EQ(uih.action_filter, 0u);

  const CandidateLayout& cand = g.candidates;
  EXPECT_EQ(cand.group, "candidate");
  EXPECT_EQ(name_of(plan, cand.item_column), "cand_seq__video_id");
  EXPECT_EQ(name_of(plan, cand.query_time_column), "cand_seq__query_time");
  EXPECT_EQ(names_of(plan, cand.action_label_columns), (std::vector<std::string>{"cand_seq__action_weight"}));
  EXPECT_EQ(names_of(plan, cand.watch_time_label_columns), (std::vector<std::string>{"cand_seq__watch_time"}));
  EXPECT_FALSE(cand.positives);
  EXPECT_FALSE(cand.reversed);
  EXPECT_FALSE(g.histories_reversed);
  EXPECT_EQ(g.actions, (std::vector<uint64_t>{1, 2, 4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(name_of(plan, g.user_column), "user_id");
  EXPECT_EQ(names_of(plan, g.user_columns),
            (std::vector<std::string>{"user_id", "user_active_degree", "follow_user_num_range", "fans_user_num_range",
                                      "friend_user_num_range", "register_days_range"}));
  EXPECT_TRUE(g.request_time_columns.empty());
  // Every column is written from the layout; the labels are list<int64>, one value per candidate.
  for (size_t c = 0; c < plan.columns.size(); ++c) EXPECT_TRUE(g.writes(static_cast<int>(c))) << plan.columns[c].name;
  for (const char* label : {"cand_seq__action_weight", "cand_seq__watch_time"}) {
    const auto field = column_field(*plan.find(label));
    EXPECT_EQ(field.list_depth, 1) << label;
    EXPECT_EQ(field.type, parquet::PhysicalType::kInt64) << label;
  }
}

TEST(GenerativeLayout, UltraHstuChannelsKeepTheirTasksEvents) {
  const ColumnPlan plan = plan_of(config_text("ultra_hstu_cutlass_kuairand_1k"));
  const GenerativeLayout& g = plan.generative;
  ASSERT_EQ(g.channels.size(), 2u);
  EXPECT_EQ(g.channels[0].group, "uih_click");
  EXPECT_EQ(name_of(plan, g.channels[0].item_column), "click_seq__video_id");
  EXPECT_EQ(name_of(plan, g.channels[0].action_column), "click_seq__action_weight");
  EXPECT_EQ(g.channels[0].action_filter, 1u);  // is_click
  EXPECT_EQ(g.channels[1].group, "uih_view");
  EXPECT_EQ(name_of(plan, g.channels[1].timestamp_column), "view_seq__action_timestamp");
  EXPECT_EQ(name_of(plan, g.channels[1].watch_time_column), "view_seq__watch_time");
  EXPECT_EQ(g.channels[1].action_filter, 64u);  // long_view
  EXPECT_EQ(name_of(plan, g.candidates.query_time_column), "cand_seq__query_time");
}

TEST(GenerativeLayout, HstuMatchCandidatesArePositivesAndRequestTimeIsAnAnchor) {
  std::string text = config_text("hstu_kuairand_1k");
  const std::string anchor = "temperature: 0.05";
  text.replace(text.find(anchor), anchor.size(), anchor + "\n sequence_timestamp_is_ascending: false");
  const ColumnPlan plan = plan_of(text);
  const GenerativeLayout& g = plan.generative;
  ASSERT_EQ(g.channels.size(), 1u);
  EXPECT_TRUE(g.candidates.positives);
  EXPECT_EQ(names_of(plan, g.request_time_columns), (std::vector<std::string>{"request_time"}));
  EXPECT_EQ(g.user_columns.size(), 6u);
  EXPECT_EQ(name_of(plan, g.user_column), "user_id");
  // HSTUMatch flips only the user side.
  EXPECT_TRUE(g.histories_reversed);
  EXPECT_FALSE(g.candidates.reversed);
  EXPECT_EQ(g.candidates.sequence_length, 100);
  // No task: the labels are typed by their names.
  EXPECT_EQ(names_of(plan, g.candidates.action_label_columns), (std::vector<std::string>{"cand_seq__action_weight"}));
  EXPECT_EQ(names_of(plan, g.candidates.watch_time_label_columns), (std::vector<std::string>{"cand_seq__watch_time"}));
}

TEST(GenerativeLayout, RtpNamesAndDescendingTimestamps) {
  // The config is written for TorchEasyRec's RTP naming: "<sequence>_<feature>" columns.
  const ScopedEnv rtp("USE_RTP", "1");
  std::string text = config_text("dlrm_hstu_rtp_kuairand_1k");
  const std::string anchor = "max_seq_len: 4096";
  text.replace(text.find(anchor), anchor.size(), anchor + "\n sequence_timestamp_is_ascending: false");
  const ColumnPlan plan = plan_of(text);
  const GenerativeLayout& g = plan.generative;
  ASSERT_EQ(g.channels.size(), 1u);
  EXPECT_EQ(name_of(plan, g.channels[0].item_column), "uih_seq_video_id");
  EXPECT_EQ(name_of(plan, g.candidates.item_column), "cand_seq_video_id");
  EXPECT_EQ(names_of(plan, g.candidates.action_label_columns), (std::vector<std::string>{"cand_seq_action_weight"}));
  EXPECT_EQ(names_of(plan, g.candidates.watch_time_label_columns), (std::vector<std::string>{"cand_seq_watch_time"}));
  EXPECT_TRUE(g.histories_reversed);
  EXPECT_TRUE(g.candidates.reversed);
}

const char* kSmall = R"(
data_config { fg_mode: FG_DAG label_fields: ["cand__act", "score"] }
feature_configs { id_feature { feature_name: "uid" expression: "user:uid" num_buckets: 50 embedding_dim: 4 } }
feature_configs { sequence_feature { sequence_name: "hist" sequence_length: 30 sequence_delim: ";"
  features { id_feature { feature_name: "vid" expression: "item:vid" num_buckets: 500 embedding_dim: 4 } }
  features { id_feature { feature_name: "cate" expression: "item:cate" num_buckets: 20 embedding_dim: 4 } }
  features { raw_feature { feature_name: "ts" expression: "user:ts" } }
  features { raw_feature { feature_name: "act" expression: "user:act" } } } }
feature_configs { sequence_feature { sequence_name: "cand" sequence_length: 5 sequence_delim: ";"
  features { id_feature { feature_name: "vid" expression: "item:vid" num_buckets: 500 embedding_dim: 4 } }
  features { id_feature { feature_name: "cate" expression: "item:cate" num_buckets: 20 embedding_dim: 4 } } } }
model_config {
  feature_groups { group_name: "contextual" feature_names: "uid" group_type: DEEP }
  feature_groups { group_name: "uih" feature_names: "hist__vid" group_type: JAGGED_SEQUENCE }
  feature_groups { group_name: "uih_action" feature_names: "hist__act" group_type: JAGGED_SEQUENCE }
  feature_groups { group_name: "uih_timestamp" feature_names: "hist__ts" group_type: JAGGED_SEQUENCE }
  feature_groups { group_name: "candidate" feature_names: "cand__vid" feature_names: "cand__cate" group_type: JAGGED_SEQUENCE }
  MODEL
}
)";

std::string small_with(const std::string& model) {
  std::string text = kSmall;
  return text.replace(text.find("MODEL"), 5, model);
}

TEST(GenerativeLayout, JaggedGroupsWithoutAnHstuModel) {
  const ColumnPlan plan = plan_of(small_with(""));
  const GenerativeLayout& g = plan.generative;
  ASSERT_EQ(g.channels.size(), 1u);
  // A sub-feature of the history sequence that no group names is an item attribute.
  EXPECT_EQ(names_of(plan, g.channels[0].attribute_columns), (std::vector<std::string>{"hist__cate"}));
  EXPECT_EQ(g.channels[0].watch_time_column, -1);
  EXPECT_EQ(names_of(plan, g.candidates.attribute_columns), (std::vector<std::string>{"cand__cate"}));
  EXPECT_EQ(g.candidates.query_time_column, -1);
  EXPECT_EQ(g.candidates.sequence_length, 5);
  EXPECT_EQ(g.actions, (std::vector<uint64_t>{1}));
  // A label of the candidate sequence is a list; another label stays a scalar of the hidden model.
  EXPECT_EQ(names_of(plan, g.candidates.action_label_columns), (std::vector<std::string>{"cand__act"}));
  EXPECT_EQ(plan.find("score")->layout, Layout::kScalar);
  EXPECT_FALSE(g.writes(plan.index_of("score")));
  EXPECT_EQ(name_of(plan, g.user_column), "(none)");
  EXPECT_EQ(names_of(plan, g.user_columns), (std::vector<std::string>{"uid"}));
}

TEST(GenerativeLayout, ActionsComeFromTaskBitmasksAndActionWeights) {
  const ColumnPlan plan = plan_of(small_with(R"(dlrm_hstu {
    hstu { input_preprocessor { contextual_preprocessor { action_encoder { simple_action_encoder {
      action_weights: [1, 4] watchtime_to_action_thresholds: [30] watchtime_to_action_weights: [512] } } } } }
    fusion_mtl_tower {
      task_configs { task_name: "is_click" label_name: "cand__act" task_bitmask: 1 losses { binary_cross_entropy {} } }
      task_configs { task_name: "is_buy" label_name: "cand__act" task_bitmask: 16 losses { binary_cross_entropy {} } }
      task_configs { task_name: "dwell" label_name: "score" losses { l2_loss {} } } }
    max_seq_len: 64 })"));
  const GenerativeLayout& g = plan.generative;
  EXPECT_EQ(g.actions, (std::vector<uint64_t>{1, 4, 16}));
  // "score" is read by a task: a per-candidate label, and with l2_loss only, the watch time.
  EXPECT_EQ(names_of(plan, g.candidates.watch_time_label_columns), (std::vector<std::string>{"score"}));
  EXPECT_EQ(column_field(*plan.find("score")).list_depth, 1);
}

TEST(GenerativeLayout, ConfigsWithoutJaggedGroupsHaveNone) {
  std::string text = kSmall;
  for (size_t p; (p = text.find("JAGGED_SEQUENCE")) != std::string::npos;) text.replace(p, 15, "DEEP");
  text.replace(text.find("MODEL"), 5, "");
  EXPECT_FALSE(plan_of(text).generative.enabled());
}

TEST(GenerativeLayout, OneSequenceInTwoRolesIsAnError) {
  std::string text = small_with("");
  const std::string first = "feature_names: \"cand__vid\"";
  text.replace(text.find(first), first.size(), "feature_names: \"hist__cate\"");
  EXPECT_NE(data::testing::error_of<ConfigError>([&] { plan_of(text); })
                .find("belongs to the sequences of both feature group 'candidate' and 'uih'"),
            std::string::npos);
}

}  // namespace generative_layout_test
}  // namespace tzrec::datagen
