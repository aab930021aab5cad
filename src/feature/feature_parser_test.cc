#include "feature/feature_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "base/error.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace feature_parser_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;

using testing::make_batch;
using testing::parse_config;
using Cols = std::vector<std::pair<std::string, std::vector<std::string>>>;

FeatureParser parser(const std::string& features, const std::string& data = "",
                     HashKind hash = HashKind::kStdHash) {
  return FeatureParser(parse_config("data_config { " + data + " } " + features), true,
                       hash);
}


// values and lengths of one key of the KJT.
std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

// ---- FG_NONE ------------------------------------------------------------------------------------

TEST(FeatureParserFgNone, MultiValueWeightedDenseLabelsInOneBatch) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "cat_a" embedding_dim: 4 num_buckets: 10 } }
    feature_configs { id_feature { feature_name: "cat_b" embedding_dim: 4 hash_bucket_size: 100 weighted: true } }
    feature_configs { raw_feature { feature_name: "price" } }
    feature_configs { raw_feature { feature_name: "rb" boundaries: [1, 2, 3] embedding_dim: 4 } }
  )",
                  R"(label_fields: "clk" sample_weight_fields: "w")");
  EXPECT_EQ(p.input_columns(),
            (std::vector<std::string>{"cat_a", "cat_b", "price", "rb", "clk", "w"}));
  auto b = p.parse(make_batch({{"cat_a",
                                {"1\x03"
                                 "3",
                                 "", "9"}},
                               {"cat_b",
                                {"5:0.5",
                                 "7:1.5\x03"
                                 "2:2",
                                 ""}},
                               {"price", {"1.5", "2", "-3e0"}},
                               {"rb", {"0", "3", ""}},
                               {"clk", {"1", "0", "1"}},
                               {"w", {"0.5", "1", "2"}}}));
  EXPECT_EQ(b.batch_size, 3);
  const auto& kjt = b.sparse_features;
  EXPECT_EQ(kjt.keys(), (std::vector<std::string>{"cat_a", "cat_b", "rb"}));
  EXPECT_EQ(ids_of(kjt.lengths()), (Ids{2, 0, 1, 1, 2, 0, 1, 1, 0}));
  EXPECT_EQ(ids_of(kjt.values()), (Ids{1, 3, 9, 5, 7, 2, 0, 3}));
  ASSERT_TRUE(kjt.has_weights());
  EXPECT_EQ(floats_of(kjt.weights()), (Floats{1, 1, 1, 0.5f, 1.5f, 2, 1, 1}));
  EXPECT_EQ(b.dense_features.keys(), (std::vector<std::string>{"price"}));
  EXPECT_EQ(floats_of(b.dense_features["price"]), (Floats{1.5f, 2, -3}));
  EXPECT_EQ(b.dense_features.values().sizes(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(floats_of(b.labels.at("clk")), (Floats{1, 0, 1}));
  EXPECT_EQ(b.labels.at("clk").scalar_type(), torch::kFloat32);
  EXPECT_EQ(floats_of(b.sample_weights.at("w")), (Floats{0.5f, 1, 2}));
}

TEST(FeatureParserFgNone, NoWeightsWhenNothingIsWeighted) {
  auto p = parser(
      R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 10 } })");
  auto b = p.parse(make_batch({{"a", {"1", "2"}}}));
  EXPECT_FALSE(b.sparse_features.has_weights());
  EXPECT_TRUE(b.dense_features.empty());
  EXPECT_TRUE(b.labels.empty());
}

TEST(FeatureParserFgNone, DefaultsAndCustomSeparator) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 10 fg_encoded_default_value: "4|5" } }
    feature_configs { id_feature { feature_name: "wa" embedding_dim: 4 num_buckets: 10 weighted: true fg_encoded_default_value: "6" } }
    feature_configs { raw_feature { feature_name: "v" value_dim: 2 fg_encoded_default_value: "0.5|-1" } }
    feature_configs { id_feature { feature_name: "e" embedding_dim: 4 num_buckets: 10 fg_encoded_default_value: "" } }
  )",
                  R"(fg_encoded_multival_sep: "|")");
  auto b = p.parse(
      make_batch({{"a", {"", "7"}}, {"wa", {"", "1:3"}}, {"v", {"", "1|2"}}, {"e", {"", "1"}}}));
  EXPECT_EQ(bag(b, "a"), (std::pair<Ids, Ids>{{4, 5, 7}, {2, 1}}));
  EXPECT_EQ(bag(b, "wa"), (std::pair<Ids, Ids>{{6, 1}, {1, 1}}));
  EXPECT_EQ(floats_of(b.sparse_features["wa"].weights), (Floats{1, 3}));
  EXPECT_EQ(bag(b, "e"), (std::pair<Ids, Ids>{{1}, {0, 1}}));  // "" default = no default
  EXPECT_EQ(floats_of(b.dense_features["v"]), (Floats{0.5f, -1, 1, 2}));
}

TEST(FeatureParserFgNone, BadDataErrorsNameFileLineColumnFeature) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "cat_3" embedding_dim: 4 num_buckets: 500 } }
    feature_configs { id_feature { feature_name: "h" embedding_dim: 4 hash_bucket_size: 100 weighted: true } }
    feature_configs { raw_feature { feature_name: "v" value_dim: 2 } }
    feature_configs { raw_feature { feature_name: "rb" boundaries: [1, 2] embedding_dim: 4 } }
  )",
                  R"(label_fields: "clk")");
  auto run = [&](Cols changes) {
    Cols cols = {{"cat_3", {"1", "2"}},
                 {"h", {"1:1", "2:1"}},
                 {"v",
                  {"1\x03"
                   "2",
                   "3\x03"
                   "4"}},
                 {"rb", {"0", "1"}},
                 {"clk", {"0", "1"}}};
    for (auto& [name, cells] : changes) {
      for (auto& c : cols) {
        if (c.first == name) c.second = cells;
      }
    }
    p.parse(make_batch(cols));
  };
  EXPECT_NO_THROW(run({}));
  EXPECT_EQ(error_of<DataError>([&] {
              run({{"cat_3", {"1", "512"}}});
            }),
            "t.csv line 3 column cat_3: id 512 out of range [0, 500) for feature cat_3 "
            "(num_buckets 500); fix the data or raise num_buckets");
  EXPECT_EQ(error_of<DataError>([&] {
              run({{"cat_3", {"-1", "2"}}});
            }),
            "t.csv line 2 column cat_3: id -1 out of range [0, 500) for feature cat_3 "
            "(num_buckets 500); fix the data or raise num_buckets");
  EXPECT_EQ(error_of<DataError>([&] {
              run({{"h", {"1:1", "100:1"}}});
            }),
            "t.csv line 3 column h: id 100 out of range [0, 100) for feature h "
            "(hash_bucket_size 100); fix the data or raise hash_bucket_size");
  EXPECT_EQ(error_of<DataError>([&] {
              run({{"rb", {"3", "1"}}});
            }),
            "t.csv line 2 column rb: id 3 out of range [0, 3) for feature rb "
            "(2 boundaries -> 3 buckets); fix the data or the boundaries");
  std::string msg = error_of<DataError>([&] { run({{"cat_3", {"1.5", "2"}}}); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column cat_3: '1.5' is not an integer id for feature cat_3", 0),
            0u)
      << msg;
  msg = error_of<DataError>([&] { run({{"h", {"1", "2:1"}}}); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column h: '1' of weighted feature h is not id:weight", 0), 0u)
      << msg;
  msg = error_of<DataError>([&] {
    run({{"v",
          {"1",
           "3\x03"
           "4"}}});
  });
  EXPECT_EQ(
      msg.rfind("t.csv line 2 column v: dense feature v has 1 values, expected value_dim 2", 0), 0u)
      << msg;
  msg = error_of<DataError>([&] {
    run({{"v",
          {"1\x03x",
           "3\x03"
           "4"}}});
  });
  EXPECT_EQ(msg.rfind("t.csv line 2 column v: value 'x' of dense feature v is not a number", 0), 0u)
      << msg;
  msg = error_of<DataError>([&] {
    run({{"v",
          {"1\x03"
           "2",
           ""}}});
  });
  EXPECT_EQ(msg.rfind("t.csv line 3 column v: empty value for dense feature v; set "
                      "feature_configs[2].raw_feature.fg_encoded_default_value",
                      0),
            0u)
      << msg;
  msg = error_of<DataError>([&] { run({{"clk", {"0", "yes"}}}); });
  EXPECT_EQ(msg.rfind("t.csv line 3 column clk: label 'clk' value 'yes' is not a number", 0), 0u)
      << msg;
  msg = error_of<DataError>([&] { run({{"clk", {"", "1"}}}); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column clk: empty label 'clk'", 0), 0u) << msg;
  // A column the parser needs but the batch lacks.
  msg = error_of<DataError>([&] { p.parse(make_batch({{"cat_3", {"1"}}})); });
  EXPECT_NE(msg.find("no column 'h'"), std::string::npos) << msg;
}

// ---- FG_NORMAL / FG_DAG -------------------------------------------------------------------------

const char* kFgData = "fg_mode: FG_NORMAL";

TEST(FeatureParserFg, VocabListDefaultAndOovRules) {
  for (const char* mode : {"fg_mode: FG_NORMAL", "fg_mode: FG_DAG"}) {
    auto p = parser(R"(
      feature_configs { id_feature { feature_name: "v0" expression: "user:c" embedding_dim: 4
                                     vocab_list: ["abc", "efg"] } }
      feature_configs { id_feature { feature_name: "v1" expression: "item:c" embedding_dim: 4
                                     vocab_list: ["abc", "efg"] default_value: "xyz" } }
      feature_configs { id_feature { feature_name: "v2" expression: "context:c" embedding_dim: 4
                                     vocab_list: ["abc", "efg"] default_bucketize_value: 0 } }
    )",
                    mode);
    EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"c"}));
    auto b = p.parse(make_batch({{"c",
                                  {"abc", "efg", "hij", "", "xyz",
                                   "abc\x1d"
                                   "hij"}}}));
    // Reference test: vocab ["abc","efg"], default "": abc->2, efg->3, hij->1, "" -> nothing.
    EXPECT_EQ(bag(b, "v0"), (std::pair<Ids, Ids>{{2, 3, 1, 1, 2, 1}, {1, 1, 1, 0, 1, 2}}));
    // default "xyz" takes id 0 (for empty cells and for the value itself).
    EXPECT_EQ(bag(b, "v1"), (std::pair<Ids, Ids>{{2, 3, 1, 0, 0, 2, 1}, {1, 1, 1, 1, 1, 2}}));
    // default_bucketize_value: list used as is, OOV -> 0.
    EXPECT_EQ(bag(b, "v2"), (std::pair<Ids, Ids>{{0, 1, 0, 0, 0, 0}, {1, 1, 1, 0, 1, 2}}));
  }
}

TEST(FeatureParserFg, VocabDictRules) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "d0" expression: "user:c" embedding_dim: 4
                                   vocab_dict: [{key: "abc" value: 2}, {key: "efg" value: 3}] } }
    feature_configs { id_feature { feature_name: "d1" expression: "user:c" embedding_dim: 4
                                   vocab_dict: [{key: "abc" value: 2}, {key: "efg" value: 3}]
                                   default_value: "efg" } }
    feature_configs { id_feature { feature_name: "d2" expression: "user:c" embedding_dim: 4
                                   vocab_dict: [{key: "abc" value: 2}, {key: "efg" value: 3}]
                                   default_bucketize_value: 0 } }
  )",
                  kFgData);
  auto b = p.parse(make_batch({{"c", {"abc", "efg", "hij", ""}}}));
  EXPECT_EQ(bag(b, "d0"), (std::pair<Ids, Ids>{{2, 3, 1}, {1, 1, 1, 0}}));
  // The default value is forced to id 0 (even though "efg" is in the dict).
  EXPECT_EQ(bag(b, "d1"), (std::pair<Ids, Ids>{{2, 0, 1, 0}, {1, 1, 1, 1}}));
  EXPECT_EQ(bag(b, "d2"), (std::pair<Ids, Ids>{{2, 3, 0}, {1, 1, 1, 0}}));
}

TEST(FeatureParserFg, HashBucketsMatchReferenceAndHashTextAsIs) {
  const char* features = R"(
    feature_configs { id_feature { feature_name: "h" expression: "user:c" embedding_dim: 4 hash_bucket_size: 100 } }
  )";
  auto p = parser(features, kFgData);
  auto b = p.parse(make_batch({{"c",
                                {"abc",
                                 "1\x1d"
                                 "4",
                                 "", "00012"}}}));
  std::hash<std::string> libstdcxx;
  const int64_t h00012 = static_cast<int64_t>(libstdcxx("00012") % 100);
  EXPECT_NE(h00012, static_cast<int64_t>(libstdcxx("12") % 100));  // the test can tell them apart
  EXPECT_EQ(bag(b, "h"), (std::pair<Ids, Ids>{{33, 95, 56, h00012}, {1, 2, 0, 1}}));
  auto farm = parser(features, kFgData, HashKind::kFarmHash);
  auto fb = farm.parse(make_batch({{"c",
                                    {"1",
                                     "2\x1d"
                                     "3",
                                     "00012"}}}));
  EXPECT_EQ(bag(fb, "h"), (std::pair<Ids, Ids>{{49, 59, 21, 15}, {1, 2, 1}}));
}

// zch (docs/tzrec-compatibility.md §5.12): raw ids — FG modes hash every value over the whole
// int64 range (TorchEasyRec's hash_bucket_size 2^63 - 1), FG_NONE takes any int64 as it is; the
// table has zch_size rows.
TEST(FeatureParserFg, ZchFeaturesGiveRawIds) {
  const char* features = R"(
    feature_configs { id_feature { feature_name: "z" expression: "user:c" embedding_dim: 4 zch { zch_size: 10 lfu {} } } }
  )";
  auto p = parser(features, kFgData);
  auto b = p.parse(make_batch({{"c", {"abc", "7"}}}));
  std::hash<std::string> libstdcxx;
  const uint64_t range = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(bag(b, "z"), (std::pair<Ids, Ids>{{static_cast<int64_t>(libstdcxx("abc") % range),
                                               static_cast<int64_t>(libstdcxx("7") % range)},
                                              {1, 1}}));
  const auto infos = build_feature_infos(parse_config(std::string("data_config { ") + kFgData + " } " + features));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(infos[0].num_embeddings, 10);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].id_feature.zch");
  EXPECT_EQ(infos[0].zch_eviction, "lfu");

  auto none = parser(R"(feature_configs { id_feature { feature_name: "z" embedding_dim: 4 zch { zch_size: 10 lru { decay_exponent: 2 } } } })");
  auto nb = none.parse(make_batch({{"z", {"123456789012345", "-5"}}}));
  EXPECT_EQ(bag(nb, "z"), (std::pair<Ids, Ids>{{123456789012345, -5}, {1, 1}}));
  // fg_encoded_default_value holds raw ids too (no table range check).
  auto dflt = parser(R"(feature_configs { id_feature { feature_name: "z" embedding_dim: 4 fg_encoded_default_value: "-9"
                                                       zch { zch_size: 10 lfu {} } } })");
  EXPECT_EQ(bag(dflt.parse(make_batch({{"z", {"", "7"}}})), "z"), (std::pair<Ids, Ids>{{-9, 7}, {1, 1}}));

  EXPECT_NE(error_of<ConfigError>([] {
              parser(R"(feature_configs { id_feature { feature_name: "z" embedding_dim: 4 zch { zch_size: 10 } } })");
            }).find("feature_configs[0].id_feature.zch: set an eviction policy"),
            std::string::npos);
}

TEST(FeatureParserFg, NumBucketsAndWeightedIds) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "n" expression: "user:n" embedding_dim: 4 num_buckets: 10
                                   default_value: "3" } }
    feature_configs { id_feature { feature_name: "w" expression: "item:w" embedding_dim: 4 num_buckets: 10
                                   weighted: true separator: "," } }
  )",
                  kFgData);
  auto b = p.parse(make_batch({{"n",
                                {"0\x1d"
                                 "1",
                                 "", "9"}},
                               {"w", {"1:0.5,2:2", "", "7:-1"}}}));
  EXPECT_EQ(bag(b, "n"), (std::pair<Ids, Ids>{{0, 1, 3, 9}, {2, 1, 1}}));
  EXPECT_EQ(bag(b, "w"), (std::pair<Ids, Ids>{{1, 2, 7}, {2, 0, 1}}));
  EXPECT_EQ(floats_of(b.sparse_features["n"].weights), (Floats{1, 1, 1, 1}));
  EXPECT_EQ(floats_of(b.sparse_features["w"].weights), (Floats{0.5f, 2, -1}));
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(make_batch({{"n", {"12"}}, {"w", {""}}}));
            }),
            "t.csv line 2 column n: value 12 out of range [0, 10) for feature n (num_buckets 10); "
            "fix the data or raise num_buckets");
  std::string msg = error_of<DataError>([&] {
    p.parse(make_batch({{"n", {"1", "abc"}}, {"w", {"", ""}}}));
  });
  EXPECT_EQ(
      msg.rfind("t.csv line 3 column n: value 'abc' of feature n is not an integer; num_buckets "
                "needs integer ids in [0, 10)",
                0),
      0u)
      << msg;
  msg = error_of<DataError>([&] { p.parse(make_batch({{"n", {"1"}}, {"w", {"3"}}})); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column w: '3' of weighted feature w is not key:weight", 0), 0u)
      << msg;
}

TEST(FeatureParserFg, RawBoundariesUpperBoundConvention) {
  auto p = parser(R"(
    feature_configs { raw_feature { feature_name: "r" expression: "item:r" boundaries: [0.05, 0.15, 0.25]
                                    embedding_dim: 4 } }
  )",
                  kFgData);
  auto b =
      p.parse(make_batch({{"r", {"0.01", "0.1", "0.2", "0.3", "0.5", "0.05", "0.15", "", "-7"}}}));
  // Reference vectors 0.01->0, 0.1->1, 0.2->2, 0.3/0.5->3; on a boundary -> upper bucket;
  // empty -> default "0" -> 0.
  EXPECT_EQ(bag(b, "r"),
            (std::pair<Ids, Ids>{{0, 1, 2, 3, 3, 1, 2, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1, 1}}));
}

TEST(FeatureParserFg, RawDenseNormalizersAndValueDim) {
  auto p = parser(R"(
    feature_configs { raw_feature { feature_name: "lg" expression: "user:x" normalizer: "method=log10,threshold=1e-10,default=-10" } }
    feature_configs { raw_feature { feature_name: "zs" expression: "user:x" normalizer: "method=zscore,mean=1,standard_deviation=2" } }
    feature_configs { raw_feature { feature_name: "mm" expression: "user:x" normalizer: "method=minmax,min=0,max=10" } }
    feature_configs { raw_feature { feature_name: "v2" expression: "user:y" value_dim: 2 } }
    feature_configs { raw_feature { feature_name: "lb" expression: "user:x" normalizer: "method=log10" boundaries: [0, 1.5] embedding_dim: 4 } }
  )",
                  kFgData);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"x", "y"}));
  auto b = p.parse(make_batch({{"x", {"100", "0", "5", ""}},
                               {"y",
                                {"1\x1d"
                                 "2",
                                 "",
                                 "-3\x1d"
                                 "4",
                                 "5\x1d"
                                 "6"}}}));
  EXPECT_EQ(b.dense_features.keys(), (std::vector<std::string>{"lg", "zs", "mm", "v2"}));
  EXPECT_EQ(floats_of(b.dense_features["lg"]),
            (Floats{2, -10, static_cast<float>(std::log10(5.0)), -10}));
  EXPECT_EQ(floats_of(b.dense_features["zs"]), (Floats{49.5f, -0.5f, 2, -0.5f}));
  EXPECT_EQ(floats_of(b.dense_features["mm"]), (Floats{10, 0, 0.5f, 0}));
  EXPECT_EQ(floats_of(b.dense_features["v2"]), (Floats{1, 2, 0, 0, -3, 4, 5, 6}));
  EXPECT_EQ(b.dense_features.values().sizes(), (std::vector<int64_t>{4, 5}));
  // log10 then boundaries [0, 1.5]: 100 -> 2 -> bucket 2; 0 -> -10 -> 0; 5 -> 0.7 -> 1.
  EXPECT_EQ(bag(b, "lb"), (std::pair<Ids, Ids>{{2, 0, 1, 0}, {1, 1, 1, 1}}));

  std::string msg = error_of<DataError>([&] {
    p.parse(make_batch({{"x", {"1", "abc"}},
                        {"y",
                         {"1\x1d"
                          "2",
                          "1\x1d"
                          "2"}}}));
  });
  EXPECT_EQ(msg.rfind("t.csv line 3 column x: value 'abc' of raw feature lg is not a number", 0),
            0u)
      << msg;
  msg = error_of<DataError>([&] { p.parse(make_batch({{"x", {"1"}}, {"y", {"1"}}})); });
  EXPECT_EQ(
      msg.rfind("t.csv line 2 column y: raw feature v2 has 1 values, expected value_dim 2", 0), 0u)
      << msg;
}

// method=expression (TorchEasyRec feature.md: any expr_feature expression of the variable x),
// values computed by hand: log(x+3), sign(x), and min(x, 2) with a comma inside the expression.
TEST(FeatureParserFg, ExpressionNormalizer) {
  auto p = parser(R"cfg(
    feature_configs { raw_feature { feature_name: "lg" expression: "user:x" normalizer: "method=expression,expr=log(x+3)" } }
    feature_configs { raw_feature { feature_name: "sg" expression: "user:x" normalizer: "method=expression,expr=sign(x)" } }
    feature_configs { raw_feature { feature_name: "mn" expression: "user:x" normalizer: "method=expression,expr=min(x,2)" boundaries: [0, 1.5] embedding_dim: 4 } }
  )cfg",
                  kFgData);
  auto b = p.parse(make_batch({{"x", {"1", "-2", "5", ""}}}));
  EXPECT_EQ(floats_of(b.dense_features["lg"]),
            (Floats{static_cast<float>(std::log(4.0)), 0, static_cast<float>(std::log(8.0)),
                    static_cast<float>(std::log(3.0))}));
  EXPECT_EQ(floats_of(b.dense_features["sg"]), (Floats{1, -1, 1, 0}));
  // min(x, 2) then boundaries [0, 1.5]: 1 -> 1; -2 -> 0; 5 -> 2 -> 2; "" -> 0 -> 1 (on a boundary: upper).
  EXPECT_EQ(bag(b, "mn"), (std::pair<Ids, Ids>{{1, 0, 2, 1}, {1, 1, 1, 1}}));
}

TEST(FeatureParserFg, NormalizerConfigErrors) {
  auto with = [](const std::string& normalizer) {
    return [normalizer] {
      parser(
          R"(feature_configs { raw_feature { feature_name: "r" expression: "user:r" normalizer: ")" +
              normalizer + R"(" } })",
          kFgData);
    };
  };
  EXPECT_EQ(
      error_of<ConfigError>(with("method=sqrt")),
      "feature_configs[0].raw_feature.normalizer: unknown normalizer method 'sqrt'; use log10, "
      "zscore, minmax or expression");
  EXPECT_NE(error_of<ConfigError>(with("method=expression")).find("needs expr=<expression of x>"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(with("method=expression,expr=log(x+")).find("normalizer expression"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(with("method=expression,expr=y+1")).find("normalizer expression"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(with("method=log10,expr=x")).find("expr= goes with method=expression"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(with("method=minmax,min=1")).find("needs max=<number>"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(with("method=zscore,mean=x")).find("mean=x is not a number"),
            std::string::npos);
  EXPECT_NE(
      error_of<ConfigError>(with("method=log10,bogus=1")).find("unknown normalizer key 'bogus'"),
      std::string::npos);
}

TEST(FeatureParserFg, ExpressionRules) {
  // FG_NORMAL reads a feature: input from the column of that name (TorchEasyRec's FG_NORMAL).
  EXPECT_EQ(parser(R"(feature_configs { id_feature { feature_name: "a" expression: "feature:b" embedding_dim: 4
                                                     num_buckets: 3 } })",
                   kFgData)
                .input_columns(),
            (std::vector<std::string>{"b"}));
  EXPECT_NE(
      error_of<ConfigError>([] {
        parser(
            R"(feature_configs { id_feature { feature_name: "a" expression: "foo:b" embedding_dim: 4 num_buckets: 3 } })",
            kFgData);
      }).find("side 'foo'"),
      std::string::npos);
}

}  // namespace feature_parser_test
}  // namespace tzrec::feature
