// custom_feature (feature/custom_feature.h) with the built-in EditDistance of pyfg's official
// libedit_distance.so and with the example operator library of examples/custom_operator (built
// as libtzrec_example_custom_operator.so). Expected values: TorchEasyRec's custom_feature_test.py
// (test_edit_distance, test_edit_distance_with_boundary: "裙子" / "连衣裙" -> 3, bucket 1 of
// [0, 5, 10]) and hand computation (Levenshtein distances, the example operators' definitions).
#include "feature/custom_feature.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_registry.h"
#include "feature/features.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace custom_feature_test {

using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;

const std::string kExampleLib = std::string(TZREC_BINARY_DIR) + "/libtzrec_example_custom_operator.so";

std::string edit_distance(const std::string& name, const std::string& encoding, const std::string& extra = "") {
  return "feature_configs { custom_feature { feature_name: \"" + name +
         "\" operator_name: \"EditDistance\" operator_lib_file: \"pyfg/lib/libedit_distance.so\" "
         "expression: [\"user:query\", \"item:title\"] " +
         (encoding.empty() ? std::string()
                           : "operator_params { fields { key: \"encoding\" value { string_value: \"" + encoding +
                                 "\" } } } ") +
         extra + " } }";
}

std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

TEST(CustomFeature, EditDistanceAsTorchEasyRec) {
  auto p = parser(edit_distance("utf8", "utf-8") + edit_distance("latin", "") +
                      edit_distance("bucket", "utf-8", "boundaries: [0, 5, 10] embedding_dim: 16"),
                  "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"query", "title"}));
  auto b = p.parse(make_batch({{"query", {"裙子", "kitten", ""}}, {"title", {"连衣裙", "sitting", "abc"}}}));
  // utf-8: code points ("裙子" -> "连衣裙": 3); latin (the default): bytes (e8 a3 99 e5 ad 90 ->
  // e8 bf 9e e8 a1 a3 e8 a3 99: 8).
  EXPECT_EQ(floats_of(b.dense_features["utf8"]), (Floats{3, 3, 3}));
  EXPECT_EQ(floats_of(b.dense_features["latin"]), (Floats{8, 3, 3}));
  EXPECT_EQ(bag(b, "bucket"), (std::pair<Ids, Ids>{{1, 1, 1}, {1, 1, 1}}));
}

// RegexReplace (docs/custom_operators.md; TorchEasyRec's feature.md table of official operators):
// every match replaced, one text per value, hashed as an id_feature's text (hand-computed below).
TEST(CustomFeature, RegexReplace) {
  const std::string features =
      "feature_configs { custom_feature { feature_name: \"clean\" operator_name: \"RegexReplace\" "
      "operator_lib_file: \"pyfg/lib/libregex_replace.so\" expression: [\"item:title\"] "
      "operator_params { fields { key: \"regex_patten\" value { string_value: \"[0-9]+\" } } "
      "fields { key: \"replacement\" value { string_value: \"#\" } } } "
      "hash_bucket_size: 1000000 embedding_dim: 4 } }";
  auto p = parser(features, "fg_mode: FG_NORMAL");
  auto b = p.parse(make_batch({{"title", {"iphone 15 pro 256gb", "no digits", "7"}}}));
  // "iphone # pro #gb", "no digits", "#": each hashed as id_feature text (std::hash % buckets).
  const Ids want = {static_cast<int64_t>(std::hash<std::string>()("iphone # pro #gb") % 1000000),
                    static_cast<int64_t>(std::hash<std::string>()("no digits") % 1000000),
                    static_cast<int64_t>(std::hash<std::string>()("#") % 1000000)};
  EXPECT_EQ(bag(b, "clean"), (std::pair<Ids, Ids>{want, {1, 1, 1}}));
}

// SeqExpr (docs/custom_operators.md; TorchEasyRec's feature.md examples "cur_time-clk_time_seq"
// over ["user:cur_time", "item:clk_time_seq"] and "spherical_distance"): the formula per item of a
// grouped sequence, the row's user input broadcast; hand-computed values.
TEST(CustomFeature, SeqExpr) {
  auto p = parser(R"(
    feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: ";"
      features { custom_feature { feature_name: "gap" operator_name: "SeqExpr"
                                  operator_lib_file: "pyfg/lib/libseq_expr.so"
                                  expression: ["user:cur_time", "item:clk_time"]
                                  operator_params { fields { key: "formula" value { string_value: "cur_time-clk_time" } } }
      } } } }
    feature_configs { custom_feature { feature_name: "dist" operator_name: "SeqExpr"
                                       operator_lib_file: "pyfg/lib/libseq_expr.so"
                                       expression: ["user:ulng", "user:ulat", "item:ilng", "item:ilat"]
                                       operator_params { fields { key: "formula" value { string_value: "spherical_distance" } } }
    } })",
                  "fg_mode: FG_NORMAL");
  auto b = p.parse(make_batch({{"cur_time", {"100", "50"}},
                               {"s__clk_time", {"90;70;100", "49"}},
                               {"ulng", {"0", "120"}},
                               {"ulat", {"0", "30"}},
                               {"ilng", {"0", "120"}},
                               {"ilat", {"1", "30"}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features["s__gap"]), (Floats{10, 30, 0, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths["s__gap"]), (Ids{3, 1}));
  // One degree of latitude on a 6371 km sphere: 6371 · π / 180 = 111.19493 km; the same point: 0.
  const Floats dist = floats_of(b.dense_features["dist"]);
  ASSERT_EQ(dist.size(), 2u);
  EXPECT_NEAR(dist[0], 111.19493, 1e-3);
  EXPECT_NEAR(dist[1], 0.0, 1e-3);
}

TEST(CustomFeature, ExampleLibraryNumbersAndTexts) {
  const std::string features =
      "feature_configs { custom_feature { feature_name: \"overlap\" operator_name: \"TokenOverlap\" "
      "operator_lib_file: \"" + kExampleLib + "\" expression: [\"user:a\", \"item:b\"] } }"
      "feature_configs { custom_feature { feature_name: \"long_overlap\" operator_name: \"TokenOverlap\" "
      "operator_lib_file: \"" + kExampleLib + "\" expression: [\"user:a\", \"item:b\"] "
      "operator_params { fields { key: \"min_length\" value { number_value: 2 } } } } }"
      "feature_configs { custom_feature { feature_name: \"pairs\" operator_name: \"TokenPairs\" "
      "operator_lib_file: \"" + kExampleLib + "\" expression: [\"user:a\", \"item:b\"] "
      "vocab_list: [\"x_y\", \"zz_y\"] embedding_dim: 4 } }";
  auto p = parser(features, "fg_mode: FG_DAG");
  auto b = p.parse(make_batch({{"a", {"x\x1dzz\x1dq", "", "x"}}, {"b", {"y\x1dzz\x1dx", "y", ""}}}));
  // Row 1: x and zz occur in b (2; min_length 2: zz only). Rows 2-3: nothing in common.
  EXPECT_EQ(floats_of(b.dense_features["overlap"]), (Floats{2, 0, 0}));
  EXPECT_EQ(floats_of(b.dense_features["long_overlap"]), (Floats{1, 0, 0}));
  // vocab [default "0", <OOV>, x_y, zz_y]: row 1 pairs x_y 2, x_zz 1, x_x 1, zz_y 3, zz_zz 1, zz_x 1,
  // q_y 1, q_zz 1, q_x 1; rows 2-3 no pair: default "0" -> 0.
  EXPECT_EQ(bag(b, "pairs"), (std::pair<Ids, Ids>{{2, 1, 1, 3, 1, 1, 1, 1, 1, 0, 0}, {9, 1, 1}}));
}

// A grouped sequence's custom sub-feature: the query per row, the title per item.
TEST(CustomFeature, SequenceItems) {
  auto p = parser(R"(
    feature_configs { sequence_feature { sequence_name: "s" sequence_length: 3 sequence_delim: ";"
      features { custom_feature { feature_name: "d" operator_name: "EditDistance"
                                  operator_lib_file: "pyfg/lib/libedit_distance.so"
                                  expression: ["user:query", "item:title"] } } } })",
                  "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"query", "s__title"}));
  auto b = p.parse(make_batch({{"query", {"abc", "x"}}, {"s__title", {"abd;abc;b;zzz", "x"}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features["s__d"]), (Floats{1, 0, 2, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths["s__d"]), (Ids{3, 1}));
}

// zch (docs/tzrec-compatibility.md §5.12; TorchEasyRec's CustomFeature: zch makes the feature
// sparse with zch.zch_size rows, before every other size; fg.json below): the operator's values
// become raw ids, their texts hashed over [0, 2^63 - 1) (expected values: testing::zch_raw_id,
// libstdc++'s std::hash of the text mod 2^63 - 1); no pair gives default_value "0"; a stand-alone
// sequence's FG_NONE column takes any int64 as it is.
TEST(CustomFeature, ZchGivesRawIds) {
  using testing::zch_raw_id;
  const std::string features =
      "feature_configs { custom_feature { feature_name: \"pairs\" operator_name: \"TokenPairs\" "
      "operator_lib_file: \"" + kExampleLib + "\" expression: [\"user:a\", \"item:b\"] "
      "hash_bucket_size: 10 embedding_dim: 4 zch { zch_size: 25 eviction_interval: 4 lfu {} } } }";
  auto p = parser(features, "fg_mode: FG_DAG");
  auto b = p.parse(make_batch({{"a", {"x\x1dzz", "", "x"}}, {"b", {"y", "y", ""}}}));
  EXPECT_EQ(bag(b, "pairs"),
            (std::pair<Ids, Ids>{{zch_raw_id("x_y"), zch_raw_id("zz_y"), zch_raw_id("0"), zch_raw_id("0")}, {2, 1, 1}}));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_DAG } " + features));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_TRUE(infos[0].is_sparse);
  EXPECT_EQ(infos[0].num_embeddings, 25);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].custom_feature.zch");
  EXPECT_EQ(infos[0].zch_eviction_interval, 4);

  auto none = parser(R"(feature_configs { sequence_custom_feature { feature_name: "d" operator_name: "EditDistance"
      operator_lib_file: "pyfg/lib/libedit_distance.so" expression: ["user:query", "item:title"]
      sequence_length: 5 sequence_delim: "|" embedding_dim: 4 zch { zch_size: 25 lru {} } } })");
  b = none.parse(make_batch({{"d", {"123456789012345|-5", ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features["d"].values), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("d")), (Ids{2, 0}));
}

// CustomFeature.fg_json with zch: hash_bucket_size MAX_HASH_BUCKET_SIZE (2^63 - 1) and value_type
// "string", whatever other bucketizer is set.
TEST(CustomFeature, ZchFgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      "data_config { fg_mode: FG_DAG } " +
      edit_distance("custom_1", "", "num_buckets: 10 embedding_dim: 16 zch { zch_size: 25 lfu {} }")));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "custom_feature", "feature_name": "custom_1", "default_value": "0",
     "operator_name": "EditDistance", "operator_lib_file": "pyfg/lib/libedit_distance.so",
     "is_op_thread_safe": false, "expression": ["user:query", "item:title"], "value_type": "string",
     "hash_bucket_size": 9223372036854775807, "value_dim": 1}
  ]})").dump());
}

std::string error_of(const std::string& features) {
  try {
    build_features(parse_config("data_config { fg_mode: FG_NORMAL } " + features));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CustomFeature, LibraryErrorsNameFileAndSymbol) {
  auto feature = [](const std::string& lib, const std::string& op, const std::string& extra = "") {
    return "feature_configs { custom_feature { feature_name: \"c\" operator_name: \"" + op +
           "\" operator_lib_file: \"" + lib + "\" expression: [\"user:a\", \"item:b\"] " + extra + " } }";
  };
  EXPECT_NE(error_of(feature("/nonexistent/libop.so", "X"))
                .find("feature_configs[0].custom_feature.operator_lib_file: cannot load /nonexistent/libop.so"),
            std::string::npos);
  // A shared library without the ABI symbol.
  EXPECT_NE(error_of(feature("libm.so.6", "X")).find("libm.so.6 does not export tzrec_get_custom_operator"),
            std::string::npos);
  EXPECT_NE(error_of(feature(kExampleLib, "Nope")).find("operator_name: " + kExampleLib + " has no operator named Nope"),
            std::string::npos);
  EXPECT_NE(error_of(feature(kExampleLib, "TokenOverlap",
                             "operator_params { fields { key: \"min_length\" value { number_value: -1 } } }"))
                .find("operator_params: operator TokenOverlap of " + kExampleLib +
                      " refused its parameters {\"min_length\":-1}: min_length must be a non-negative number"),
            std::string::npos);
  EXPECT_NE(error_of(feature("pyfg/lib/libnope.so", "Nope"))
                .find("official operator Nope of pyfg/lib/libnope.so (built in: EditDistance "
                      "(pyfg/lib/libedit_distance.so), RegexReplace (pyfg/lib/libregex_replace.so), SeqExpr "
                      "(pyfg/lib/libseq_expr.so))"),
            std::string::npos);
  const std::string seq_expr = "pyfg/lib/libseq_expr.so";
  EXPECT_NE(error_of(feature(seq_expr, "SeqExpr")).find("parameter \"formula\""), std::string::npos);
  EXPECT_NE(error_of(feature(seq_expr, "SeqExpr",
                             "operator_params { fields { key: \"formula\" value { string_value: \"a - c\" } } }"))
                .find("formula \"a - c\" at position 4"),
            std::string::npos)
      << error_of(feature(seq_expr, "SeqExpr",
                          "operator_params { fields { key: \"formula\" value { string_value: \"a - c\" } } }"));
  EXPECT_NE(error_of(feature(seq_expr, "SeqExpr",
                             "operator_params { fields { key: \"formula\" value { string_value: \"spherical_distance\" } } }"))
                .find("formula spherical_distance takes four inputs (lng1, lat1, lng2, lat2), got 2"),
            std::string::npos);
  const std::string regex = "pyfg/lib/libregex_replace.so";
  EXPECT_NE(error_of(feature(regex, "RegexReplace")).find("parameter \"regex_patten\" (the regular expression) is required"),
            std::string::npos);
  EXPECT_NE(error_of(feature(regex, "RegexReplace",
                             "operator_params { fields { key: \"regex_patten\" value { string_value: \"a(\" } } }"))
                .find("\"regex_patten\" \"a(\" is not a regular expression"),
            std::string::npos);
  EXPECT_NE(error_of(edit_distance("e", "gbk")).find("encoding \"gbk\": use \"utf-8\" or \"latin\""),
            std::string::npos);
}

// An operator that fails on a row: a DataError naming file, row and feature.
TEST(CustomFeature, OperatorErrorIsADataError) {
  auto p = parser("feature_configs { custom_feature { feature_name: \"c\" operator_name: \"TokenOverlap\" "
                  "operator_lib_file: \"" + kExampleLib + "\" expression: [\"user:a\", \"item:b\", \"item:c\"] } }",
                  "fg_mode: FG_NORMAL");
  try {
    p.parse(make_batch({{"a", {"x"}}, {"b", {"y"}}, {"c", {"z"}}}));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("operator TokenOverlap of feature c failed: TokenOverlap takes 2 inputs, "
                                         "got 3"),
              std::string::npos)
        << e.what();
  }
}

// CustomFeature.fg_json of TorchEasyRec's multi_tower_din_fg_mock.config feature custom_1 (key order
// of custom_feature.py: operator_params merged after value_type, value_dim always).
TEST(CustomFeature, FgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      "data_config { fg_mode: FG_DAG } " + edit_distance("custom_1", "utf-8", "embedding_dim: 16") +
      "feature_configs { sequence_custom_feature { feature_name: \"seq_c\" operator_name: \"EditDistance\" "
      "operator_lib_file: \"pyfg/lib/libedit_distance.so\" expression: [\"user:query\", \"item:title\"] "
      "sequence_length: 5 sequence_delim: \"|\" boundaries: [1, 2] embedding_dim: 4 } }"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "custom_feature", "feature_name": "custom_1", "default_value": "0",
     "operator_name": "EditDistance", "operator_lib_file": "pyfg/lib/libedit_distance.so",
     "is_op_thread_safe": false, "expression": ["user:query", "item:title"], "value_type": "float",
     "encoding": "utf-8", "value_dim": 1},
    {"feature_type": "custom_feature", "feature_name": "seq_c", "default_value": "0",
     "operator_name": "EditDistance", "operator_lib_file": "pyfg/lib/libedit_distance.so",
     "is_op_thread_safe": false, "expression": ["user:query", "item:title"], "value_type": "float",
     "boundaries": [1.0, 2.0], "value_dim": 1, "sequence_delim": "|", "sequence_length": 5, "is_sequence": true}
  ]})").dump());
}

}  // namespace custom_feature_test
}  // namespace tzrec::feature
