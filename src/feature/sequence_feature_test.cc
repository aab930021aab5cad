// Sequence features through FeatureParser: grouped sequence_feature sub-features and stand-alone
// sequence_id_feature / sequence_raw_feature, FG_NONE (CSV text, list<...> and list<list<...>>
// Parquet columns giving the same batch) and FG_NORMAL (defaults, truncation, value_dim).
// Expected values: TorchEasyRec's parser tests where they exist (tzrec/features/id_feature_test.py
// "1;2", "", "3", "4\x035;6" -> values 1..6, ids per item 1,1,1,2,1, items per row 2,0,1,2;
// raw_feature_test.py "0.1\x031.1;0.2\x031.2" with value_dim 2 -> two items of 2 values), the rest
// worked out by hand from the rules in feature/id_feature.h and feature/raw_feature.h.
#include <functional>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"
#include "base/scoped_env.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/hash.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace sequence_feature_test {

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


// The grouped sequence "click" (FG_NONE columns "click__item" and "click__price") and a plain id.
const char* kGrouped = R"(
  feature_configs { id_feature { feature_name: "user" embedding_dim: 4 num_buckets: 10 } }
  feature_configs { sequence_feature {
    sequence_name: "click" sequence_length: 50 sequence_delim: ";"
    features { id_feature { feature_name: "item" embedding_dim: 8 num_buckets: 100 value_dim: 0 } }
    features { raw_feature { feature_name: "price" value_dim: 2 } }
  } }
)";

TEST(SequenceFeatures, GroupedNamesInfosAndColumns) {
  const auto infos = build_feature_infos(parse_config(kGrouped));
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[1].name, "click__item");
  EXPECT_TRUE(infos[1].is_sequence);
  EXPECT_TRUE(infos[1].is_sparse);
  EXPECT_EQ(infos[1].sequence_name, "click");
  EXPECT_EQ(infos[1].sequence_length, 50);
  EXPECT_EQ(infos[1].value_dim, 0);
  EXPECT_EQ(infos[1].embedding_name, "click__item_emb");
  EXPECT_EQ(infos[2].name, "click__price");
  EXPECT_FALSE(infos[2].is_sparse);
  EXPECT_EQ(infos[2].value_dim, 2);
  EXPECT_EQ(parser(kGrouped).input_columns(), (std::vector<std::string>{"user", "click__item", "click__price"}));
}

// Under TorchEasyRec's RTP naming (env USE_RTP=1, tzrec/features/feature.py grouped_sequence_prefix)
// a grouped sequence joins its name with one underscore: feature, embedding and column names.
TEST(SequenceFeatures, GroupedNamesUnderRtpNaming) {
  const ScopedEnv rtp("USE_RTP", "1");
  const auto infos = build_feature_infos(parse_config(kGrouped));
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[1].name, "click_item");
  EXPECT_EQ(infos[1].embedding_name, "click_item_emb");
  EXPECT_EQ(infos[2].name, "click_price");
  EXPECT_EQ(parser(kGrouped).input_columns(), (std::vector<std::string>{"user", "click_item", "click_price"}));
  // FG_DAG: the items' inputs are "<sequence>_<input>" columns.
  const char* dag = R"(
    feature_configs { sequence_feature { sequence_name: "click" sequence_length: 5 sequence_delim: ";"
      features { id_feature { feature_name: "item" expression: "item:item_id" embedding_dim: 8 num_buckets: 100 } } } })";
  auto p = parser(dag, "fg_mode: FG_DAG");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"click_item_id"}));
  auto batch = p.parse(make_batch({{"click_item_id", {"3;4", ""}}}));
  // (The empty history is one item of the default "0", as in FG modes without RTP naming.)
  EXPECT_EQ(ids_of(batch.sparse_features["click_item"].values), (Ids{3, 4, 0}));
  // Any other value of USE_RTP keeps TorchEasyRec's default "__".
  const ScopedEnv other("USE_RTP", "true");
  EXPECT_EQ(build_feature_infos(parse_config(kGrouped))[1].name, "click__item");
}

// TorchEasyRec's id_feature_test example (multi-value items, value_dim 0) and its raw example.
TEST(SequenceFeatures, FgNoneTextMatchesTorchEasyRecExamples) {
  auto p = parser(kGrouped);
  auto batch = p.parse(make_batch({{"user", {"1", "2", "3", "4"}},
                                   {"click__item", {"1;2", "", "3", "4\x03" "5;6"}},
                                   {"click__price", {"0.1\x03" "1.1;0.2\x03" "1.2", "", "3\x03" "4", "5\x03" "6;7\x03" "8"}}}));
  const auto item = batch.sparse_features["click__item"];
  EXPECT_EQ(ids_of(item.values), (Ids{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ids_of(item.lengths), (Ids{2, 0, 1, 3}));  // ids per row (several ids per item)
  EXPECT_EQ(ids_of(batch.sequence_item_lengths.at("click__item")), (Ids{1, 1, 1, 2, 1}));
  EXPECT_EQ(ids_of(batch.sequence_lengths.at("click__item")), (Ids{2, 0, 1, 2}));
  EXPECT_EQ(floats_of(batch.sequence_dense_features.at("click__price")),
            (Floats{0.1f, 1.1f, 0.2f, 1.2f, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(batch.sequence_dense_features.at("click__price").sizes(), (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(ids_of(batch.sequence_lengths.at("click__price")), (Ids{2, 0, 1, 2}));
  // Sequences are not dense features of the row.
  EXPECT_EQ(batch.dense_features.keys().size(), 0u);
  EXPECT_EQ(batch.sparse_features.keys(), (std::vector<std::string>{"user", "click__item"}));
}

// The same values as list<int64> / list<list<...>> Parquet columns give the same batch.
TEST(SequenceFeatures, FgNoneParquetListsEqualText) {
  const char* features = R"(
    feature_configs { sequence_id_feature { feature_name: "hist" embedding_dim: 4 num_buckets: 100 } }
    feature_configs { sequence_id_feature { feature_name: "tags" embedding_dim: 4 num_buckets: 100 value_dim: 0 } }
    feature_configs { sequence_raw_feature { feature_name: "ts" value_dim: 2 } })";
  auto p = parser(features);
  auto text = p.parse(make_batch({{"hist", {"7;8;9", "", "1"}},
                                  {"tags", {"1\x03" "2;3", "4", ""}},
                                  {"ts", {"1\x03" "2;3\x03" "4", "", "5\x03" "6"}}}));
  const std::vector<std::vector<int64_t>> hist = {{7, 8, 9}, {}, {1}};
  const std::vector<std::vector<std::vector<int64_t>>> tags = {{{1, 2}, {3}}, {{4}}, {}};
  const std::vector<std::vector<std::vector<double>>> ts = {{{1, 2}, {3, 4}}, {}, {{5, 6}}};
  TypedBatch t(3);
  t.add("hist", PhysicalType::kInt64, 1, [&](auto& b, int64_t r) {
    b.begin_list();
    for (int64_t v : hist[r]) b.append(v);
    b.end_list();
  });
  t.add("tags", PhysicalType::kInt64, 2, [&](auto& b, int64_t r) {
    b.begin_list();
    for (const auto& item : tags[r]) {
      b.begin_list();
      for (int64_t v : item) b.append(v);
      b.end_list();
    }
    b.end_list();
  });
  t.add("ts", PhysicalType::kDouble, 2, [&](auto& b, int64_t r) {
    b.begin_list();
    for (const auto& item : ts[r]) {
      b.begin_list();
      for (double v : item) b.append(v);
      b.end_list();
    }
    b.end_list();
  });
  auto typed = p.parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.values()), ids_of(text.sparse_features.values()));
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), ids_of(text.sparse_features.lengths()));
  EXPECT_EQ(ids_of(text.sparse_features.values()), (Ids{7, 8, 9, 1, 1, 2, 3, 4}));
  EXPECT_EQ(ids_of(text.sparse_features.lengths()), (Ids{3, 0, 1, 3, 1, 0}));
  for (const char* name : {"hist", "tags", "ts"}) {
    EXPECT_EQ(ids_of(typed.sequence_lengths.at(name)), ids_of(text.sequence_lengths.at(name))) << name;
  }
  EXPECT_EQ(ids_of(typed.sequence_item_lengths.at("tags")), (Ids{2, 1, 1}));
  EXPECT_EQ(ids_of(text.sequence_item_lengths.at("tags")), (Ids{2, 1, 1}));
  EXPECT_EQ(floats_of(typed.sequence_dense_features.at("ts")), (Floats{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(floats_of(text.sequence_dense_features.at("ts")), (Floats{1, 2, 3, 4, 5, 6}));
}

TEST(SequenceFeatures, ParquetScalarNumbersAreNoSequence) {
  // A history is a string, a list or a list of lists; a numeric scalar column is the wrong type
  // (its bytes are no text to split).
  auto p = parser(R"(feature_configs { sequence_id_feature { feature_name: "hist" embedding_dim: 4 num_buckets: 10 } })");
  TypedBatch t(2);
  t.add("hist", PhysicalType::kFloat, 0, [](auto& b, int64_t r) { b.append(static_cast<float>(r)); });
  EXPECT_EQ(error_of<DataError>([&] { p.parse(t.batch); }),
            "t.parquet row 0 column hist (needed by feature hist) is Parquet FLOAT, one number per row; sequence "
            "features read strings (items joined by the sequence_delim), list<...> or list<list<...>> columns");
}

TEST(SequenceFeatures, FgNoneDefaultsAndErrors) {
  // fg_encoded_default_value: an empty history becomes one item of the default.
  auto p = parser(R"(
    feature_configs { sequence_id_feature { feature_name: "hist" embedding_dim: 4 num_buckets: 10
                                            fg_encoded_default_value: "0" } })");
  auto batch = p.parse(make_batch({{"hist", {"", "3;4"}}}));
  EXPECT_EQ(ids_of(batch.sparse_features.values()), (Ids{0, 3, 4}));
  EXPECT_EQ(ids_of(batch.sequence_lengths.at("hist")), (Ids{1, 2}));
  // value_dim 1 (the default): one id per item.
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"hist", {"1\x03" "2;3"}}})); }),
            "t.csv line 2 column hist: item 0 of sequence feature hist has 2 ids; with value_dim 1 each item is one "
            "id — set feature_configs[0].sequence_id_feature.value_dim: 0 for items with several ids, or fix the "
            "data");
  EXPECT_NE(error_of<DataError>([&] { p.parse(make_batch({{"hist", {"1;;2"}}})); })
                .find("t.csv line 2 column hist: '' is not an integer id for feature hist"),
            std::string::npos);
  EXPECT_NE(error_of<DataError>([&] { p.parse(make_batch({{"hist", {"1;12"}}})); })
                .find("id 12 out of range [0, 10) for feature hist"),
            std::string::npos);
  // Dense items need value_dim values each.
  auto raw = parser(R"(feature_configs { sequence_raw_feature { feature_name: "ts" value_dim: 2 } })");
  EXPECT_NE(error_of<DataError>([&] { raw.parse(make_batch({{"ts", {"1\x03" "2;3"}}})); })
                .find("dense feature ts has 1 values in an item, expected value_dim 2"),
            std::string::npos);
  // Multi-value ids of a sequence are no map.
  EXPECT_EQ(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(feature_configs { sequence_id_feature {
                  feature_name: "h" embedding_dim: 4 num_buckets: 10 value_dim: 3 } })"));
            }),
            "feature_configs[0].sequence_id_feature.value_dim: 3 for a sequence id feature; use 1 (one id per item) "
            "or 0 (any number of ids per item)");
}

TEST(SequenceFeatures, SequenceRawWithBoundariesIsSparse) {
  // FG_NONE: bucket ids per item; FG_NORMAL: values bucketized per item.
  auto encoded = parser(R"(feature_configs { sequence_raw_feature { feature_name: "p" embedding_dim: 4
                                                                    boundaries: [1, 2, 3] } })");
  auto b = encoded.parse(make_batch({{"p", {"0;3", "2"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 3, 2}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1}));
  auto fg = parser(R"(feature_configs { sequence_raw_feature { feature_name: "p" expression: "item:price"
                                                               embedding_dim: 4 boundaries: [1, 2, 3] } })",
                   "fg_mode: FG_NORMAL");
  b = fg.parse(make_batch({{"price", {"0.5;1;2.5;9", ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 1, 2, 3, 0}));  // an empty history is the default "0"
  EXPECT_EQ(ids_of(b.sequence_lengths.at("p")), (Ids{4, 1}));
}

TEST(SequenceFeatures, FgNormalDefaultsTruncationAndValueDim) {
  const char* features = R"(
    feature_configs { sequence_feature {
      sequence_name: "click" sequence_length: 3 sequence_delim: "|"
      features { id_feature { feature_name: "iid" expression: "item:iid" embedding_dim: 4 num_buckets: 100 } }
      features { id_feature { feature_name: "tag" expression: "item:tag" embedding_dim: 4 num_buckets: 100
                              value_dim: 0 } }
      features { raw_feature { feature_name: "ts" expression: "user:ts" } }
    } })";
  auto p = parser(features, "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"click__iid", "click__tag", "click__ts"}));
  auto b = p.parse(make_batch({{"click__iid", {"5|6|7|8", "", "9||3"}},
                               {"click__tag", {"1\x1d" "2|3|5|8", "4", "6||7"}},
                               {"click__ts", {"10|20|30", "", "1.5||2"}}}));
  const auto iid = b.sparse_features["click__iid"];
  // Row 0 keeps its first 3 items; an empty history and an empty item are the default "0".
  EXPECT_EQ(ids_of(iid.values), (Ids{5, 6, 7, 0, 9, 0, 3}));
  EXPECT_EQ(ids_of(iid.lengths), (Ids{3, 1, 3}));
  const auto tag = b.sparse_features["click__tag"];
  EXPECT_EQ(ids_of(tag.values), (Ids{1, 2, 3, 5, 4, 6, 0, 7}));  // value_dim 0 keeps every value of an item
  EXPECT_EQ(ids_of(b.sequence_item_lengths.at("click__tag")), (Ids{2, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("click__ts")), (Floats{10, 20, 30, 0, 1.5f, 0, 2}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("click__ts")), (Ids{3, 1, 3}));
  // value_dim 1 keeps an item's first value.
  auto first = p.parse(make_batch({{"click__iid", {"5\x1d" "6|7"}}, {"click__tag", {"1|2"}}, {"click__ts", {"1|2"}}}));
  EXPECT_EQ(ids_of(first.sparse_features["click__iid"].values), (Ids{5, 7}));
}

// Raw sequence items of one number each take a shorter path than other items (raw_feature.cc); the
// values are those of the rules in feature/raw_feature.h, worked out by hand: minmax over [0, 10]
// divides by 10, boundaries [0.2, 0.5] bucket below 0.2 / below 0.5 / the rest, truncation to
// sequence_length keeps the first items, an empty item or history is the default "0", and a word
// or an item of two values (value_dim 1) is an error naming the value or the count.
// The grouped sequence "s" of two raw sub-features over the same numbers: "d" dense, "b" bucketized
// by [0.2, 0.5], both normalized by minmax over [0, 10].
std::string raw_pair_config(int sequence_length) {
  return R"(
    feature_configs { sequence_feature {
      sequence_name: "s" sequence_length: )" +
         std::to_string(sequence_length) + R"( sequence_delim: ";"
      features { raw_feature { feature_name: "d" expression: "user:d" normalizer: "method=minmax,min=0,max=10" } }
      features { raw_feature { feature_name: "b" expression: "user:b" normalizer: "method=minmax,min=0,max=10"
                               boundaries: [0.2, 0.5] embedding_dim: 4 } }
    } })";
}

TEST(SequenceFeatures, RawItemsOfOneNumberEach) {
  auto p = parser(raw_pair_config(3), "fg_mode: FG_DAG");
  auto b = p.parse(make_batch({{"s__d", {"1;2.5;7;9", "", "4;;6"}}, {"s__b", {"1;2.5;7;9", "", "4;;6"}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("s__d")), (Floats{0.1f, 0.25f, 0.7f, 0, 0.4f, 0, 0.6f}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__d")), (Ids{3, 1, 3}));
  EXPECT_EQ(ids_of(b.sparse_features["s__b"].values), (Ids{0, 1, 2, 0, 1, 0, 2}));
  EXPECT_EQ(ids_of(b.sparse_features["s__b"].lengths), (Ids{3, 1, 3}));
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"s__d", {"1;x"}}, {"s__b", {"1"}}})); }),
            "t.csv line 2 column s__d: value 'x' of raw feature s__d is not a number; fix the data "
            "(multiple values are separated by feature_configs[0].sequence_feature.features[0].raw_feature.separator)");
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"s__d", {"1;6\x1d" "8"}}, {"s__b", {"1"}}})); }),
            "t.csv line 2 column s__d: raw feature s__d has 2 values in an item, expected value_dim 1; fix the "
            "data or feature_configs[0].sequence_feature.features[0].raw_feature.value_dim");
}

// Longer raw histories: items are read a row at a time (raw_feature.cc push_number_items) unless
// an item is empty or not a number, when the row takes the general path. Expected values: the
// decimal literals below as the compiler reads them, through minmax over [0, 10] (x / 10) and the
// boundaries [0.2, 0.5], worked out by hand; an empty item is the default "0", sequence_length 6
// keeps the first 6 items.
TEST(SequenceFeatures, RawHistoriesReadARowAtATime) {
  auto p = parser(raw_pair_config(6), "fg_mode: FG_DAG");
  const std::vector<std::string> cells = {
      "-1.25;3;0.0813245;101.385;7;1e1;2;x",  // 1e1: not plain, still one number; x: past the 6th item
      "12345678.12345678;4.5;;6",             // an empty item: the general path, the default 0
      "0.5;1;2.25;3;4;5;6;7;8;9;10;11",       // truncated
      "9",                                    // one item
      "1;2;3;4;5;6;7\x1d" "8",                // a separator, past the 6th item: dropped with it
  };
  auto b = p.parse(make_batch({{"s__d", cells}, {"s__b", cells}}));
  auto f = [](double x) { return static_cast<float>(x / 10); };
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("s__d")),
            (Floats{f(-1.25), f(3), f(0.0813245), f(101.385), f(7), f(1e1), f(12345678.12345678), f(4.5), 0, f(6),
                    f(0.5), f(1), f(2.25), f(3), f(4), f(5), f(9), f(1), f(2), f(3), f(4), f(5), f(6)}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__d")), (Ids{6, 4, 6, 1, 6}));
  EXPECT_EQ(ids_of(b.sparse_features["s__b"].values),
            (Ids{0, 1, 0, 2, 2, 2, 2, 1, 0, 2, 0, 0, 1, 1, 1, 2, 2, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(ids_of(b.sparse_features["s__b"].lengths), (Ids{6, 4, 6, 1, 6}));
  // A text Parquet column gives the same.
  TypedBatch t(static_cast<int64_t>(cells.size()));
  for (const char* name : {"s__d", "s__b"}) {
    t.add(name, PhysicalType::kByteArray, 0, [&](auto& c, int64_t r) { c.append_string(cells[r]); });
  }
  auto typed = p.parse(t.batch);
  EXPECT_EQ(floats_of(typed.sequence_dense_features.at("s__d")), floats_of(b.sequence_dense_features.at("s__d")));
  EXPECT_EQ(ids_of(typed.sparse_features.values()), ids_of(b.sparse_features.values()));
  // A word in the middle of a long history is the general path's error.
  auto bad = make_batch({{"s__d", {"1.5;2.5;oops;3.5;4.5;5.5"}}, {"s__b", {"1"}}});
  EXPECT_EQ(error_of<DataError>([&] { p.parse(bad); }),
            "t.csv line 2 column s__d: value 'oops' of raw feature s__d is not a number; fix the data "
            "(multiple values are separated by feature_configs[0].sequence_feature.features[0].raw_feature.separator)");
}

// zch on sequence ids (docs/tzrec-compatibility.md §5.12; TorchEasyRec's
// multi_tower_din_zch_fg_mock.config): as for a plain id feature, FG_NORMAL hashes every item over
// the whole int64 range (hash_bucket_size 2^63 - 1, the empty history's default "0" too) and
// FG_NONE takes any int64 as it is; the table has zch_size rows.
TEST(SequenceFeatures, ZchSequenceIdsAreRawIds) {
  const char* features = R"(
    feature_configs { sequence_feature {
      sequence_name: "click" sequence_length: 3 sequence_delim: "|"
      features { id_feature { feature_name: "iid" expression: "item:iid" embedding_dim: 4
                              zch { zch_size: 10 eviction_interval: 2 lru {} } } } } }
    feature_configs { sequence_id_feature { feature_name: "buy" expression: "item:buy" sequence_length: 3
                                            sequence_delim: "|" embedding_dim: 4 zch { zch_size: 20 lfu {} } } })";
  auto p = parser(features, "fg_mode: FG_NORMAL");
  auto b = p.parse(make_batch({{"click__iid", {"a|7", ""}}, {"buy", {"5", "x|y"}}}));
  std::hash<std::string> libstdcxx;
  const uint64_t range = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  auto h = [&](const char* s) { return static_cast<int64_t>(libstdcxx(s) % range); };
  EXPECT_EQ(ids_of(b.sparse_features["click__iid"].values), (Ids{h("a"), h("7"), h("0")}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("click__iid")), (Ids{2, 1}));
  EXPECT_EQ(ids_of(b.sparse_features["buy"].values), (Ids{h("5"), h("x"), h("y")}));
  const auto infos = build_feature_infos(parse_config(features));
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].num_embeddings, 10);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].sequence_feature.features[0].id_feature.zch");
  EXPECT_EQ(infos[1].num_embeddings, 20);
  EXPECT_EQ(infos[1].zch_eviction, "lfu");

  auto none = parser(R"(
    feature_configs { sequence_id_feature { feature_name: "buy" sequence_length: 3 sequence_delim: "|"
                                            embedding_dim: 4 zch { zch_size: 20 lfu {} } } })");
  auto nb = none.parse(make_batch({{"buy", {"123456789012345|-5", ""}}}));
  EXPECT_EQ(ids_of(nb.sparse_features["buy"].values), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(nb.sequence_lengths.at("buy")), (Ids{2, 0}));  // FG_NONE: an empty cell is an empty history
}

// Hashed sequence items of one id each are hashed straight from the cell (id_feature.cc
// push_hashed_items) unless the cell holds the separator; both paths must give what the rules of
// feature/id_feature.h give. Expected ids: libstdc++'s std::hash<std::string> (what pyfg hashes
// with, docs/tzrec-compatibility.md §5.4) % hash_bucket_size, or farmhash Fingerprint64 under
// USE_FARM_HASH_TO_BUCKETIZE (hash.h, tested against farmhash's own values); items and defaults
// worked out by hand: truncation to sequence_length keeps the first items, an empty item or
// history takes default_value ("0" when unset), an item of several values keeps its first
// non-empty one (value_dim 1), and unweighted ids weigh 1 when another feature of the batch is
// weighted.
TEST(SequenceFeatures, HashedItemsOfOneIdEachMatchTheGeneralRules) {
  const char* features = R"(
    feature_configs { sequence_feature {
      sequence_name: "s" sequence_length: 4 sequence_delim: ";"
      features { id_feature { feature_name: "a" expression: "item:a" embedding_dim: 4 hash_bucket_size: 1000 } }
      features { id_feature { feature_name: "b" expression: "item:b" embedding_dim: 4 hash_bucket_size: 97
                              default_value: "zz" } }
    } }
    feature_configs { id_feature { feature_name: "w" expression: "user:w" embedding_dim: 4 hash_bucket_size: 10
                                   weighted: true } })";
  // The last row: the separator only past the cell's first 64 bytes (a later window of the scan
  // for the delimiters).
  const std::string long_a(70, 'v'), long_b(66, 'w');
  const std::vector<std::string> a = {"x;12;;y;z;tail", "", ";", "p\x1d" "q;\x1d" "r;s", "one", long_a + ";p\x1d" "q;r"};
  const std::vector<std::string> b = {"1;2;;3;4;5", "", "7;8", "\x1d;k\x1d" "l;m", "2", long_b + ";k\x1d" "l;m"};
  const std::vector<std::string> w = {"u:0.5", "u:1", "u:1", "u:1", "u:1", "u:1"};
  for (const bool farm : {false, true}) {
    const FeatureParser p(parse_config(std::string("data_config { fg_mode: FG_DAG } ") + features),
                          /*read_labels=*/false, farm ? HashKind::kFarmHash : HashKind::kStdHash);
    auto h = [&](const char* text, uint64_t buckets) {
      const uint64_t hash = farm ? farm_fingerprint64(text) : std::hash<std::string>()(text);
      return static_cast<int64_t>(hash % buckets);
    };
    const Ids want_a = {h("x", 1000), h("12", 1000), h("0", 1000), h("y", 1000),  // truncated to 4
                        h("0", 1000),                                              // empty history
                        h("0", 1000), h("0", 1000),                                // two empty items
                        h("p", 1000), h("r", 1000), h("s", 1000),                  // separator: first values
                        h("one", 1000), h(long_a.c_str(), 1000), h("p", 1000), h("r", 1000)};
    const Ids want_b = {h("1", 97),  h("2", 97), h("zz", 97), h("3", 97), h("zz", 97),
                        h("7", 97),  h("8", 97), h("zz", 97), h("k", 97), h("m", 97),
                        h("2", 97),  h(long_b.c_str(), 97), h("k", 97), h("m", 97)};
    auto text = p.parse(make_batch({{"s__a", a}, {"s__b", b}, {"w", w}}));
    EXPECT_EQ(ids_of(text.sparse_features["s__a"].values), want_a) << farm;
    EXPECT_EQ(ids_of(text.sequence_lengths.at("s__a")), (Ids{4, 1, 2, 3, 1, 3})) << farm;
    EXPECT_EQ(ids_of(text.sparse_features["s__b"].values), want_b) << farm;
    EXPECT_EQ(ids_of(text.sequence_lengths.at("s__b")), (Ids{4, 1, 2, 3, 1, 3})) << farm;
    ASSERT_TRUE(text.sparse_features.has_weights());
    EXPECT_EQ(floats_of(text.sparse_features["s__a"].weights), Floats(want_a.size(), 1.0f)) << farm;
    // The same cells as a Parquet string column (a null cell is an empty history too).
    TypedBatch t(static_cast<int64_t>(a.size()));
    auto strings = [](const std::vector<std::string>& cells) {
      return [&cells](auto& c, int64_t r) {
        if (cells[r].empty()) {
          c.append_null();
        } else {
          c.append_string(cells[r]);
        }
      };
    };
    t.add("s__a", PhysicalType::kByteArray, 0, strings(a));
    t.add("s__b", PhysicalType::kByteArray, 0, strings(b));
    t.add("w", PhysicalType::kByteArray, 0, strings(w));
    auto typed = p.parse(t.batch);
    EXPECT_EQ(ids_of(typed.sparse_features.values()), ids_of(text.sparse_features.values())) << farm;
    EXPECT_EQ(ids_of(typed.sparse_features.lengths()), ids_of(text.sparse_features.lengths())) << farm;
  }
}

TEST(SequenceFeatures, SubFeaturesOfAHistoryHaveAsManyItems) {
  auto p = parser(kGrouped);
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(make_batch({{"user", {"1", "2"}},
                                  {"click__item", {"1;2", "3"}},
                                  {"click__price", {"1\x03" "2;3\x03" "4", "5\x03" "6;7\x03" "8"}}}));
            }),
            "t.csv line 3: sequence 'click' has 1 items in click__item but 2 in click__price (columns click__item "
            "and click__price); the sub-features of a sequence describe the same items — fix the data");
}

TEST(SequenceFeatures, ConfigErrors) {
  auto err = [](const std::string& features) {
    return error_of<Error>([&] { build_feature_infos(parse_config(features)); });
  };
  EXPECT_EQ(err(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 } })"),
            "feature_configs[0].sequence_feature.features: sequence 's' has no sub-features; add e.g. features { "
            "id_feature { ... } }");
  EXPECT_EQ(err(R"(feature_configs { sequence_feature { sequence_length: 5
                     features { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 3 } } } })"),
            "feature_configs[0].sequence_feature.sequence_name: must be set");
  EXPECT_EQ(err(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5
                     features { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 3 weighted: true } } } })"),
            "not supported yet: feature_configs[0].sequence_feature.features[0].id_feature.weighted (weighted "
            "sequence features)");
  EXPECT_EQ(err(R"(feature_configs { id_feature { feature_name: "s__a" embedding_dim: 4 num_buckets: 3 } }
                   feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5
                     features { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 3 } } } })"),
            "feature_configs[1].sequence_feature.features[0].id_feature.feature_name: 's__a' is used by another "
            "feature (feature_configs[0].id_feature)");
}

// sequence_fields of a feature of one input (TorchEasyRec docs/source/feature/feature.md, grouped
// sequences: "sequence_fields ... for a feature of one input, the input is per item by default"):
// listing the input changes nothing; another name would leave such a feature nothing per item.
TEST(SequenceFeatures, SequenceFieldsOfOneInputFeatures) {
  const char* listed = R"(
    feature_configs { sequence_feature {
      sequence_name: "click" sequence_length: 3 sequence_delim: "|"
      features { id_feature { feature_name: "iid" expression: "item:iid" embedding_dim: 4 num_buckets: 100
                              sequence_fields: ["iid"] } }
      features { raw_feature { feature_name: "ts" expression: "user:ts" sequence_fields: "ts" } }
    } })";
  auto p = parser(listed, "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"click__iid", "click__ts"}));
  auto b = p.parse(make_batch({{"click__iid", {"5|6", "7"}}, {"click__ts", {"1|2", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["click__iid"].values), (Ids{5, 6, 7}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("click__ts")), (Floats{1, 2, 3}));
  auto err = [](const std::string& features) {
    return error_of<Error>([&] { build_feature_infos(parse_config(features)); });
  };
  EXPECT_EQ(err(R"(feature_configs { sequence_feature { sequence_name: "click" sequence_length: 3
                     features { id_feature { feature_name: "iid" expression: "item:iid" embedding_dim: 4
                                             num_buckets: 100 sequence_fields: ["iid", "cate"] } } } })"),
            "feature_configs[0].sequence_feature.features[0].id_feature.sequence_fields[1]: 'cate' is not the "
            "feature's input ('iid' of feature_configs[0].sequence_feature.features[0].id_feature.expression); a "
            "feature of one input reads it per item, so list only 'iid' or leave sequence_fields unset");
  EXPECT_EQ(err(R"(feature_configs { raw_feature { feature_name: "ts" expression: "user:ts" sequence_fields: "ts" } })"),
            "feature_configs[0].raw_feature.sequence_fields: only sequence features have per-item inputs");
}

}  // namespace sequence_feature_test
}  // namespace tzrec::feature
