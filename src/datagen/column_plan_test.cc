#include "datagen/column_plan.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "data/testing_util.h"

namespace tzrec::datagen {
namespace column_plan_test {

protos::EasyRecConfig parse(const std::string& text) {
  return config::parse_pipeline_config_text(text, "test.config");
}

ColumnPlan plan_of(const std::string& text) { return plan_columns(parse(text)); }

TEST(ColumnPlan, FgNoneColumnsAreNamedAfterFeaturesAndHoldIdsOrFloats) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_NONE label_fields: "clk" }
    feature_configs { id_feature { feature_name: "uid" hash_bucket_size: 100 embedding_dim: 4 value_dim: 1 } }
    feature_configs { id_feature { feature_name: "tags" num_buckets: 7 embedding_dim: 4 value_dim: 0 } }
    feature_configs { id_feature { feature_name: "cate" vocab_list: ["a", "b"] embedding_dim: 4 value_dim: 1 } }
    feature_configs { raw_feature { feature_name: "price" boundaries: [1, 2, 3] embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "emb" value_dim: 3 } }
  )");
  ASSERT_EQ(plan.columns.size(), 6u);
  const auto* uid = plan.find("uid");
  ASSERT_NE(uid, nullptr);
  EXPECT_EQ(uid->layout, Layout::kScalar);
  EXPECT_EQ(uid->domain.size, 100);
  EXPECT_EQ(plan.find("tags")->layout, Layout::kList);
  EXPECT_EQ(plan.find("tags")->domain.size, 7);
  // vocab_list without default_bucketize_value: [default, <OOV>] + list.
  EXPECT_EQ(plan.find("cate")->domain.size, 4);
  EXPECT_EQ(plan.find("price")->domain.kind, Domain::Kind::kIds);
  EXPECT_EQ(plan.find("price")->domain.size, 4);
  EXPECT_EQ(plan.find("emb")->domain.kind, Domain::Kind::kFloat);
  EXPECT_EQ(plan.find("emb")->min_values, 3);
  EXPECT_EQ(column_field(*plan.find("emb")).list_depth, 1);
  EXPECT_EQ(column_field(*plan.find("emb")).type, parquet::PhysicalType::kFloat);
  EXPECT_EQ(plan.find("clk")->role, Role::kLabel);
  EXPECT_EQ(column_field(*plan.find("clk")).type, parquet::PhysicalType::kInt64);
}

TEST(ColumnPlan, FgNormalColumnsAreTheExpressionInputs) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_NORMAL label_fields: "clk" }
    feature_configs { id_feature { feature_name: "age_id" expression: "user:age" num_buckets: 50 embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "age_raw" expression: "user:age" } }
    feature_configs { id_feature { feature_name: "city" expression: "user:city" vocab_list: ["bj", "sh"] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "tags" expression: "item:tags" hash_bucket_size: 10 weighted: true embedding_dim: 4 } }
  )");
  EXPECT_EQ(plan.find("age_id"), nullptr);
  const auto* age = plan.find("age");
  ASSERT_NE(age, nullptr);
  // Read as ids in [0, 50) and as a number: ids satisfy both, one value per row.
  EXPECT_EQ(age->domain.kind, Domain::Kind::kIds);
  EXPECT_EQ(age->domain.size, 50);
  EXPECT_EQ(age->layout, Layout::kScalar);
  EXPECT_EQ(age->sources.size(), 2u);
  EXPECT_EQ(plan.find("city")->domain.kind, Domain::Kind::kVocab);
  EXPECT_EQ(column_field(*plan.find("city")).type, parquet::PhysicalType::kByteArray);
  EXPECT_EQ(plan.find("tags")->layout, Layout::kWeighted);
  EXPECT_EQ(plan.find("tags")->delim, "\x1d");
}

TEST(ColumnPlan, GroupedSequencesArePrefixedAndShareALengthGroup) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_DAG label_fields: "clk" }
    feature_configs { id_feature { feature_name: "item_id" expression: "item:item_id" hash_bucket_size: 100 embedding_dim: 4 } }
    feature_configs {
      sequence_feature {
        sequence_name: "click"
        sequence_length: 7
        sequence_delim: "|"
        features { id_feature { feature_name: "item_id" expression: "item:item_id" hash_bucket_size: 100 embedding_dim: 4 } }
        features { lookup_feature { feature_name: "cnt" map: "user:kv_cnt" key: "item:cate" } }
      }
    }
  )");
  const auto* seq = plan.find("click__item_id");
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->sequence);
  EXPECT_EQ(seq->sequence_length, 7);
  EXPECT_EQ(seq->sequence_delim, "|");
  EXPECT_EQ(seq->sequence_group, "click");
  EXPECT_EQ(column_field(*seq).type, parquet::PhysicalType::kByteArray);
  // Multi-input types: item-side inputs are sequences, the user-side map is not.
  ASSERT_NE(plan.find("click__cate"), nullptr);
  EXPECT_TRUE(plan.find("click__cate")->sequence);
  ASSERT_NE(plan.find("kv_cnt"), nullptr);
  EXPECT_FALSE(plan.find("kv_cnt")->sequence);
  EXPECT_EQ(plan.find("kv_cnt")->layout, Layout::kLookupMap);
  EXPECT_FALSE(plan.find("item_id")->sequence);
}

TEST(ColumnPlan, FgNoneGroupedSequenceColumnsAreNamedAfterTheSubFeatures) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_NONE label_fields: "clk" }
    feature_configs {
      sequence_feature {
        sequence_name: "his" sequence_length: 5 sequence_delim: ";"
        features { id_feature { feature_name: "iid" hash_bucket_size: 100 embedding_dim: 4 } }
        features { raw_feature { feature_name: "pos" value_dim: 2 } }
      }
    }
    feature_configs { sequence_id_feature { feature_name: "q" num_buckets: 9 embedding_dim: 4 sequence_length: 3 } }
  )");
  ASSERT_NE(plan.find("his__iid"), nullptr);
  EXPECT_EQ(plan.find("his__iid")->domain.size, 100);
  const auto* pos = plan.find("his__pos");
  ASSERT_NE(pos, nullptr);
  EXPECT_EQ(pos->layout, Layout::kJoined);
  EXPECT_EQ(pos->delim, "\x03");
  EXPECT_EQ(pos->min_values, 2);
  const auto* q = plan.find("q");
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(q->sequence);
  EXPECT_EQ(q->sequence_length, 3);
  EXPECT_EQ(q->sequence_delim, ";");
}

TEST(ColumnPlan, LabelsFollowTheLosses) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_NONE label_fields: ["clk", "level", "dwell"] sample_weight_fields: "w" }
    feature_configs { id_feature { feature_name: "uid" hash_bucket_size: 10 embedding_dim: 4 } }
    model_config {
      dbmtl {
        task_towers { tower_name: "a" losses { binary_cross_entropy {} } }
        task_towers { tower_name: "b" num_class: 4 losses { softmax_cross_entropy {} } }
        task_towers { tower_name: "c" label_name: "dwell" losses { l2_loss {} } sample_weight_name: "w2" }
      }
    }
  )");
  EXPECT_EQ(plan.find("clk")->label_kind, LabelKind::kBinary);
  EXPECT_EQ(plan.find("level")->label_kind, LabelKind::kClass);
  EXPECT_EQ(plan.find("level")->num_class, 4);
  EXPECT_EQ(plan.find("dwell")->label_kind, LabelKind::kFloat);
  EXPECT_EQ(column_field(*plan.find("dwell")).type, parquet::PhysicalType::kFloat);
  EXPECT_EQ(plan.find("w")->role, Role::kSampleWeight);
  EXPECT_EQ(plan.find("w2")->role, Role::kSampleWeight);
}

// A label that a feature also reads (TorchEasyRec's pepnet_taobao.config: the domain label
// `occupation` is an id feature with num_buckets 3 and PEPNet's task_domain_num 2): one input
// column of ids both accept, [0, 2).
TEST(ColumnPlan, LabelThatIsAlsoAFeatureInput) {
  const auto plan = plan_of(R"(
    data_config { fg_mode: FG_DAG label_fields: ["clk", "occupation"] }
    feature_configs { id_feature { feature_name: "occupation" expression: "user:occupation" num_buckets: 3 embedding_dim: 4 } }
    model_config {
      num_class: 2
      losses { softmax_cross_entropy {} }
    }
  )");
  const auto* col = plan.find("occupation");
  ASSERT_NE(col, nullptr);
  EXPECT_EQ(col->role, Role::kInput);
  EXPECT_EQ(col->domain.kind, Domain::Kind::kIds);
  EXPECT_EQ(col->domain.size, 2);
}

TEST(ColumnPlan, SingleTaskSoftmaxAndJrc) {
  auto plan = plan_of(R"(
    data_config { label_fields: "y" }
    feature_configs { id_feature { feature_name: "uid" hash_bucket_size: 10 embedding_dim: 4 } }
    model_config { num_class: 6 losses { softmax_cross_entropy {} } }
  )");
  EXPECT_EQ(plan.find("y")->label_kind, LabelKind::kClass);
  EXPECT_EQ(plan.find("y")->num_class, 6);
  plan = plan_of(R"(
    data_config { label_fields: "y" }
    feature_configs { id_feature { feature_name: "uid" hash_bucket_size: 10 embedding_dim: 4 } }
    model_config { num_class: 2 losses { jrc_loss { session_name: "uid" } } }
  )");
  EXPECT_EQ(plan.find("y")->num_class, 2);
}

TEST(ColumnPlan, NegativeSamplerMarksItemColumns) {
  const auto plan = plan_of(R"(
    data_config {
      fg_mode: FG_DAG label_fields: "clk"
      negative_sampler { input_path: "x" num_sample: 4 attr_fields: ["iid", "cate"] item_id_field: "iid" }
    }
    feature_configs { id_feature { feature_name: "iid" expression: "item:iid" num_buckets: 100 embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "cate" expression: "item:cate" hash_bucket_size: 10 embedding_dim: 4 } }
  )");
  EXPECT_TRUE(plan.find("iid")->item_id);
  EXPECT_TRUE(plan.find("cate")->item_attr);
  EXPECT_EQ(plan.find("cate")->layout, Layout::kScalar);
  EXPECT_EQ(plan.sampler.type, "negative_sampler");
}

// A candidate sequence as the item id (TorchEasyRec's hstu_kuairand_1k.config): its dataset
// prefixes the attr_fields with "<sequence_name>__" (tzrec/datasets/dataset.py,
// launch_sampler_cluster) and refuses sequences that are not grouped.
TEST(ColumnPlan, SequenceItemIdFieldPrefixesAttrFields) {
  const char* kFeatures = R"(
    feature_configs { id_feature { feature_name: "uid" expression: "user:uid" num_buckets: 10 embedding_dim: 4 } }
    feature_configs { sequence_feature { sequence_name: "cand" sequence_length: 5 sequence_delim: "|"
      features { id_feature { feature_name: "vid" expression: "item:vid" num_buckets: 100 embedding_dim: 4 } }
      features { id_feature { feature_name: "cate" expression: "item:cate" hash_bucket_size: 10 embedding_dim: 4 } } } }
    feature_configs { sequence_id_feature { feature_name: "hist" expression: "user:hist" sequence_length: 5
      sequence_delim: "|" num_buckets: 100 embedding_dim: 4 } }
  )";
  const auto plan = plan_of(std::string(R"(
    data_config {
      fg_mode: FG_DAG
      negative_sampler { input_path: "x" num_sample: 4 attr_fields: ["vid", "cate"] item_id_field: "cand__vid" }
    })") + kFeatures);
  EXPECT_EQ(plan.sampler.sequence_prefix, "cand__");
  EXPECT_EQ(plan.sampler.attr_fields, (std::vector<std::string>{"cand__vid", "cand__cate"}));
  const ColumnSpec* vid = plan.find("cand__vid");
  EXPECT_TRUE(vid->item_id);
  EXPECT_TRUE(vid->sequence);
  EXPECT_EQ(vid->layout, Layout::kScalar);
  EXPECT_TRUE(plan.find("cand__cate")->item_attr);
  EXPECT_EQ(plan.find("cand__cate")->sequence_group, "cand");

  using data::testing::error_of;
  EXPECT_EQ(error_of<ConfigError>([&] {
              plan_of(std::string(R"(data_config { fg_mode: FG_DAG
                negative_sampler { input_path: "x" num_sample: 4 item_id_field: "hist" } })") + kFeatures);
            }),
            "data_config.negative_sampler.item_id_field: column 'hist' is the input of a sequence feature "
            "that is not a grouped sequence_feature; only sub-features of a grouped sequence_feature can be "
            "the item id (as in TorchEasyRec)");
  // An attribute that is not a sub-feature of the candidate sequence.
  EXPECT_NE(error_of<ConfigError>([&] {
              plan_of(std::string(R"(data_config { fg_mode: FG_DAG
                negative_sampler { input_path: "x" num_sample: 4 item_id_field: "cand__vid" attr_fields: "uid" } })") +
                      kFeatures);
            }).find("data_config.negative_sampler.attr_fields[0]: 'cand__uid' is not an input column"),
            std::string::npos);
}

TEST(ColumnPlan, Errors) {
  using data::testing::error_of;
  // No bucketizer: the FG_NONE id range cannot be inferred.
  EXPECT_EQ(error_of<ConfigError>([] {
              plan_of(R"(feature_configs { id_feature { feature_name: "uid" embedding_dim: 4 } })");
            }),
            "feature_configs[0].id_feature: cannot infer the id range of the feature's column; set "
            "hash_bucket_size, num_buckets, vocab_list, vocab_dict, vocab_file or boundaries");
  // A map read as ids by another feature.
  const std::string conflict = error_of<ConfigError>([] {
    plan_of(R"(
      data_config { fg_mode: FG_NORMAL }
      feature_configs { lookup_feature { feature_name: "l" map: "user:m" key: "item:k" } }
      feature_configs { id_feature { feature_name: "x" expression: "user:m" num_buckets: 3 embedding_dim: 4 } }
    )");
  });
  EXPECT_NE(conflict.find("feature_configs[1].id_feature.expression: reads column 'm' as"), std::string::npos)
      << conflict;
  EXPECT_NE(error_of<ConfigError>([] {
              plan_of(R"(
                data_config { fg_mode: FG_NORMAL }
                feature_configs { id_feature { feature_name: "x" expression: "nope" hash_bucket_size: 3 embedding_dim: 4 } })");
            }).find("feature_configs[0].id_feature.expression: 'nope' is not an input"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([] {
              plan_of(R"(
                data_config { fg_mode: FG_NORMAL }
                feature_configs { custom_feature { feature_name: "x" operator_name: "Mine" operator_lib_file: "a.so" expression: "user:a" } })");
            }).find("feature_configs[0].custom_feature.operator_name: cannot infer"),
            std::string::npos);
  {
    // tdm_sampler: "tree_level" and the item id are the tree's own attributes, not item columns.
    const ColumnPlan plan = plan_of(R"(
                data_config { tdm_sampler { item_input_path: "a" edge_input_path: "b" predict_edge_input_path: "c"
                                            item_id_field: "i" attr_fields: ["tree_level", "i", "c"] } }
                feature_configs { id_feature { feature_name: "i" num_buckets: 3 embedding_dim: 4 } }
                feature_configs { id_feature { feature_name: "c" num_buckets: 3 embedding_dim: 4 } })");
    EXPECT_EQ(plan.sampler.attr_fields, (std::vector<std::string>{"c"}));
    EXPECT_TRUE(plan.find("c")->item_attr);
    EXPECT_TRUE(plan.find("i")->item_id);
  }
  EXPECT_NE(error_of<ConfigError>([] {
              plan_of(R"(
                data_config { negative_sampler { input_path: "a" num_sample: 2 item_id_field: "i" attr_fields: "zz" } }
                feature_configs { id_feature { feature_name: "i" num_buckets: 3 embedding_dim: 4 } })");
            }).find("data_config.negative_sampler.attr_fields[0]: 'zz' is not an input column"),
            std::string::npos);
}

}  // namespace column_plan_test
}  // namespace tzrec::datagen
