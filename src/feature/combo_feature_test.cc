// combo_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/combo_feature_test.py (test_fg_encoded_combo_feature,
// test_combo_feature_with_hash_bucket_size, test_combo_feature_with_vocab_list,
// SequenceComboFeatureTest) and its docs (docs/source/feature/feature.md, "ComboFeature": the
// cartesian product of the inputs); the rest by hand from feature/combo_feature.h, with hashes of
// libstdc++'s std::hash (hash_test.cc) mod the bucket size: "ua_ia" -> 37, "xyz" -> 13, "0" -> 26,
// "12_34" -> 42, "12_35" -> 44, "13_34" -> 7 (of 100).
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace combo_feature_test {

using testing::error_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;
using testing::PhysicalType;
using testing::TypedBatch;


const std::string kFgNormal = "fg_mode: FG_NORMAL";

// TorchEasyRec's test_fg_encoded_combo_feature: FG_NONE ids as id_feature reads them.
TEST(ComboFeature, FgNoneReadsEncodedIds) {
  auto p = parser(R"(feature_configs { combo_feature { feature_name: "combo_feat" embedding_dim: 16
                                                        hash_bucket_size: 10 } })");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"combo_feat"}));
  auto b = p.parse(make_batch({{"combo_feat",
                                {"1\x03"
                                 "2",
                                 "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0, 1}));
  TypedBatch t(3);
  t.add("combo_feat", PhysicalType::kInt64, 0, [](auto& c, int64_t r) { c.append(int64_t{r + 1}); });
  auto typed = p.parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.values()), (Ids{1, 2, 3}));
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), (Ids{1, 1, 1}));
  const auto infos = build_feature_infos(parse_config(
      R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 16 hash_bucket_size: 100 } })"));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_TRUE(infos[0].is_sparse);
  EXPECT_EQ(infos[0].num_embeddings, 100);
  EXPECT_EQ(infos[0].embedding_name, "c_emb");
  EXPECT_EQ(infos[0].type, "combo_feature");
}

const char* kHashed = R"(feature_configs { combo_feature { feature_name: "combo_feat" embedding_dim: 16
    hash_bucket_size: 100 expression: ["user:uid_str", "item:iid_str"] default_value: "DEFAULT" } })";

std::string hashed(const std::string& default_value) {
  std::string c = kHashed;
  c.replace(c.find("DEFAULT"), 7, default_value);
  return c;
}

// TorchEasyRec's test_combo_feature_with_hash_bucket_size ("ig\1dih" is one value: \x01, not the
// separator); its None cells are empty CSV cells.
const std::vector<std::string> kUid = {
    "ua\x1d"
    "ub",
    "uc\x1d"
    "ud",
    "uee\x1d"
    "uf",
    "ug",
    "uh",
    "uj",
    "",
    "",
    ""};
const std::vector<std::string> kIid = {
    "ia\x1d"
    "ib",
    "ic",
    "",
    "id\x1d"
    "ie",
    "if",
    "",
    "ig\x01"
    "dih",
    "ij",
    ""};

TEST(ComboFeature, HashedCartesianProductAsTorchEasyRec) {
  auto p = parser(hashed(""), kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"uid_str", "iid_str"}));
  auto b = p.parse(make_batch({{"uid_str", kUid}, {"iid_str", kIid}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{37, 90, 5, 97, 60, 56, 40, 57, 55}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{4, 2, 0, 2, 1, 0, 0, 0, 0}));
  // A non-empty default value stands for the whole combination when an input is empty.
  auto d = parser(hashed("xyz"), kFgNormal).parse(make_batch({{"uid_str", kUid}, {"iid_str", kIid}}));
  EXPECT_EQ(ids_of(d.sparse_features.values()), (Ids{37, 90, 5, 97, 60, 56, 13, 40, 57, 55, 13, 13, 13, 13}));
  EXPECT_EQ(ids_of(d.sparse_features.lengths()), (Ids{4, 2, 1, 2, 1, 1, 1, 1, 1}));
}

// The same values as list<string> Parquet columns (TorchEasyRec's second parameter set), with nulls.
TEST(ComboFeature, ParquetListsEqualCsvText) {
  const std::vector<std::vector<std::string>> uid = {
      {"ua", "ub"}, {"uc", "ud"}, {"uee", "uf"}, {"ug"}, {"uh"}, {"uj"}, {}, {}, {}};
  const std::vector<std::vector<std::string>> iid = {{"ia", "ib"}, {"ic"}, {}, {"id", "ie"}, {"if"}, {},
                                                     {"ig", "ih"}, {"ij"}, {}};
  TypedBatch t(9);
  auto add = [&](const std::string& name, const std::vector<std::vector<std::string>>& rows) {
    t.add(name, PhysicalType::kByteArray, 1, [&](auto& c, int64_t r) {
      if (r == 7 && name == "uid_str") return c.append_null_list();  // None
      c.begin_list();
      for (const auto& v : rows[r]) c.append_string(v);
      c.end_list();
    });
  };
  add("uid_str", uid);
  add("iid_str", iid);
  auto typed = parser(hashed("xyz"), kFgNormal).parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), (Ids{4, 2, 1, 2, 1, 1, 1, 1, 1}));
  // Row 6 crosses [] with ["ig", "ih"]: the default.
  EXPECT_EQ(ids_of(typed.sparse_features.values()), (Ids{37, 90, 5, 97, 60, 56, 13, 40, 57, 55, 13, 13, 13, 13}));
}

// Integer inputs join as their decimal text: CSV "12" and Parquet int64 12 give the same ids.
TEST(ComboFeature, IntegerInputsJoinAsDecimalText) {
  auto p = parser(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 100
                                                        expression: ["user:u", "item:i"] } })",
                  kFgNormal);
  auto text = p.parse(make_batch({{"u",
                                   {"12",
                                    "12\x1d"
                                    "13",
                                    ""}},
                                  {"i",
                                   {"34\x1d"
                                    "35",
                                    "34", "34"}}}));
  EXPECT_EQ(ids_of(text.sparse_features.values()), (Ids{42, 44, 42, 7}));
  EXPECT_EQ(ids_of(text.sparse_features.lengths()), (Ids{2, 2, 0}));
  const std::vector<std::vector<int64_t>> u = {{12}, {12, 13}, {}};
  const std::vector<std::vector<int64_t>> i = {{34, 35}, {34}, {34}};
  TypedBatch t(3);
  t.add("u", PhysicalType::kInt64, 1, [&](auto& c, int64_t r) {
    c.begin_list();
    for (int64_t v : u[r]) c.append(v);
    c.end_list();
  });
  t.add("i", PhysicalType::kInt64, 1, [&](auto& c, int64_t r) {
    c.begin_list();
    for (int64_t v : i[r]) c.append(v);
    c.end_list();
  });
  auto typed = p.parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.values()), ids_of(text.sparse_features.values()));
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), ids_of(text.sparse_features.lengths()));
}

// TorchEasyRec's test_combo_feature_with_vocab_list: [default, <OOV>, ua_ia, ua_ib, ub_ia].
TEST(ComboFeature, VocabListAsTorchEasyRec) {
  const std::vector<std::string> uid = {
      "ua\x1d"
      "ub",
      "ua\x1d"
      "ub",
      "ua\x1d"
      "ub",
      "ua",
      "ua",
      "ua",
      "",
      "",
      ""};
  const std::vector<std::string> iid = {
      "ia\x1d"
      "ib",
      "ia",
      "",
      "ia\x1d"
      "ib",
      "ib",
      "",
      "ia\x01"
      "dib",
      "ia",
      ""};
  auto config = [](const std::string& def) {
    return R"(feature_configs { combo_feature { feature_name: "combo_feat" embedding_dim: 16
        vocab_list: ["ua_ia", "ua_ib", "ub_ia"] expression: ["user:uid_str", "item:iid_str"]
        default_value: ")" +
           def + "\" } }";
  };
  EXPECT_EQ(build_feature_infos(parse_config(config(""))).at(0).num_embeddings, 5);
  auto b = parser(config(""), kFgNormal).parse(make_batch({{"uid_str", uid}, {"iid_str", iid}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 3, 4, 1, 2, 4, 2, 3, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{4, 2, 0, 2, 1, 0, 0, 0, 0}));
  b = parser(config("xyz"), kFgNormal).parse(make_batch({{"uid_str", uid}, {"iid_str", iid}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 3, 4, 1, 2, 4, 0, 2, 3, 3, 0, 0, 0, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{4, 2, 1, 2, 1, 1, 1, 1, 1}));
}

// vocab_dict ids as given, unknown combinations -> 1; value_dim n keeps the first n ids of a row.
TEST(ComboFeature, VocabDictAndValueDimTruncation) {
  auto p = parser(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4
      vocab_dict: [{key: "a_x" value: 2}, {key: "b_y" value: 3}] expression: ["user:u", "item:i"] value_dim: 2 } })",
                  kFgNormal);
  auto b = p.parse(make_batch({{"u",
                                {"a\x1d"
                                 "b",
                                 "b"}},
                               {"i",
                                {"x\x1d"
                                 "y",
                                 "y"}}}));
  // Row 0: a_x, a_y, b_x, b_y -> 2, 1 (kept), 1, 3 (dropped by value_dim 2).
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 1, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1}));
}

// TorchEasyRec's SequenceComboFeatureTest: a grouped sub-feature crossing a user-side value (one
// per row, column "id_str") with the item-side history (column "click_50_seq__iid_str").
TEST(ComboFeature, GroupedSequenceAsTorchEasyRec) {
  struct Case {
    std::string default_value;
    int value_dim;
    Ids values, item_lengths;
  };
  for (const Case& c : {Case{"", 0, {2, 42, 3, 26, 23}, {2, 1, 1, 1}}, Case{"xyz", 0, {2, 42, 3, 13, 23}, {2, 1, 1, 1}},
                        Case{"", 1, {2, 3, 26, 23}, {}}, Case{"xyz", 1, {2, 3, 13, 23}, {}}}) {
    const std::string config = R"(feature_configs { sequence_feature { sequence_name: "click_50_seq"
        sequence_length: 50 sequence_delim: ";"
        features { combo_feature { feature_name: "combo_feat" hash_bucket_size: 100 embedding_dim: 16
            expression: ["user:id_str", "item:iid_str"] default_value: ")" +
                               c.default_value + "\" value_dim: " + std::to_string(c.value_dim) + " } } } }";
    auto p = parser(config, kFgNormal);
    EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"id_str", "click_50_seq__iid_str"}));
    auto b = p.parse(make_batch({{"id_str", {"ua", "", "ub"}},
                                 {"click_50_seq__iid_str",
                                  {"abc\x1d"
                                   "efg;hij",
                                   "", "hij"}}}));
    const auto f = b.sparse_features["click_50_seq__combo_feat"];
    EXPECT_EQ(ids_of(f.values), c.values) << c.default_value << " " << c.value_dim;
    EXPECT_EQ(ids_of(b.sequence_lengths.at("click_50_seq__combo_feat")), (Ids{2, 1, 1}));
    if (c.value_dim == 0) {
      EXPECT_EQ(ids_of(b.sequence_item_lengths.at("click_50_seq__combo_feat")), c.item_lengths);
      EXPECT_EQ(ids_of(f.lengths), (Ids{3, 1, 1}));
    } else {
      EXPECT_EQ(b.sequence_item_lengths.count("click_50_seq__combo_feat"), 0u);
      EXPECT_EQ(ids_of(f.lengths), (Ids{2, 1, 1}));
    }
  }
}

// A stand-alone sequence_combo_feature: no column prefix; sequence_fields picks the per-item inputs
// (here a user-side one); the history is truncated to sequence_length; item counts must agree.
TEST(ComboFeature, StandAloneSequenceAndSequenceFields) {
  auto p = parser(R"(feature_configs { sequence_combo_feature { feature_name: "s" hash_bucket_size: 100
      embedding_dim: 4 expression: ["user:u", "user:hist"] sequence_fields: ["hist"] sequence_length: 2 } })",
                  kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"u", "hist"}));
  auto b = p.parse(make_batch({{"u", {"12", "13"}}, {"hist", {"34;35;36", "34"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{42, 44, 7}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s")), (Ids{2, 1}));

  auto two = parser(R"(feature_configs { sequence_combo_feature { feature_name: "s" hash_bucket_size: 100
      embedding_dim: 4 expression: ["item:a", "item:b"] } })",
                    kFgNormal);
  auto zipped = two.parse(make_batch({{"a", {"12;13"}}, {"b", {"34;34"}}}));
  EXPECT_EQ(ids_of(zipped.sparse_features.values()), (Ids{42, 7}));  // 12_34, 13_34: items side by side
  EXPECT_EQ(error_of<DataError>([&] {
              two.parse(make_batch({{"a", {"12;13"}}, {"b", {"34"}}}));
            }),
            "t.csv line 2 column b: the sequence inputs of one feature describe the same items, but column a has "
            "2 items and column b has 1; fix the data");
}

// FG_NONE sub-feature of a grouped sequence: the column "<sequence>__<feature>" holds one id per item
// (value_dim 1, the sequence default) as sequence_id_feature reads it.
TEST(ComboFeature, GroupedSequenceFgNone) {
  auto p = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: ";"
      features { combo_feature { feature_name: "c" hash_bucket_size: 100 embedding_dim: 4 } } } })");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"s__c"}));
  auto b = p.parse(make_batch({{"s__c", {"1;2", "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 3}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__c")), (Ids{2, 0, 1}));
  const std::string msg = error_of<DataError>([&] {
    p.parse(make_batch({{"s__c",
                         {"1\x03"
                          "2"}}}));
  });
  EXPECT_EQ(msg.rfind("t.csv line 2 column s__c: item 0 of sequence feature s__c has 2 ids; with value_dim 1", 0), 0u)
      << msg;
}
// zch (docs/tzrec-compatibility.md §5.12; TorchEasyRec's ComboFeature.num_embeddings puts
// zch.zch_size before hash_bucket_size, its _fg_json writes hash_bucket_size MAX_HASH_BUCKET_SIZE):
// the crossed texts become raw ids, hashed over [0, 2^63 - 1) (expected values: testing::zch_raw_id,
// libstdc++'s std::hash of the text mod 2^63 - 1), also in a grouped sequence (value_dim 1: an
// item's first combination; the empty default is "0") and under FG_BUCKETIZE; FG_NONE takes any
// int64 as it is. The table has zch_size rows even with hash_bucket_size set. fg.json:
// fg_json_test.cc (FgJson.ZchFeatures).
// dynamicemb (docs/tzrec-compatibility.md §5.13; TorchEasyRec's ComboFeature.num_embeddings puts
// dynamicemb.max_capacity after zch and before hash_bucket_size, its _fg_json writes
// hash_bucket_size MAX_HASH_BUCKET_SIZE for it as for zch): raw ids as with zch, max_capacity rows,
// TorchEasyRec's initializer defaults (_build_dynamicemb_initializer: UNIFORM ±1/sqrt(max_capacity)
// without initializer_args; NORMAL std_dev 1/sqrt(embedding_dim) when unset); zch wins when both
// are set.
TEST(ComboFeature, DynamicembGivesRawIds) {
  using testing::zch_raw_id;
  const std::string features = R"(
    feature_configs { combo_feature { feature_name: "c" expression: ["user:a", "item:b"] embedding_dim: 4
        hash_bucket_size: 100 dynamicemb { max_capacity: 400 score_strategy: "LFU" } } }
    feature_configs { combo_feature { feature_name: "d" expression: ["user:a", "item:b"] embedding_dim: 16
        dynamicemb { max_capacity: 64 initializer_args { mode: "NORMAL" } } } }
    feature_configs { combo_feature { feature_name: "e" expression: ["user:a", "item:b"] embedding_dim: 4
        zch { zch_size: 50 lfu {} } dynamicemb { max_capacity: 64 } } })";
  auto b = parser(features, kFgNormal).parse(make_batch({{"a", {"ua\x1dub"}}, {"b", {"ia"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["c"].values), (Ids{zch_raw_id("ua_ia"), zch_raw_id("ub_ia")}));
  const auto infos = build_feature_infos(parse_config("data_config { " + kFgNormal + " } " + features));
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0].num_embeddings, 400);
  EXPECT_EQ(infos[0].dynamicemb.path, "feature_configs[0].combo_feature.dynamicemb");
  EXPECT_EQ(infos[0].dynamicemb.score_strategy, "LFU");
  EXPECT_EQ(infos[0].dynamicemb.init.mode, "UNIFORM");
  EXPECT_DOUBLE_EQ(infos[0].dynamicemb.init.upper, 1.0 / 20);  // 1/sqrt(400)
  EXPECT_EQ(infos[0].dynamicemb.eval_init.mode, "CONSTANT");
  EXPECT_EQ(infos[1].dynamicemb.init.mode, "NORMAL");
  EXPECT_DOUBLE_EQ(infos[1].dynamicemb.init.std_dev, 0.25);  // 1/sqrt(16)
  EXPECT_EQ(infos[2].num_embeddings, 50);
  EXPECT_EQ(infos[2].dynamicemb.path, "");  // zch takes precedence
  auto none = parser(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4
                                                           dynamicemb { max_capacity: 8 } } })")
                  .parse(make_batch({{"c", {"-123456789012"}}}));
  EXPECT_EQ(ids_of(none.sparse_features.values()), (Ids{-123456789012}));
  EXPECT_NE(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(feature_configs { combo_feature { feature_name: "c"
                  embedding_dim: 4 dynamicemb { max_capacity: 0 } } })"));
            }).find("feature_configs[0].combo_feature.dynamicemb.max_capacity: 0 must be in [1, 2^31]"),
            std::string::npos);
}

TEST(ComboFeature, ZchGivesRawIds) {
  using testing::zch_raw_id;
  const std::string features = R"(
    feature_configs { combo_feature { feature_name: "c" expression: ["user:a", "item:b"] embedding_dim: 4
        hash_bucket_size: 100 zch { zch_size: 50 eviction_interval: 3 lru { decay_exponent: 0.5 } } } }
    feature_configs { sequence_feature { sequence_name: "s" sequence_length: 5 sequence_delim: ";"
      features { combo_feature { feature_name: "sc" expression: ["user:a", "item:b"] embedding_dim: 4
                                 zch { zch_size: 60 lfu {} } } } } })";
  auto p = parser(features, kFgNormal);
  auto b = p.parse(make_batch({{"a", {"ua\x1dub", ""}}, {"b", {"ia", "ib"}}, {"s__b", {"x;y", "z"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["c"].values), (Ids{zch_raw_id("ua_ia"), zch_raw_id("ub_ia")}));
  EXPECT_EQ(ids_of(b.sparse_features["c"].lengths), (Ids{2, 0}));
  EXPECT_EQ(ids_of(b.sparse_features["s__sc"].values), (Ids{zch_raw_id("ua_x"), zch_raw_id("ua_y"), zch_raw_id("0")}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__sc")), (Ids{2, 1}));
  const auto infos = build_feature_infos(parse_config("data_config { " + kFgNormal + " } " + features));
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].num_embeddings, 50);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].combo_feature.zch");
  EXPECT_EQ(infos[0].zch_eviction, "lru");
  EXPECT_EQ(infos[0].zch_decay_exponent, 0.5);
  EXPECT_EQ(infos[0].zch_eviction_interval, 3);
  EXPECT_EQ(infos[1].num_embeddings, 60);
  EXPECT_EQ(infos[1].zch_path, "feature_configs[1].sequence_feature.features[0].combo_feature.zch");
  EXPECT_EQ(infos[1].zch_eviction, "lfu");

  const std::string plain = R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4
                                                                 zch { zch_size: 50 lfu {} } } })";
  auto none = parser(plain).parse(make_batch({{"c", {"123456789012345\x03-5", ""}}}));
  EXPECT_EQ(ids_of(none.sparse_features.values()), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(none.sparse_features.lengths()), (Ids{2, 0}));
  auto bucketize = parser(plain, "fg_mode: FG_BUCKETIZE").parse(make_batch({{"c", {"ua_ia"}}}));
  EXPECT_EQ(ids_of(bucketize.sparse_features.values()), (Ids{zch_raw_id("ua_ia")}));

  EXPECT_NE(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(feature_configs { combo_feature { feature_name: "c"
                  embedding_dim: 4 zch { zch_size: 50 } } })"));
            }).find("feature_configs[0].combo_feature.zch: set an eviction policy"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(feature_configs { combo_feature { feature_name: "c"
                  embedding_dim: 4 zch { zch_size: 0 lfu {} } } })"));
            }).find("feature_configs[0].combo_feature.zch.zch_size: 0 must be in [1, 2^63 - 1]"),
            std::string::npos);
}


TEST(ComboFeature, ConfigErrorsNameTheField) {
  auto config_error = [](const std::string& features, const std::string& data = kFgNormal) {
    return error_of<ConfigError>(
        [&] { build_feature_infos(parse_config("data_config { " + data + " } " + features)); });
  };
  EXPECT_NE(config_error(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 9
                                                               expression: ["user:a"] } })")
                .find("feature_configs[0].combo_feature.expression: a combo feature crosses two or more inputs, got 1"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4
                                                               expression: ["user:a", "item:b"] } })")
                .find("feature_configs[0].combo_feature: set one of hash_bucket_size, vocab_list, vocab_dict or vocab_file"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 9
                                                               expression: ["user:a", "items:b"] } })")
                .find("feature_configs[0].combo_feature.expression[1]: side 'items' of 'items:b'"),
            std::string::npos);
  // embedding_dim unset is not an error here: TorchEasyRec builds a table only for the features a group
  // uses (embedding/embedding_config.h: require_embedding_dim).
  EXPECT_EQ(config_error(R"(feature_configs { combo_feature { feature_name: "c" hash_bucket_size: 9
                                                               expression: ["user:a", "item:b"] } })"),
            "<no error of the expected type>");
  EXPECT_NE(config_error(R"(feature_configs { sequence_combo_feature { feature_name: "c" embedding_dim: 4
                                hash_bucket_size: 9 expression: ["user:a", "user:b"] } })")
                .find("feature_configs[0].sequence_combo_feature: a sequence feature needs an input per item"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { sequence_combo_feature { feature_name: "c" embedding_dim: 4
                                hash_bucket_size: 9 expression: ["user:a", "item:b"] sequence_fields: ["z"] } })")
                .find("feature_configs[0].sequence_combo_feature.sequence_fields[0]: 'z' is not an input name"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { sequence_combo_feature { feature_name: "c" embedding_dim: 4
                                hash_bucket_size: 9 expression: ["user:a", "item:b"] value_dim: 2 } })")
                .find("feature_configs[0].sequence_combo_feature.value_dim: 2 for a sequence combo feature"),
            std::string::npos);
  EXPECT_NE(config_error(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4
                                vocab_list: ["a_b"] default_bucketize_value: 1 expression: ["user:a", "item:b"] } })")
                .find("feature_configs[0].combo_feature.default_bucketize_value: 1 is outside the table [0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(data_config { fg_mode: FG_DAG }
                  feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 9
                                                    expression: ["user:a", "feature:b"] } })"));
            }).find("feature_configs[0].combo_feature: input 'feature:b' names no feature"),
            std::string::npos);
}

TEST(ComboFeature, BadDataErrorsNameFileRowColumnFeature) {
  auto p = parser(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 10 } })");
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(make_batch({{"c", {"1", "12"}}}));
            }),
            "t.csv line 3 column c: id 12 out of range [0, 10) for feature c (hash_bucket_size 10); fix the data or "
            "raise hash_bucket_size");
  const std::string msg = error_of<DataError>([&] { p.parse(make_batch({{"c", {"x"}}})); });
  EXPECT_EQ(msg.rfind("t.csv line 2 column c: 'x' is not an integer id for feature c", 0), 0u) << msg;
  auto fg = parser(R"(feature_configs { combo_feature { feature_name: "c" embedding_dim: 4 hash_bucket_size: 10
                                                         expression: ["user:a", "item:b"] } })",
                   kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] {
              fg.parse(make_batch({{"a", {"1"}}}));
            }),
            "input batch has no column 'b' (needed by feature c); the reader must read FeatureParser::input_columns()");
}

}  // namespace combo_feature_test
}  // namespace tzrec::feature
