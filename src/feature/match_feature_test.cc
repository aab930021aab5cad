// match_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/match_feature_test.py (test_fg_encoded_match_feature, test_match_feature_dense,
// _with_boundary, _with_num_buckets, _with_hash_bucket_size) and its docs
// (docs/source/feature/feature.md, "MatchFeature": nested map "pk1^sk1:0.2,sk2:0.3|pk2^sk4:0.1",
// pkey / skey "ALL"); the rest by hand from feature/match_feature.h, with std::hash values mod 100:
// "match_feat_1" -> 71, "z" -> 54, "match_feat_ca_ba_1" -> 46, "match_feat_2" -> 64,
// "match_feat_3" -> 28 (hash_test.cc pins the hash).
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace match_feature_test {

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

std::string match(const std::string& options, const std::string& pkey = "item:cate",
                  const std::string& skey = "item:brand") {
  return R"(feature_configs { match_feature { feature_name: "match_feat" nested_map: "user:match_cate_brand" pkey: ")" +
         pkey + "\" skey: \"" + skey + "\" " + options + " } }";
}

// TorchEasyRec's test inputs (its None cells are empty CSV cells).
const std::string kMap = "ca^ba:1,bb:2|cb^ba:3,bb:4";

data::RecordBatch nested_batch() {
  return make_batch({{"match_cate_brand", {kMap, kMap, kMap, "", ""}},
                     {"cate", {"ca", "ca", "", "ca", ""}},
                     {"brand", {"ba", "", "", "ba", ""}}});
}

TEST(MatchFeature, FgNoneAsTorchEasyRec) {
  auto p = parser(match(R"(num_buckets: 10 embedding_dim: 16 fg_encoded_default_value: "0")"));
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"match_feat"}));
  auto b = p.parse(make_batch({{"match_feat",
                                {"1\x03"
                                 "2",
                                 "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1, 1}));
  // A dense match reads one number per row.
  auto d = parser(match(""));
  EXPECT_EQ(floats_of(d.parse(make_batch({{"match_feat", {"0.5", "2"}}})).dense_features.values()), (Floats{0.5, 2}));
}

TEST(MatchFeature, DenseAsTorchEasyRec) {
  auto p = parser(match(R"(default_value: "0")"), kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"match_cate_brand", "cate", "brand"}));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + match("")));
  EXPECT_FALSE(infos.at(0).is_sparse);
  EXPECT_EQ(infos.at(0).value_dim, 1);
  EXPECT_EQ(floats_of(p.parse(nested_batch()).dense_features.values()), (Floats{1, 0, 0, 0, 0}));
}

TEST(MatchFeature, BoundariesNumBucketsAndHashAsTorchEasyRec) {
  auto bounds = [](const std::string& def) {
    return match(R"(boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 16 default_value: ")" + def + "\"");
  };
  auto b = parser(bounds("0"), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 1, 1, 1, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1, 1}));
  b = parser(bounds(""), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 0, 0, 0}));
  EXPECT_EQ(build_feature_infos(parse_config(bounds(""))).at(0).num_embeddings, 5);

  auto buckets = [](const std::string& def) {
    return match(R"(num_buckets: 10 embedding_dim: 16 default_value: ")" + def + "\"");
  };
  b = parser(buckets(""), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 0, 0, 0}));
  b = parser(buckets("0"), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 0, 0, 0, 0}));

  // hash_bucket_size hashes "<feature_name>_<value>": "match_feat_1" -> 71; defaults unprefixed.
  auto hashed = [](const std::string& def) {
    return match(R"(hash_bucket_size: 100 embedding_dim: 16 default_value: ")" + def + "\"");
  };
  b = parser(hashed(""), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{71}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 0, 0, 0}));
  b = parser(hashed("z"), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{71, 54, 54, 54, 54}));
  // show_pkey and show_skey put the matched keys before the value: "match_feat_ca_ba_1" -> 46.
  b = parser(match(R"(hash_bucket_size: 100 embedding_dim: 4 show_pkey: true show_skey: true)"), kFgNormal)
          .parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values())[0], 46);
}

// vocab_list: TorchEasyRec's MatchFeature table has one row more than the effective list.
TEST(MatchFeature, VocabListTableHasOneMoreRow) {
  const auto config = match(R"(vocab_list: ["1", "2"] embedding_dim: 4 default_value: "0")");
  EXPECT_EQ(build_feature_infos(parse_config(config)).at(0).num_embeddings, 5);  // [0, <OOV>, 1, 2] + 1
  auto b = parser(config, kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 0, 0, 0, 0}));
}

// pkey / skey "ALL": every primary / secondary key; numeric hits are summed; in that (multihit)
// mode an input value "ALL" is a wildcard too.
TEST(MatchFeature, Wildcards) {
  auto any_cate = parser(match(R"(default_value: "0")", "ALL"), kFgNormal);
  EXPECT_EQ(any_cate.input_columns(), (std::vector<std::string>{"match_cate_brand", "brand"}));
  auto b = any_cate.parse(make_batch({{"match_cate_brand", {kMap, kMap, kMap}}, {"brand", {"ba", "bb", "ALL"}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{4, 6, 10}));  // 1 + 3, 2 + 4, all
  auto any_brand = parser(match(R"(hash_bucket_size: 100 embedding_dim: 4)", "item:cate", "ALL"), kFgNormal);
  b = any_brand.parse(make_batch({{"match_cate_brand", {kMap, kMap}}, {"cate", {"ca", "cx"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{71, 64, 26}));  // match_feat_1, match_feat_2; "0"
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1}));
  // Without a wildcard in the config, "ALL" is an ordinary key.
  auto exact = parser(match(R"(default_value: "0")"), kFgNormal);
  b = exact.parse(make_batch({{"match_cate_brand", {"ALL^ba:7"}}, {"cate", {"ALL"}}, {"brand", {"ba"}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{7}));
}

// A Parquet map<string, string> nested map and int64 keys give what the text does.
TEST(MatchFeature, ParquetNestedMapEqualsText) {
  using Entries = std::vector<std::pair<std::string, std::string>>;
  TypedBatch t(3);
  t.add_map<std::string, std::string>("match_cate_brand", PhysicalType::kByteArray, PhysicalType::kByteArray,
                                      {Entries{{"ca", "ba:1,bb:2"}, {"cb", "ba:3,bb:4"}},
                                       Entries{{"ca", "ba:1,bb:2"}, {"cb", "ba:3,bb:4"}}, std::nullopt});
  t.add("cate", PhysicalType::kByteArray, 0, [](auto& c, int64_t) { c.append_string("cb"); });
  t.add("brand", PhysicalType::kByteArray, 0, [](auto& c, int64_t r) {
    if (r == 1) return c.append_null();
    c.append_string("bb");
  });
  auto p = parser(match(R"(boundaries: [-0.5, 0.5, 1.5, 2.5] embedding_dim: 4)"), kFgNormal);
  auto typed = p.parse(t.batch);
  auto text = p.parse(
      make_batch({{"match_cate_brand", {kMap, kMap, ""}}, {"cate", {"cb", "cb", "cb"}}, {"brand", {"bb", "", "bb"}}}));
  EXPECT_EQ(ids_of(typed.sparse_features.values()), (Ids{4, 1, 1}));
  EXPECT_EQ(ids_of(text.sparse_features.values()), ids_of(typed.sparse_features.values()));
}

// A grouped sub-feature: the item-side keys are per item, the user's nested map is shared.
TEST(MatchFeature, GroupedSequence) {
  auto p = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10 sequence_delim: ";"
      features { match_feature { feature_name: "m" nested_map: "user:kkv" pkey: "item:cate" skey: "item:brand"
                                 boundaries: [0.5, 2.5] embedding_dim: 4 } } } })",
                  kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"kkv", "s__cate", "s__brand"}));
  auto b =
      p.parse(make_batch({{"kkv", {kMap, ""}}, {"s__cate", {"ca;cb;ca", "ca"}}, {"s__brand", {"ba;bb;bx", "ba"}}}));
  // 1 -> 1, 4 -> 2, miss -> "0" -> 0; empty map -> 0.
  EXPECT_EQ(ids_of(b.sparse_features["s__m"].values), (Ids{1, 2, 0, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__m")), (Ids{3, 1}));
}

// zch (docs/tzrec-compatibility.md §5.12; TorchEasyRec's MatchFeature: zch makes the feature sparse
// with zch.zch_size rows, before every other size; its fg.json entry has hash_bucket_size
// MAX_HASH_BUCKET_SIZE, value_type "string" and needDiscrete true): the hits' texts become raw ids,
// hashed as with hash_bucket_size — "<feature_name>_<value>", defaults unprefixed — over
// [0, 2^63 - 1) (expected values: testing::zch_raw_id, libstdc++'s std::hash of the text mod
// 2^63 - 1); also in a grouped sequence; FG_NONE takes any int64 as it is. fg.json:
// fg_json_test.cc (FgJson.ZchFeatures).
TEST(MatchFeature, ZchGivesRawIds) {
  using testing::zch_raw_id;
  const std::string zch = R"(embedding_dim: 4 zch { zch_size: 30 distance_lfu { decay_exponent: 2 } } )";
  auto b = parser(match(zch + R"(hash_bucket_size: 100 default_value: "z")"), kFgNormal).parse(nested_batch());
  const int64_t hz = zch_raw_id("z");
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{zch_raw_id("match_feat_1"), hz, hz, hz, hz}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1, 1}));
  b = parser(match(zch + "show_pkey: true show_skey: true"), kFgNormal).parse(nested_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values())[0], zch_raw_id("match_feat_ca_ba_1"));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + match(zch)));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_TRUE(infos[0].is_sparse);
  EXPECT_EQ(infos[0].num_embeddings, 30);
  EXPECT_EQ(infos[0].zch_path, "feature_configs[0].match_feature.zch");
  EXPECT_EQ(infos[0].zch_eviction, "distance_lfu");
  EXPECT_EQ(infos[0].zch_decay_exponent, 2.0);

  auto seq = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10 sequence_delim: ";"
      features { match_feature { feature_name: "m" nested_map: "user:kkv" pkey: "item:cate" skey: "item:brand"
                                 embedding_dim: 4 zch { zch_size: 20 lfu {} } } } } })",
                    kFgNormal);
  b = seq.parse(make_batch({{"kkv", {kMap, ""}}, {"s__cate", {"ca;cb;ca", "ca"}}, {"s__brand", {"ba;bb;bx", "ba"}}}));
  // 1 and 4 hit (prefixed "m_", the sub-feature's configured name); a miss and the empty map: "0".
  const int64_t h0 = zch_raw_id("0");
  EXPECT_EQ(ids_of(b.sparse_features["s__m"].values), (Ids{zch_raw_id("m_1"), zch_raw_id("m_4"), h0, h0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__m")), (Ids{3, 1}));

  auto none = parser(match(zch));
  b = none.parse(make_batch({{"match_feat",
                              {"123456789012345\x03"
                               "-5",
                               ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{123456789012345, -5}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 0}));
  // FG_BUCKETIZE: as with hash_bucket_size, whether the FG output carries the prefix is unknown.
  EXPECT_EQ(error_of<NotSupportedError>([&] {
              build_feature_infos(parse_config("data_config { fg_mode: FG_BUCKETIZE } " + match(zch)));
            }),
            "not supported yet: feature_configs[0].match_feature.zch under data_config.fg_mode FG_BUCKETIZE");
}

TEST(MatchFeature, ConfigErrorsNameTheField) {
  auto build = [](const std::string& options) {
    build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + match(options)));
  };
  const std::string at = "feature_configs[0].match_feature";
  EXPECT_NE(error_of<ConfigError>([&] { build("value_dim: 2"); }).find(at + ".value_dim: 2"), std::string::npos);
  EXPECT_EQ(error_of<NotSupportedError>([&] { build("show_pkey: true"); }),
            "not supported yet: " + at +
                ".show_pkey with numeric values (boundaries or a dense output; the key prefix "
                "makes a text value)");
  EXPECT_EQ(
      error_of<NotSupportedError>([&] { build(R"(num_buckets: 4 embedding_dim: 4 normalizer: "method=log10")"); }),
      "not supported yet: " + at + ".normalizer with a num_buckets bucketizer (the values are discrete)");
  EXPECT_NE(error_of<ConfigError>([&] { build(R"(default_value: "")"); }).find(at + ".default_value: must be a number"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] {
              build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + match("", "item:cate", "")));
            }).find(at + ".skey: '' is not 'side:input_name'"),
            std::string::npos);
}

TEST(MatchFeature, BadDataErrorsNameFileRowColumnFeature) {
  auto p = parser(match(""), kFgNormal);
  EXPECT_EQ(
      error_of<DataError>([&] {
        p.parse(make_batch({{"match_cate_brand", {kMap, "ca:ba:1"}}, {"cate", {"ca", "ca"}}, {"brand", {"ba", "ba"}}}));
      }),
      "t.csv line 3 column match_cate_brand: entry 'ca:ba:1' of feature match_feat has no '^'; the "
      "feature_configs[0].match_feature.nested_map input holds 'pkey^skey:value,...' entries — fix the data");
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(make_batch({{"match_cate_brand", {"ca^ba"}}, {"cate", {"ca"}}, {"brand", {"ba"}}}));
            }),
            "t.csv line 2 column match_cate_brand: entry 'ba' of feature match_feat has no ':'; the "
            "feature_configs[0].match_feature.nested_map input holds 'skey:value' entries — fix the data");
  const std::string msg = error_of<DataError>([&] {
    p.parse(make_batch({{"match_cate_brand", {"ca^ba:x"}}, {"cate", {"ca"}}, {"brand", {"ba"}}}));
  });
  EXPECT_EQ(msg.rfind("t.csv line 2 column match_cate_brand: map value 'x' of feature match_feat is not a number", 0),
            0u)
      << msg;
}

}  // namespace match_feature_test
}  // namespace tzrec::feature
