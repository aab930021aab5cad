// bool_mask_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/bool_mask_feature_test.py (test_bool_mask_feature_with_num_buckets and
// _with_hash_bucket_size, separator ","; its None cells are empty CSV cells), the examples of
// docs/source/feature/feature.md ("BoolMaskFeature": "123,456,90,80" with "true,false,true,false" or
// [1, 0, 1, 0] -> ["123", "90"]; [1, 2, 3, 4] -> [1, 3]) and BoolMaskFeature.fg_json; std::hash
// values mod 10 from hash_test.cc's mod-100 vectors ("1" -> 95, "3" -> 13); the sequence cases by
// hand from feature/bool_mask_feature.h.
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace bool_mask_feature_test {

using testing::error_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;
using testing::PhysicalType;
using testing::TypedBatch;

const std::string kFgNormal = "fg_mode: FG_NORMAL";

std::string bool_mask(const std::string& options) {
  return R"(feature_configs { bool_mask_feature { feature_name: "bool_mask_feat" embedding_dim: 16
      expression: ["user:itemid", "user:mask"] separator: "," )" +
         options + " } }";
}

struct Case {
  std::vector<std::string> values, mask;
  Ids ids_num_buckets, ids_hash, lengths;
};
// TorchEasyRec's four parameterized cases.
const std::vector<Case> kCases = {
    {{"1,2,3,4"}, {"true,false,true,false"}, {1, 3}, {5, 3}, {2}},
    {{"1", "2", "3", "4"}, {"true", "false", "true", "false"}, {1, 3}, {5, 3}, {1, 0, 1, 0}},
    {{"1", "2", ""}, {"true", "false", "true"}, {1}, {5}, {1, 0, 0}},
    {{"1,2", "3,4,5"}, {"true,false", "true,false,true"}, {1, 3, 5}, {5, 3, 9}, {1, 2}},
};

TEST(BoolMaskFeature, NumBucketsAndHashAsTorchEasyRec) {
  auto buckets = parser(bool_mask("num_buckets: 10"), kFgNormal);
  auto hashed = parser(bool_mask("hash_bucket_size: 10"), kFgNormal);
  EXPECT_EQ(buckets.input_columns(), (std::vector<std::string>{"itemid", "mask"}));
  const auto info = build_feature_infos(parse_config(bool_mask("num_buckets: 10"))).at(0);
  EXPECT_TRUE(info.is_sparse);
  EXPECT_EQ(info.num_embeddings, 10);
  EXPECT_EQ(info.embedding_dim, 16);
  for (const Case& c : kCases) {
    auto b = buckets.parse(make_batch({{"itemid", c.values}, {"mask", c.mask}}));
    EXPECT_EQ(ids_of(b.sparse_features.values()), c.ids_num_buckets) << c.values[0];
    EXPECT_EQ(ids_of(b.sparse_features.lengths()), c.lengths) << c.values[0];
    b = hashed.parse(make_batch({{"itemid", c.values}, {"mask", c.mask}}));
    EXPECT_EQ(ids_of(b.sparse_features.values()), c.ids_hash) << c.values[0];
    EXPECT_EQ(ids_of(b.sparse_features.lengths()), c.lengths) << c.values[0];
  }
}

// The docs' table: text or list masks, text or list values.
TEST(BoolMaskFeature, DocsExamplesWithListColumns) {
  auto p = parser(bool_mask("num_buckets: 1000"), kFgNormal);
  TypedBatch a(1);
  a.add("itemid", PhysicalType::kByteArray, 0, [](auto& c, int64_t) { c.append_string("123,456,90,80"); });
  a.add("mask", PhysicalType::kInt64, 1, [](auto& c, int64_t) {
    c.begin_list();
    for (int64_t m : {1, 0, 1, 0}) c.append(m);
    c.end_list();
  });
  EXPECT_EQ(ids_of(p.parse(a.batch).sparse_features.values()), (Ids{123, 90}));
  TypedBatch b(1);
  b.add("itemid", PhysicalType::kInt64, 1, [](auto& c, int64_t) {
    c.begin_list();
    for (int64_t v : {1, 2, 3, 4}) c.append(v);
    c.end_list();
  });
  b.add("mask", PhysicalType::kByteArray, 0, [](auto& c, int64_t) { c.append_string("true,false,true,false"); });
  EXPECT_EQ(ids_of(p.parse(b.batch).sparse_features.values()), (Ids{1, 3}));
  // A default value stands for rows left without an id; value_dim n keeps the first n ids.
  auto d = parser(bool_mask(R"(num_buckets: 10 default_value: "7" value_dim: 1)"), kFgNormal);
  auto out = d.parse(make_batch({{"itemid", {"", "1,2", "1,2"}}, {"mask", {"", "0,0", "1,1"}}}));
  EXPECT_EQ(ids_of(out.sparse_features.values()), (Ids{7, 7, 1}));
  EXPECT_EQ(ids_of(out.sparse_features.lengths()), (Ids{1, 1, 1}));
}

TEST(BoolMaskFeature, FgNoneReadsOwnColumn) {
  auto p = parser(bool_mask("num_buckets: 10"));
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"bool_mask_feat"}));
  auto b = p.parse(make_batch({{"bool_mask_feat", {"1\x03" "3", ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0}));
}

// By hand: items "1,2" | "3" | "4" with masks "true,true" | "false" | "1": the first item keeps 1
// (value_dim 1) or 1, 2 (value_dim 0); the second is masked out and takes the default "0".
TEST(BoolMaskFeature, Sequences) {
  const std::string group = R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10
      sequence_delim: ";" features { bool_mask_feature { feature_name: "bm" expression: ["item:v", "item:m"]
      separator: "," num_buckets: 10 embedding_dim: 4 )";
  auto one = parser(group + "} } } }", kFgNormal);
  EXPECT_EQ(one.input_columns(), (std::vector<std::string>{"s__v", "s__m"}));
  const auto batch = make_batch({{"s__v", {"1,2;3;4"}}, {"s__m", {"true,true;false;1"}}});
  auto b = one.parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features["s__bm"].values), (Ids{1, 0, 4}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__bm")), (Ids{3}));
  auto all = parser(group + "value_dim: 0 } } } }", kFgNormal);
  b = all.parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features["s__bm"].values), (Ids{1, 2, 0, 4}));
  EXPECT_EQ(ids_of(b.sequence_item_lengths.at("s__bm")), (Ids{2, 1, 1}));
}

// BoolMaskFeature.fg_json: value_dim 0 unless configured; the effective vocab_list with
// default_bucketize_value; a stand-alone sequence keeps feature_type and ends with its settings.
TEST(BoolMaskFeature, FgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      R"(feature_configs { bool_mask_feature { feature_name: "a" expression: ["user:v", "item:m"]
         embedding_dim: 4 vocab_list: ["x", "y"] } }
         feature_configs { sequence_bool_mask_feature { feature_name: "b" expression: ["item:v", "item:m"]
         embedding_dim: 4 separator: "," num_buckets: 10 sequence_delim: "|" sequence_length: 5 } })"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "bool_mask_feature", "feature_name": "a", "default_value": "", "expression": ["user:v", "item:m"],
     "vocab_list": ["", "<OOV>", "x", "y"], "default_bucketize_value": 1, "value_dim": 0},
    {"feature_type": "bool_mask_feature", "feature_name": "b", "default_value": "0", "expression": ["item:v", "item:m"],
     "separator": ",", "num_buckets": 10, "value_dim": 0, "sequence_delim": "|", "sequence_length": 5}
  ]})").dump());
}

// zch (docs/tzrec-compatibility.md §5.12; BoolMaskFeature derives IdFeature's table size, zch.zch_size
// first, and its fg_json writes hash_bucket_size MAX_HASH_BUCKET_SIZE, without value_type): the kept
// values become raw ids, hashed over [0, 2^63 - 1) (expected values: testing::zch_raw_id,
// libstdc++'s std::hash of the text mod 2^63 - 1), also in a grouped sequence (a masked-out item:
// the default "0"); num_buckets with a vocabulary is no conflict under zch; FG_NONE takes any int64
// as it is.
TEST(BoolMaskFeature, ZchGivesRawIds) {
  using testing::zch_raw_id;
  const std::string options = R"(num_buckets: 3 vocab_list: ["a"] zch { zch_size: 15 lru {} })";
  auto p = parser(bool_mask(options), kFgNormal);
  auto b = p.parse(make_batch({{"itemid", {"123,456,90", "7"}}, {"mask", {"true,false,true", "false"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{zch_raw_id("123"), zch_raw_id("90")}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0}));
  const auto info = build_feature_infos(parse_config(bool_mask(options))).at(0);
  EXPECT_EQ(info.num_embeddings, 15);
  EXPECT_EQ(info.zch_path, "feature_configs[0].bool_mask_feature.zch");
  EXPECT_EQ(info.zch_eviction, "lru");

  auto seq = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10
      sequence_delim: ";" features { bool_mask_feature { feature_name: "bm" expression: ["item:v", "item:m"]
      separator: "," embedding_dim: 4 zch { zch_size: 15 lfu {} } } } } })",
                    kFgNormal);
  b = seq.parse(make_batch({{"s__v", {"1,2;3;4"}}, {"s__m", {"true,true;false;1"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["s__bm"].values), (Ids{zch_raw_id("1"), zch_raw_id("0"), zch_raw_id("4")}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__bm")), (Ids{3}));

  auto none = parser(bool_mask(options));
  b = none.parse(make_batch({{"bool_mask_feat",
                              {"123456789012345\x03"
                               "-5",
                               ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0}));

  const auto doc = create_fg_json(parse_config(
      R"(feature_configs { bool_mask_feature { feature_name: "a" expression: ["user:v", "item:m"]
         embedding_dim: 4 hash_bucket_size: 10 zch { zch_size: 15 lfu {} } } }
         feature_configs { sequence_bool_mask_feature { feature_name: "b" expression: ["item:v", "item:m"]
         embedding_dim: 4 vocab_list: ["x"] zch { zch_size: 15 lfu {} } sequence_delim: "|" sequence_length: 5 } })"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "bool_mask_feature", "feature_name": "a", "default_value": "", "expression": ["user:v", "item:m"],
     "hash_bucket_size": 9223372036854775807, "value_dim": 0},
    {"feature_type": "bool_mask_feature", "feature_name": "b", "default_value": "0", "expression": ["item:v", "item:m"],
     "hash_bucket_size": 9223372036854775807, "value_dim": 0, "sequence_delim": "|", "sequence_length": 5}
  ]})").dump());
}

TEST(BoolMaskFeature, ConfigErrorsNameTheField) {
  auto build = [](const std::string& config) {
    build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + config));
  };
  const std::string at = "feature_configs[0].bool_mask_feature";
  EXPECT_NE(error_of<ConfigError>([&] {
              build(R"(feature_configs { bool_mask_feature { feature_name: "f" expression: ["user:v"]
                  embedding_dim: 4 num_buckets: 3 } })");
            }).find(at + ".expression: has 1 inputs; a bool_mask_feature reads two"),
            std::string::npos);
  EXPECT_EQ(error_of<ConfigError>([&] { build(bool_mask("")); }),
            at + ": set one of hash_bucket_size, num_buckets, vocab_list, vocab_dict or vocab_file for feature "
                 "bool_mask_feat");
  EXPECT_NE(error_of<ConfigError>([&] { build(bool_mask(R"(num_buckets: 3 vocab_list: ["a"])")); })
                .find(at + ".num_buckets: set either num_buckets or a vocabulary"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] {
              build(R"(feature_configs { sequence_bool_mask_feature { feature_name: "f"
                  expression: ["item:v", "item:m"] embedding_dim: 4 num_buckets: 3 value_dim: 2 } })");
            }).find("feature_configs[0].sequence_bool_mask_feature.value_dim: 2"),
            std::string::npos);
}

TEST(BoolMaskFeature, BadDataNamesFileRowColumnFeature) {
  auto p = parser(bool_mask("num_buckets: 10"), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"itemid", {"1,2"}}, {"mask", {"true,yes"}}})); }),
            "t.csv line 2 column mask: mask entry 'yes' of bool_mask_feature bool_mask_feat is not a boolean; use "
            "true / false or 1 / 0 — fix the data");
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"itemid", {"1,2"}}, {"mask", {"true"}}})); }),
            "t.csv line 2 column itemid: bool_mask_feature bool_mask_feat has 2 values in column itemid but 1 mask "
            "entries in column mask; the mask needs one entry per value — fix the data");
}

}  // namespace bool_mask_feature_test
}  // namespace tzrec::feature
