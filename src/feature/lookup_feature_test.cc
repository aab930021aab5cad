// lookup_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/lookup_feature_test.py (test_fg_encoded_lookup_feature, _dense_feature,
// test_lookup_feature_dense, _with_boundary, _with_num_buckets, _with_hash_bucket_size,
// SequenceLookupFeatureTest) and its docs (docs/source/feature/feature.md, "LookupFeature":
// map "k1:v1\x1dk2:v2", combiner, need_discrete, need_key, value_dim); the rest by hand from
// feature/lookup_feature.h, with std::hash values mod 100: "x" -> 35, "y" -> 30, "z" -> 54,
// "ca_x" -> 0, "cb_y" -> 6 (hash_test.cc pins the hash).
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace lookup_feature_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;
using testing::PhysicalType;
using testing::TypedBatch;


const std::string kFgNormal = "fg_mode: FG_NORMAL";

std::string lookup(const std::string& options) {
  return R"(feature_configs { lookup_feature { feature_name: "lookup_feat" map: "user:kv_cate" key: "item:cate" )" +
         options + " } }";
}

// TorchEasyRec's test inputs: maps and keys per row.
const std::vector<std::string> kMaps = {
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "",
    ""};
const std::vector<std::string> kKeys = {
    "ca\x1d"
    "cb",
    "ca",
    "ca\x1d"
    "cd",
    "cd",
    "",
    "ca",
    ""};

data::RecordBatch kv_batch(const std::vector<std::string>& maps = kMaps, const std::vector<std::string>& keys = kKeys) {
  return make_batch({{"kv_cate", maps}, {"cate", keys}});
}

// ---- FG_NONE ------------------------------------------------------------------------------------

TEST(LookupFeature, FgNoneSparseAndDenseAsTorchEasyRec) {
  auto p = parser(lookup(R"(num_buckets: 10 embedding_dim: 16 fg_encoded_default_value: "0")"));
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"lookup_feat"}));
  auto b = p.parse(make_batch({{"lookup_feat",
                                {"1\x03"
                                 "2",
                                 "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1}));
  TypedBatch t(4);
  t.add("lookup_feat", PhysicalType::kInt64, 0, [](auto& c, int64_t r) {
    if (r == 2) return c.append_null();
    c.append(int64_t{r == 3 ? 3 : r + 1});
  });
  auto typed = p.parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), (Ids{1, 1, 1, 1}));

  // Dense value_dim 2: "0\x030" fills the empty cell; list<float> columns give the same block.
  auto d = parser(lookup(R"(value_dim: 2 fg_encoded_default_value: "0\x030")"));
  auto text = d.parse(make_batch({{"lookup_feat",
                                   {"1\x03"
                                    "2",
                                    "",
                                    "3\x03"
                                    "4"}}}));
  EXPECT_EQ(floats_of(text.dense_features.values()), (Floats{1, 2, 0, 0, 3, 4}));
  const std::vector<std::vector<float>> rows = {{1, 2}, {}, {3, 4}};
  TypedBatch l(3);
  l.add("lookup_feat", PhysicalType::kFloat, 1, [&](auto& c, int64_t r) {
    c.begin_list();
    for (float v : rows[r]) c.append(v);
    c.end_list();
  });
  EXPECT_EQ(floats_of(d.parse(l.batch).dense_features.values()), (Floats{1, 2, 0, 0, 3, 4}));
  const auto infos = build_feature_infos(parse_config(lookup("value_dim: 2")));
  EXPECT_FALSE(infos.at(0).is_sparse);
  EXPECT_EQ(infos.at(0).value_dim, 2);
  // Without fg_encoded_default_value an empty dense cell is an error.
  const std::string msg = error_of<DataError>([&] {
    parser(lookup("value_dim: 2"))
        .parse(make_batch({{"lookup_feat",
                            {"1\x03"
                             "2",
                             ""}}}));
  });
  EXPECT_NE(msg.find("t.csv line 3 column lookup_feat: empty value for dense feature lookup_feat; set "
                     "feature_configs[0].lookup_feature.fg_encoded_default_value"),
            std::string::npos)
      << msg;
}

// ---- FG_NORMAL: numbers -------------------------------------------------------------------------

TEST(LookupFeature, DenseCombinersAsTorchEasyRec) {
  auto sum = parser(lookup(R"(default_value: "0" combiner: "sum")"), kFgNormal);
  EXPECT_EQ(sum.input_columns(), (std::vector<std::string>{"kv_cate", "cate"}));
  EXPECT_EQ(floats_of(sum.parse(kv_batch()).dense_features.values()), (Floats{3, 1, 1, 0, 0, 0, 0}));
  auto mean = parser(lookup(R"(default_value: "0" combiner: "mean")"), kFgNormal);
  EXPECT_EQ(floats_of(mean.parse(kv_batch()).dense_features.values()), (Floats{1.5, 1, 1, 0, 0, 0, 0}));
  // Hand-computed: min / max / count over the hits a, b, c (1, 5, 3); "avg" is mean.
  const std::vector<std::string> maps = {
      "a:1\x1d"
      "b:5\x1d"
      "c:3"};
  const std::vector<std::string> keys = {
      "a\x1d"
      "b\x1d"
      "c\x1d"
      "z"};
  for (const auto& [combiner, want] :
       std::vector<std::pair<std::string, float>>{{"min", 1}, {"max", 5}, {"count", 3}, {"avg", 3}, {"MEAN", 3}}) {
    auto p = parser(lookup("combiner: \"" + combiner + "\""), kFgNormal);
    EXPECT_EQ(floats_of(p.parse(kv_batch(maps, keys)).dense_features.values()), (Floats{want})) << combiner;
  }
  // Empty map entries are skipped; a key's text is matched as is (" a" is not "a").
  EXPECT_EQ(floats_of(sum.parse(kv_batch({"a:1\x1d\x1d"
                                          "b:5\x1d",
                                          "a:1"},
                                         {"a\x1d"
                                          "b",
                                          " a"}))
                          .dense_features.values()),
            (Floats{6, 0}));
}

// TorchEasyRec's typed inputs: map<string, int64> maps (empty and null maps: the default) and
// list<string> keys give what the text does.
TEST(LookupFeature, ParquetMapAndListColumnsEqualText) {
  using Entries = std::vector<std::pair<std::string, int64_t>>;
  const std::vector<std::optional<Entries>> maps = {Entries{{"ca", 1}, {"cb", 2}},
                                                    Entries{{"ca", 1}, {"cb", 2}},
                                                    Entries{{"ca", 1}, {"cb", 2}},
                                                    Entries{{"ca", 1}, {"cb", 2}},
                                                    Entries{{"ca", 1}, {"cb", 2}},
                                                    Entries{},
                                                    std::nullopt};
  const std::vector<std::optional<std::vector<std::string>>> keys = {std::vector<std::string>{"ca", "cb"},
                                                                     std::vector<std::string>{"ca"},
                                                                     std::vector<std::string>{"ca", "cd"},
                                                                     std::vector<std::string>{"cd"},
                                                                     std::vector<std::string>{},
                                                                     std::vector<std::string>{"ca"},
                                                                     std::nullopt};
  TypedBatch t(7);
  t.add_map<std::string, int64_t>("kv_cate", PhysicalType::kByteArray, PhysicalType::kInt64, maps);
  t.add("cate", PhysicalType::kByteArray, 1, [&](auto& c, int64_t r) {
    if (!keys[r]) return c.append_null_list();
    c.begin_list();
    for (const auto& k : *keys[r]) c.append_string(k);
    c.end_list();
  });
  auto p = parser(lookup(R"(default_value: "0")"), kFgNormal);
  EXPECT_EQ(floats_of(p.parse(t.batch).dense_features.values()), (Floats{3, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(floats_of(p.parse(kv_batch()).dense_features.values()), (Floats{3, 1, 1, 0, 0, 0, 0}));
  // Integer keys on both sides match as numbers (map<int64, double> and an int64 key column).
  TypedBatch n(2);
  using IntEntries = std::vector<std::pair<int64_t, double>>;
  n.add_map<int64_t, double>("kv_cate", PhysicalType::kInt64, PhysicalType::kDouble,
                             {IntEntries{{7, 0.5}, {8, 2.0}}, IntEntries{{7, 0.5}}});
  n.add("cate", PhysicalType::kInt64, 0, [](auto& c, int64_t r) { c.append(int64_t{8 - r}); });
  EXPECT_EQ(floats_of(p.parse(n.batch).dense_features.values()), (Floats{2.0, 0.5}));
  EXPECT_EQ(floats_of(p.parse(kv_batch({"7:0.5\x1d"
                                        "8:2",
                                        "7:0.5"},
                                       {"8", "7"}))
                          .dense_features.values()),
            (Floats{2.0, 0.5}));
}

TEST(LookupFeature, ValueVectorsAsTorchEasyRec) {
  auto p = parser(lookup(R"(default_value: "0" combiner: "" value_dim: 2)"), kFgNormal);
  auto b = p.parse(kv_batch({"ca:1,2\x1d"
                             "cb:3,4",
                             "ca:1,2\x1d"
                             "cb:3,4",
                             "ca:1,2\x1d"
                             "cb:3,4",
                             "",
                             "ca:1,2\x1d"
                             "cb:3,4"},
                            {"ca", "cd", "", "ca", ""}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{1, 2, 0, 0, 0, 0, 0, 0, 0, 0}));
  // With boundaries: value_dim bucket ids per row; a normalizer applies to each number first.
  auto s = parser(lookup(R"(value_dim: 2 value_separator: "|" boundaries: [0, 10] embedding_dim: 4
                            normalizer: "method=zscore,mean=0,standard_deviation=10")"),
                  kFgNormal);
  auto bs = s.parse(kv_batch({"a:5|150\x1d"
                              "b:-1|1",
                              ""},
                             {"a", "a"}));
  EXPECT_EQ(ids_of(bs.sparse_features.values()), (Ids{1, 2, 1, 1}));  // 0.5, 15 -> 1, 2; default 0, 0 -> 1, 1
  EXPECT_EQ(ids_of(bs.sparse_features.lengths()), (Ids{2, 2}));
  EXPECT_EQ(error_of<DataError>([&] { p.parse(kv_batch({"ca:1,2,3"}, {"ca"})); }),
            "t.csv line 2 column kv_cate: feature lookup_feat found 3 values, expected value_dim 2 (a dense output "
            "has value_dim numbers); fix the data or feature_configs[0].lookup_feature");
}

TEST(LookupFeature, BoundariesAsTorchEasyRec) {
  struct Case {
    std::string combiner;
    Ids values, lengths;
  };
  for (const Case& c : {Case{"sum", {4, 2, 2, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}},
                        Case{"mean", {3, 2, 2, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}},
                        Case{"", {2, 3, 2, 2, 1, 1, 1, 1}, {2, 1, 1, 1, 1, 1, 1}}}) {
    auto p = parser(lookup(R"(boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 16 default_value: "0" combiner: ")" +
                           c.combiner + "\""),
                    kFgNormal);
    auto b = p.parse(kv_batch());
    EXPECT_EQ(ids_of(b.sparse_features.values()), c.values) << c.combiner;
    EXPECT_EQ(ids_of(b.sparse_features.lengths()), c.lengths) << c.combiner;
  }
  const auto infos = build_feature_infos(parse_config(lookup("boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 16")));
  EXPECT_EQ(infos.at(0).num_embeddings, 5);
  EXPECT_EQ(infos.at(0).embedding_name, "lookup_feat_emb");
  // need_discrete: each hit is bucketized on its own, whatever the combiner.
  auto nd = parser(lookup(R"(boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 4 need_discrete: true)"), kFgNormal);
  EXPECT_EQ(ids_of(nd.parse(kv_batch()).sparse_features.values()), (Ids{2, 3, 2, 2, 1, 1, 1, 1}));
}

// ---- FG_NORMAL: discrete values -----------------------------------------------------------------

TEST(LookupFeature, NumBucketsAsTorchEasyRec) {
  const std::vector<std::string> maps = {
      "ca:1\x1d"
      "cb:2",
      "ca:1\x1d"
      "cb:2",
      "ca:1\x1d"
      "cb:2",
      "ca:1\x1d"
      "cb:2",
      "ca:1\x1d"
      "cb:2",
      "",
      ""};
  const std::vector<std::string> keys = {
      "ca\x1d"
      "cb",
      "ca",
      "ca\x1d"
      "cd",
      "cd",
      "",
      "ca",
      ""};
  auto none = parser(lookup(R"(num_buckets: 10 embedding_dim: 16 pooling: "mean" default_value: "")"), kFgNormal);
  auto b = none.parse(kv_batch(maps, keys));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 1, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1, 0, 0, 0, 0}));
  auto zero = parser(lookup(R"(num_buckets: 10 embedding_dim: 16 default_value: "0")"), kFgNormal);
  b = zero.parse(kv_batch(maps, keys));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(error_of<DataError>([&] { zero.parse(kv_batch({"ca:12"}, {"ca"})); }),
            "t.csv line 2 column kv_cate: value 12 out of range [0, 10) for feature lookup_feat (num_buckets 10); fix "
            "the data or raise num_buckets");
}

TEST(LookupFeature, HashAndNeedKeyAsTorchEasyRec) {
  const std::vector<std::string> maps = {
      "ca:x\x1d"
      "cb:y",
      "ca:x\x1d"
      "cb:y",
      "ca:x\x1d"
      "cb:y",
      "ca:x\x1d"
      "cb:y",
      "ca:x\x1d"
      "cb:y",
      "",
      ""};
  auto none = parser(lookup(R"(hash_bucket_size: 100 embedding_dim: 16 default_value: "")"), kFgNormal);
  auto b = none.parse(kv_batch(maps));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{35, 30, 35, 35}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1, 0, 0, 0, 0}));
  auto z = parser(lookup(R"(hash_bucket_size: 100 embedding_dim: 16 default_value: "z")"), kFgNormal);
  b = z.parse(kv_batch(maps));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{35, 30, 35, 35, 54, 54, 54, 54}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1, 1, 1, 1, 1}));
  // need_key: "<key>_<value>" ("ca_x" -> 0, "cb_y" -> 6); the default is not prefixed.
  auto key = parser(lookup(R"(hash_bucket_size: 100 embedding_dim: 16 default_value: "z" need_key: true)"), kFgNormal);
  b = key.parse(kv_batch(maps));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 6, 0, 0, 54, 54, 54, 54}));
  // A Parquet map<string, string> holds the same values.
  using Entries = std::vector<std::pair<std::string, std::string>>;
  TypedBatch t(2);
  t.add_map<std::string, std::string>("kv_cate", PhysicalType::kByteArray, PhysicalType::kByteArray,
                                      {Entries{{"ca", "x"}, {"cb", "y"}}, std::nullopt});
  t.add("cate", PhysicalType::kByteArray, 0, [](auto& c, int64_t) {
    c.append_string(
        "ca\x1d"
        "cb");
  });
  b = key.parse(t.batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 6, 54}));
  // vocab_list: [default, <OOV>, x, y]; a repeated key takes the map's last value.
  auto vocab = parser(lookup(R"(vocab_list: ["x", "y"] embedding_dim: 4 default_value: "z")"), kFgNormal);
  b = vocab.parse(kv_batch({"ca:x\x1d"
                            "cb:w\x1d"
                            "ca:y",
                            ""},
                           {"ca\x1d"
                            "cb",
                            "ca"}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 1, 0}));
}

// ---- sequences ----------------------------------------------------------------------------------

const char* kSeqMaps[] = {
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "ca:1\x1d"
    "cb:2",
    "",
    ""};

std::string grouped(const std::string& options) {
  return R"(feature_configs { sequence_feature { sequence_name: "click_50_seq" sequence_length: 50
      sequence_delim: ";" features { lookup_feature { feature_name: "lookup_feat" map: "user:kv_cate"
      key: "item:cate" default_value: "0" )" +
         options + " } } } }";
}

// TorchEasyRec's SequenceLookupFeatureTest: the user-side map (column "kv_cate") is looked up with
// every item of the item-side key history (column "click_50_seq__cate").
TEST(LookupFeature, GroupedSequenceBoundariesAsTorchEasyRec) {
  const std::vector<std::string> maps(std::begin(kSeqMaps), std::end(kSeqMaps));
  const std::vector<std::string> keys = {
      "ca\x1d"
      "cb;ca",
      "ca",
      "ca\x1d"
      "cd;ce",
      "cd",
      "",
      "ca",
      ""};
  struct Case {
    std::string options;
    Ids values;
    bool several_ids;
  };
  for (const Case& c : {Case{R"(combiner: "sum")", {4, 2, 2, 2, 1, 1, 1, 1, 1}, false},
                        Case{R"(combiner: "mean")", {3, 2, 2, 2, 1, 1, 1, 1, 1}, false},
                        // combiner "": several ids per item; value_dim 0 keeps them all (TorchEasyRec's expected
                        // values), the default value_dim 1 keeps each item's first.
                        Case{R"(combiner: "" value_dim: 0)", {2, 3, 2, 2, 2, 1, 1, 1, 1, 1}, true},
                        Case{R"(combiner: "")", {2, 2, 2, 2, 1, 1, 1, 1, 1}, false}}) {
    auto p = parser(grouped(c.options + " boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 16"), kFgNormal);
    EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"kv_cate", "click_50_seq__cate"}));
    auto b = p.parse(make_batch({{"kv_cate", maps}, {"click_50_seq__cate", keys}}));
    const std::string name = "click_50_seq__lookup_feat";
    EXPECT_EQ(ids_of(b.sparse_features[name].values), c.values) << c.options;
    EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 1, 2, 1, 1, 1, 1})) << c.options;
    if (c.several_ids) {
      EXPECT_EQ(ids_of(b.sequence_item_lengths.at(name)), (Ids{2, 1, 1, 1, 1, 1, 1, 1, 1}));
    } else {
      EXPECT_EQ(b.sequence_item_lengths.count(name), 0u);
    }
  }
}

TEST(LookupFeature, GroupedSequenceDenseAsTorchEasyRec) {
  const std::vector<std::string> maps(std::begin(kSeqMaps), std::end(kSeqMaps));
  const std::vector<std::string> keys = {
      "ca\x1d"
      "cb;ca",
      "ca",
      "ca\x1d"
      "cd",
      "cd",
      "",
      "ca",
      ""};
  const std::string name = "click_50_seq__lookup_feat";
  auto sum = parser(grouped(R"(combiner: "sum")"), kFgNormal);
  auto b = sum.parse(make_batch({{"kv_cate", maps}, {"click_50_seq__cate", keys}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at(name)), (Floats{3, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 1, 1, 1, 1, 1, 1}));
  auto mean = parser(grouped(R"(combiner: "mean")"), kFgNormal);
  b = mean.parse(make_batch({{"kv_cate", maps}, {"click_50_seq__cate", keys}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at(name)), (Floats{1.5, 1, 1, 1, 0, 0, 0, 0}));
  auto vec = parser(grouped(R"(combiner: "" value_dim: 2)"), kFgNormal);
  b = vec.parse(make_batch({{"kv_cate",
                             {"ca:1,2\x1d"
                              "cb:3,4",
                              "ca:1,2\x1d"
                              "cb:3,4",
                              "ca:1,2\x1d"
                              "cb:3,4",
                              "",
                              "ca:1,2\x1d"
                              "cb:3,4"}},
                            {"click_50_seq__cate", {"ca;cb", "cd;ca", "", "ca", ""}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at(name)), (Floats{1, 2, 3, 4, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.sequence_dense_features.at(name).sizes(), (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 2, 1, 1, 1}));
}

// Per-item keys as list<list<string>> give what the delimited text does; FG_NONE sequences read
// one id per item as sequence_id_feature does.
TEST(LookupFeature, GroupedSequenceTypedKeysAndFgNone) {
  const std::vector<std::vector<std::vector<std::string>>> keys = {{{"ca", "cb"}, {"ca"}}, {{"cd"}}, {}};
  TypedBatch t(3);
  t.add("kv_cate", PhysicalType::kByteArray, 0, [](auto& c, int64_t) {
    c.append_string(
        "ca:1\x1d"
        "cb:2");
  });
  t.add("click_50_seq__cate", PhysicalType::kByteArray, 2, [&](auto& c, int64_t r) {
    c.begin_list();
    for (const auto& item : keys[r]) {
      c.begin_list();
      for (const auto& k : item) c.append_string(k);
      c.end_list();
    }
    c.end_list();
  });
  auto p = parser(grouped(R"(combiner: "sum" boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 4)"), kFgNormal);
  auto typed = p.parse(t.batch);
  auto text = p.parse(make_batch({{"kv_cate",
                                   {"ca:1\x1d"
                                    "cb:2",
                                    "ca:1\x1d"
                                    "cb:2",
                                    "ca:1\x1d"
                                    "cb:2"}},
                                  {"click_50_seq__cate",
                                   {"ca\x1d"
                                    "cb;ca",
                                    "cd", ""}}}));
  const std::string name = "click_50_seq__lookup_feat";
  EXPECT_EQ(ids_of(typed.sparse_features[name].values), (Ids{4, 2, 1, 1}));
  EXPECT_EQ(ids_of(text.sparse_features[name].values), (Ids{4, 2, 1, 1}));
  EXPECT_EQ(ids_of(typed.sequence_lengths.at(name)), ids_of(text.sequence_lengths.at(name)));

  auto none = parser(grouped(R"(combiner: "sum" boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 4)"));
  EXPECT_EQ(none.input_columns(), (std::vector<std::string>{name}));
  auto b = none.parse(make_batch({{name, {"4;2", "", "1"}}}));
  EXPECT_EQ(ids_of(b.sparse_features[name].values), (Ids{4, 2, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 0, 1}));
  EXPECT_EQ(error_of<DataError>([&] {
              none.parse(make_batch({{name, {"4;5"}}}));
            }),
            "t.csv line 2 column click_50_seq__lookup_feat: id 5 out of range [0, 5) for feature "
            "click_50_seq__lookup_feat (boundaries -> 5 rows); fix the data or the boundaries");
}

// ---- zch ----------------------------------------------------------------------------------------

// zch (docs/tzrec-compatibility.md §5.12; TorchEasyRec's LookupFeature: zch makes the feature sparse
// with zch.zch_size rows, before every other size, and its fg.json entry hash_bucket_size
// MAX_HASH_BUCKET_SIZE with value_type "string", hence needDiscrete true and combiner "" even
// without need_discrete): each hit's text (numbers too, "<key>_<value>" with need_key) becomes a raw
// id, hashed over [0, 2^63 - 1) — expected values testing::zch_raw_id, libstdc++'s std::hash of the
// text mod 2^63 - 1 —, rows without a hit take default_value "0"; also in a grouped sequence;
// FG_NONE takes any int64 as it is. fg.json: fg_json_test.cc (FgJson.ZchFeatures).
TEST(LookupFeature, ZchGivesRawIds) {
  using testing::zch_raw_id;
  const int64_t h0 = zch_raw_id("0"), h1 = zch_raw_id("1"), h2 = zch_raw_id("2");
  const std::string zch = R"(embedding_dim: 4 zch { zch_size: 30 lfu {} })";
  auto p = parser(lookup(zch + R"( combiner: "mean" hash_bucket_size: 100)"), kFgNormal);
  auto b = p.parse(kv_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{h1, h2, h1, h1, h0, h0, h0, h0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1, 1, 1, 1, 1}));
  auto key = parser(lookup(zch + " need_key: true"), kFgNormal);
  b = key.parse(kv_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values())[0], zch_raw_id("ca_1"));
  EXPECT_EQ(ids_of(b.sparse_features.values())[1], zch_raw_id("cb_2"));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " +
                                                      lookup(zch + " hash_bucket_size: 100")));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_TRUE(infos[0].is_sparse);
  EXPECT_EQ(infos[0].num_embeddings, 30);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].lookup_feature.zch");
  EXPECT_EQ(infos[0].zch_eviction, "lfu");

  auto seq = parser(grouped(R"(value_dim: 0 embedding_dim: 4 zch { zch_size: 40 lru {} })"), kFgNormal);
  const std::vector<std::string> maps(std::begin(kSeqMaps), std::begin(kSeqMaps) + 3);
  b = seq.parse(make_batch({{"kv_cate", maps},
                            {"click_50_seq__cate",
                             {"ca\x1d"
                              "cb;ca",
                              "cd", ""}}}));
  const std::string name = "click_50_seq__lookup_feat";
  EXPECT_EQ(ids_of(b.sparse_features[name].values), (Ids{h1, h2, h1, h0, h0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 1, 1}));
  EXPECT_EQ(ids_of(b.sequence_item_lengths.at(name)), (Ids{2, 1, 1, 1}));
  const auto seq_infos = build_feature_infos(parse_config(grouped(R"(embedding_dim: 4 zch { zch_size: 40 lru {} })")));
  EXPECT_EQ(seq_infos.at(0).num_embeddings, 40);
  EXPECT_EQ(seq_infos.at(0).zch_path, "feature_configs[0].sequence_feature.features[0].lookup_feature.zch");

  auto none = parser(lookup(zch));
  b = none.parse(make_batch({{"lookup_feat",
                              {"123456789012345\x03"
                               "-5",
                               ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0}));

  // A hit read as value_dim numbers cannot be hashed (as with hash_bucket_size).
  EXPECT_NE(error_of<ConfigError>([&] {
              build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + lookup(zch + " value_dim: 2")));
            }).find("feature_configs[0].lookup_feature.value_dim: 2"),
            std::string::npos);
}

// ---- errors -------------------------------------------------------------------------------------

TEST(LookupFeature, ConfigErrorsNameTheField) {
  auto config_error = [](const std::string& options) {
    return error_of<ConfigError>(
        [&] { build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + lookup(options))); });
  };
  auto not_supported = [](const std::string& options) {
    return error_of<NotSupportedError>(
        [&] { build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + lookup(options))); });
  };
  const std::string at = "feature_configs[0].lookup_feature";
  EXPECT_NE(config_error(R"(combiner: "median")").find(at + ".combiner: 'median' is not a combiner"),
            std::string::npos);
  EXPECT_EQ(not_supported(R"(combiner: "gap_min")"), "not supported yet: " + at + ".combiner 'gap_min'");
  EXPECT_EQ(not_supported(R"(boundaries: [1] embedding_dim: 4 need_key: true)"),
            "not supported yet: " + at +
                ".need_key with numeric values (boundaries or a dense output; the key "
                "prefix makes a text value)");
  EXPECT_EQ(not_supported(R"(hash_bucket_size: 10 embedding_dim: 4 normalizer: "method=log10")"),
            "not supported yet: " + at + ".normalizer with a hash_bucket_size bucketizer (the values are discrete)");
  EXPECT_EQ(not_supported(R"(boundaries: [1] embedding_dim: 4 fg_value_type: "string")"),
            "not supported yet: " + at + ".fg_value_type 'string'");
  EXPECT_NE(config_error(R"(hash_bucket_size: 10 embedding_dim: 4 value_dim: 2)").find(at + ".value_dim: 2"),
            std::string::npos);
  EXPECT_NE(config_error(R"(default_value: "")").find(at + ".default_value: must be a number"), std::string::npos);
  EXPECT_NE(config_error(R"(default_value: "n/a")").find(at + ".default_value: 'n/a' is not a number"),
            std::string::npos);
  EXPECT_NE(config_error(R"(num_buckets: 5 embedding_dim: 4 default_value: "7")")
                .find(at + ".default_value: '7' is not an id in [0, 5)"),
            std::string::npos);
  EXPECT_NE(
      config_error(R"(boundaries: [2, 1] embedding_dim: 4)").find(at + ".boundaries: must be strictly increasing"),
      std::string::npos);
  // embedding_dim unset is not an error here: TorchEasyRec builds a table only for the features a group
  // uses (embedding/embedding_config.h: require_embedding_dim).
  EXPECT_EQ(config_error(R"(boundaries: [1])"), "<no error of the expected type>");
  EXPECT_NE(config_error(R"(sequence_fields: ["cate"])").find(at + ".sequence_fields: only sequence features"),
            std::string::npos);
  EXPECT_NE(
      error_of<ConfigError>([] {
        build_feature_infos(parse_config(R"(data_config { fg_mode: FG_NORMAL }
            feature_configs { lookup_feature { feature_name: "l" key: "item:c" } })"));
      }).find(at + ".map: '' is not 'side:input_name'"),
      std::string::npos);
}

TEST(LookupFeature, BadDataErrorsNameFileRowColumnFeature) {
  auto p = parser(lookup(R"(combiner: "sum")"), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(kv_batch({"ca:1",
                                "ca:1\x1d"
                                "cb"},
                               {"ca", "ca"}));
            }),
            "t.csv line 3 column kv_cate: entry 'cb' of feature lookup_feat has no ':'; the "
            "feature_configs[0].lookup_feature.map input holds 'key:value' entries — fix the data");
  const std::string msg = error_of<DataError>([&] { p.parse(kv_batch({"ca:high"}, {"ca"})); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column kv_cate: map value 'high' of feature lookup_feat is not a number", 0), 0u)
      << msg;
}

}  // namespace lookup_feature_test
}  // namespace tzrec::feature
