// combine_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/combine_feature_test.py (test_fg_encoded_combine_feature,
// test_combine_feature_dense, _with_boundary, _with_num_buckets, _with_value_map,
// test_sequence_combine_feature_with_value_map (+ _dense), test_simple_sequence_combine_feature;
// its None cells are empty CSV cells) and CombineFeature._fg_json; the rest by hand from
// feature/combine_feature.h.
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace combine_feature_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;

const std::string kFgNormal = "fg_mode: FG_NORMAL";

std::string combine(const std::string& combiner, const std::string& options) {
  return R"(feature_configs { combine_feature { feature_name: "combine_feat" expression: "user:combine_input" )"
         R"(default_value: "0" combiner: ")" + combiner + "\" " + options + " } }";
}

data::RecordBatch input(const std::vector<std::string>& cells) { return make_batch({{"combine_input", cells}}); }

TEST(CombineFeature, FgNoneAsTorchEasyRec) {
  auto p = parser(R"(feature_configs { combine_feature { feature_name: "combine_feat" num_buckets: 10
      embedding_dim: 16 fg_encoded_default_value: "0" } })");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"combine_feat"}));
  auto b = p.parse(make_batch({{"combine_feat", {"1", "2", "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
}

TEST(CombineFeature, DenseAsTorchEasyRec) {
  const std::vector<std::string> cells = {"1.0\x1d" "2.0", "3.0", "", ""};
  auto sum = parser(combine("sum", ""), kFgNormal);
  EXPECT_EQ(sum.input_columns(), (std::vector<std::string>{"combine_input"}));
  const auto info = build_feature_infos(parse_config(combine("sum", ""))).at(0);
  EXPECT_FALSE(info.is_sparse);
  EXPECT_EQ(info.value_dim, 1);
  EXPECT_EQ(floats_of(sum.parse(input(cells)).dense_features.values()), (Floats{3, 3, 0, 0}));
  EXPECT_EQ(floats_of(parser(combine("mean", ""), kFgNormal).parse(input(cells)).dense_features.values()),
            (Floats{1.5, 3, 0, 0}));
  // By hand: min, max, count.
  EXPECT_EQ(floats_of(parser(combine("min", ""), kFgNormal).parse(input(cells)).dense_features.values()),
            (Floats{1, 3, 0, 0}));
  EXPECT_EQ(floats_of(parser(combine("max", ""), kFgNormal).parse(input(cells)).dense_features.values()),
            (Floats{2, 3, 0, 0}));
  EXPECT_EQ(floats_of(parser(combine("count", ""), kFgNormal).parse(input(cells)).dense_features.values()),
            (Floats{2, 1, 0, 0}));
}

TEST(CombineFeature, BoundariesAndNumBucketsAsTorchEasyRec) {
  const std::string bounds = "boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 16";
  const std::vector<std::string> cells = {"1.0\x1d" "2.0", "0.0", "", ""};
  auto b = parser(combine("sum", bounds), kFgNormal).parse(input(cells));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{4, 1, 1, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  b = parser(combine("mean", bounds), kFgNormal).parse(input(cells));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 1, 1, 1}));
  EXPECT_EQ(build_feature_infos(parse_config(combine("sum", bounds))).at(0).num_embeddings, 5);

  const std::string buckets = "num_buckets: 10 embedding_dim: 16";
  const std::vector<std::string> ints = {"1\x1d" "2", "3", "", ""};
  b = parser(combine("sum", buckets), kFgNormal).parse(input(ints));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 3, 0, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  b = parser(combine("mean", buckets), kFgNormal).parse(input(ints));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 3, 0, 0}));
  EXPECT_EQ(build_feature_infos(parse_config(combine("sum", buckets))).at(0).num_embeddings, 10);
}

TEST(CombineFeature, ValueMapAsTorchEasyRec) {
  const std::string opts =
      R"(num_buckets: 10 embedding_dim: 16 value_map { key: "tag1" value: 1 } value_map { key: "tag2" value: 2 }
         value_map { key: "tag3" value: 3 })";
  const std::vector<std::string> cells = {"tag1\x1dtag2", "tag3", "", ""};
  auto b = parser(combine("sum", opts), kFgNormal).parse(input(cells));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 3, 0, 0}));
  b = parser(combine("mean", opts), kFgNormal).parse(input(cells));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 3, 0, 0}));
  // By hand: values without an entry are no value; a row left without one takes the default.
  b = parser(combine("sum", opts), kFgNormal).parse(input({"tag1\x1dother", "other"}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 0}));
}

// test_sequence_combine_feature_with_value_map (+ _dense): a grouped sub-feature's single input is
// per item whatever its side, read from "<sequence_name>__<input>".
TEST(CombineFeature, GroupedSequenceAsTorchEasyRec) {
  auto group = [](const std::string& combiner, const std::string& options) {
    return R"(feature_configs { sequence_feature { sequence_name: "click_50_seq" sequence_length: 50
        sequence_delim: ";" features { combine_feature { feature_name: "combine_feat"
        expression: "user:combine_input" default_value: "0" combiner: ")" +
           combiner + R"(" value_map { key: "tag1" value: 1 } value_map { key: "tag2" value: 2 } )" + options +
           " } } } }";
  };
  const auto batch = make_batch({{"click_50_seq__combine_input", {"tag1\x1dtag2;tag1", "tag2", ""}}});
  auto sum = parser(group("sum", "num_buckets: 10 embedding_dim: 16"), kFgNormal);
  EXPECT_EQ(sum.input_columns(), (std::vector<std::string>{"click_50_seq__combine_input"}));
  auto b = sum.parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features["click_50_seq__combine_feat"].values), (Ids{3, 1, 2, 0}));
  EXPECT_EQ(ids_of(b.sparse_features["click_50_seq__combine_feat"].lengths), (Ids{2, 1, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("click_50_seq__combine_feat")), (Ids{2, 1, 1}));
  b = parser(group("mean", "num_buckets: 10 embedding_dim: 16"), kFgNormal).parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features["click_50_seq__combine_feat"].values), (Ids{1, 1, 2, 0}));
  b = parser(group("sum", ""), kFgNormal).parse(batch);
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("click_50_seq__combine_feat")), (Floats{3, 1, 2, 0}));
  b = parser(group("mean", ""), kFgNormal).parse(batch);
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("click_50_seq__combine_feat")), (Floats{1.5, 1, 2, 0}));
}

// test_simple_sequence_combine_feature: an empty default is "0" in sequences.
TEST(CombineFeature, SimpleSequenceAsTorchEasyRec) {
  auto seq = [](const std::string& combiner, const std::string& default_value) {
    return R"(feature_configs { sequence_combine_feature { feature_name: "seq_combine_feat" num_buckets: 10
        embedding_dim: 16 expression: "user:seq_combine_input" sequence_delim: ";" sequence_length: 50
        default_value: ")" +
           default_value + R"(" combiner: ")" + combiner + "\" } }";
  };
  const auto batch = make_batch({{"seq_combine_input", {"1\x1d" "2;3", "4", ""}}});
  for (const std::string def : {"0", ""}) {
    auto b = parser(seq("sum", def), kFgNormal).parse(batch);
    EXPECT_EQ(ids_of(b.sparse_features["seq_combine_feat"].values), (Ids{3, 3, 4, 0}));
    EXPECT_EQ(ids_of(b.sequence_lengths.at("seq_combine_feat")), (Ids{2, 1, 1}));
  }
  auto b = parser(seq("mean", "0"), kFgNormal).parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features["seq_combine_feat"].values), (Ids{1, 3, 4, 0}));
  const auto info = build_feature_infos(parse_config(seq("sum", "0"))).at(0);
  EXPECT_EQ(info.num_embeddings, 10);
  EXPECT_EQ(info.embedding_name, "seq_combine_feat_emb");
}

// CombineFeature._fg_json: num_buckets makes value_type "int64" (in place); sparse entries write
// value_dim 1; value_map entries sorted by key.
TEST(CombineFeature, FgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      combine("Mean", R"(num_buckets: 10 embedding_dim: 16 value_map { key: "tag2" value: 2 }
                         value_map { key: "tag1" value: 1 })") +
      R"(feature_configs { combine_feature { feature_name: "w" expression: "user:weight" separator: ","
         normalizer: "method=log10" } })"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "combine_feature", "feature_name": "combine_feat", "default_value": "0",
     "expression": "user:combine_input", "value_type": "int64", "need_prefix": false, "combiner": "mean",
     "value_map": {"tag1": 1.0, "tag2": 2.0}, "num_buckets": 10, "value_dim": 1},
    {"feature_type": "combine_feature", "feature_name": "w", "default_value": "", "expression": "user:weight",
     "value_type": "float", "need_prefix": false, "combiner": "sum", "separator": ",", "normalizer": "method=log10"}
  ]})").dump());
}

TEST(CombineFeature, ConfigAndDataErrors) {
  auto build = [](const std::string& config) {
    build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + config));
  };
  const std::string at = "feature_configs[0].combine_feature";
  EXPECT_NE(error_of<ConfigError>([&] { build(combine("", "")); }).find(at + ".combiner: must not be empty"),
            std::string::npos);
  EXPECT_EQ(error_of<NotSupportedError>([&] { build(combine("gap_min", "")); }),
            "not supported yet: " + at + ".combiner 'gap_min'");
  EXPECT_EQ(error_of<ConfigError>([&] {
              build(R"(feature_configs { combine_feature { feature_name: "c" expression: "user:i"
                  default_value: "x" } })");
            }),
            at + ".default_value: 'x' is neither a key of value_map nor a number; rows without a value take it");
  auto p = parser(combine("sum", ""), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] { p.parse(input({"1", "1\x1dx"})); }),
            "t.csv line 3 column combine_input: value 'x' of combine_feature combine_feat is not a number; without "
            "value_map the values are numbers — fix the data or set " + at + ".value_map");
  auto buckets = parser(combine("sum", "num_buckets: 10 embedding_dim: 4"), kFgNormal);
  const std::string msg = error_of<DataError>([&] { buckets.parse(input({"7\x1d" "5"})); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column combine_input: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("12"), std::string::npos) << msg;
}

}  // namespace combine_feature_test
}  // namespace tzrec::feature
