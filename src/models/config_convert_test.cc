// to_group_configs: model_config.feature_groups → embedding group configs. The suffix rule is
// TorchEasyRec's (docs/source/models/feature_group.md, "embedding_name_suffix"): a nested
// sequence group without a suffix of its own takes its DEEP group's; its own one wins.
#include "models/config_convert.h"

#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

namespace tzrec::models {
namespace config_convert_test {

TEST(ToGroupConfigs, EmbeddingNameSuffixOfNestedSequenceGroups) {
  protos::ModelConfig mc;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    feature_groups {
      group_name: "deep" feature_names: "cat_a" group_type: DEEP embedding_name_suffix: "tower_a"
      sequence_groups { group_name: "click_seq" feature_names: ["cat_a", "click_seq__cat_a"] embedding_name_suffix: "click_only" }
      sequence_groups { group_name: "buy_seq" feature_names: ["cat_a", "buy_seq__cat_a"] }
      sequence_encoders { simple_attention { input: "click_seq" } }
      sequence_encoders { simple_attention { input: "buy_seq" } }
    }
    feature_groups { group_name: "plain" feature_names: "cat_a" group_type: DEEP
      sequence_groups { group_name: "s" feature_names: ["cat_a", "buy_seq__cat_a"] }
      sequence_encoders { simple_attention { input: "s" } } }
    feature_groups { group_name: "seq" feature_names: ["cat_a", "buy_seq__cat_a"] group_type: SEQUENCE embedding_name_suffix: "q" }
  )", &mc));
  const auto groups = to_group_configs(mc);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].embedding_name_suffix, "tower_a");
  ASSERT_EQ(groups[0].sequence_groups.size(), 2u);
  EXPECT_EQ(groups[0].sequence_groups[0].embedding_name_suffix, "click_only");
  EXPECT_EQ(groups[0].sequence_groups[1].embedding_name_suffix, "tower_a");
  EXPECT_EQ(groups[1].embedding_name_suffix, "");
  EXPECT_EQ(groups[1].sequence_groups[0].embedding_name_suffix, "");
  EXPECT_EQ(groups[2].embedding_name_suffix, "q");
  EXPECT_EQ(groups[2].type, embedding::GroupType::kSequence);
}

}  // namespace config_convert_test
}  // namespace tzrec::models
