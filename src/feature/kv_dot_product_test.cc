// kv_dot_product through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/kv_dot_product_test.py (test_kv_dot_product_dense, _with_boundaries: text, list and
// map inputs; its None cells are empty CSV cells or null Parquet maps / lists), the examples of
// docs/source/feature/feature.md ("KvDotProduct": "a:0.5|b:0.5" · "d:0.5|b:0.5" = 0.25,
// ["a", "b", "c"] · {"a": 0.5, "b": 0.5} = 1.0) and KvDotProduct._fg_json; the sequence cases by
// hand from feature/kv_dot_product.h.
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace kv_dot_product_test {

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

std::string kdp(const std::string& default_value, const std::string& options = "") {
  return R"(feature_configs { kv_dot_product { feature_name: "kdp_feat" query: "user:q" document: "item:d" )"
         R"(separator: "|" default_value: ")" + default_value + "\" " + options + " } }";
}
const std::string kBoundaries = "boundaries: [0.05, 0.15, 1.0] embedding_dim: 16";

data::RecordBatch text_batch() {
  return make_batch({{"q", {"a:0.5|b:0.5", "a|b|c", "a|b", ""}}, {"d", {"a:0.5|b:0.5", "a|b", "", ""}}});
}

TEST(KvDotProduct, DenseAsTorchEasyRec) {
  auto p = parser(kdp("0.1"), kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"q", "d"}));
  const auto info = build_feature_infos(parse_config(kdp("0.1"))).at(0);
  EXPECT_FALSE(info.is_sparse);
  EXPECT_EQ(info.value_dim, 1);
  EXPECT_EQ(floats_of(p.parse(text_batch()).dense_features.values()), (Floats{0.5, 2, 0.1f, 0.1f}));
  // The docs' examples: disjoint keys add nothing.
  auto b = p.parse(make_batch({{"q", {"a:0.5|b:0.5", "a:1"}}, {"d", {"d:0.5|b:0.5", "b:1"}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{0.25, 0}));
}

TEST(KvDotProduct, ListAndMapColumnsAsTorchEasyRec) {
  using Rows = std::vector<std::optional<std::vector<std::string>>>;
  auto lists = [](const Rows& rows) {
    return [rows](testing::ColumnBuilder& c, int64_t r) {
      const auto& row = rows[static_cast<size_t>(r)];
      if (!row) return c.append_null_list();
      c.begin_list();
      for (const auto& s : *row) c.append_string(s);
      c.end_list();
    };
  };
  using Strings = std::vector<std::string>;
  TypedBatch lt(4);
  lt.add("q", PhysicalType::kByteArray, 1,
         lists({Strings{"a:0.5", "b:0.5"}, Strings{"a", "b", "c"}, Strings{"a", "b"}, std::nullopt}));
  lt.add("d", PhysicalType::kByteArray, 1, lists({Strings{"a:0.5", "b:0.5"}, Strings{"a", "b"}, Strings{}, Strings{}}));
  auto p = parser(kdp("0.1"), kFgNormal);
  EXPECT_EQ(floats_of(p.parse(lt.batch).dense_features.values()), (Floats{0.5, 2, 0.1f, 0.1f}));

  using Entries = std::vector<std::pair<std::string, float>>;
  TypedBatch mt(4);
  mt.add_map<std::string, float>("q", PhysicalType::kByteArray, PhysicalType::kFloat,
                                 {Entries{{"a", 0.5f}, {"b", 0.5f}}, Entries{{"a", 1}, {"b", 1}, {"c", 1}},
                                  Entries{{"a", 1}, {"b", 1}}, std::nullopt});
  mt.add_map<std::string, float>("d", PhysicalType::kByteArray, PhysicalType::kFloat,
                                 {Entries{{"a", 0.5f}, {"b", 0.5f}}, Entries{{"a", 1}, {"b", 1}}, Entries{}, Entries{}});
  EXPECT_EQ(floats_of(p.parse(mt.batch).dense_features.values()), (Floats{0.5, 2, 0.1f, 0.1f}));
  // Boundaries with an empty default: the empty rows are 0, bucket 0.
  auto s = parser(kdp("", kBoundaries), kFgNormal).parse(mt.batch);
  EXPECT_EQ(ids_of(s.sparse_features.values()), (Ids{2, 3, 0, 0}));
  EXPECT_EQ(ids_of(s.sparse_features.lengths()), (Ids{1, 1, 1, 1}));

  // The docs: a key list against a map.
  TypedBatch mixed(1);
  mixed.add("q", PhysicalType::kByteArray, 1, lists({Strings{"a", "b", "c"}}));
  mixed.add_map<std::string, float>("d", PhysicalType::kByteArray, PhysicalType::kFloat,
                                    {Entries{{"a", 0.5f}, {"b", 0.5f}}});
  EXPECT_EQ(floats_of(p.parse(mixed.batch).dense_features.values()), (Floats{1}));
}

// Typed keys are compared as their text: a list<int64> query (each key of value 1) against a
// map<int64, float> document, and an int64-keyed map against a text document. 40 keys per row, so
// the kept key texts outgrow any small buffer while earlier keys are still read. By hand: keys
// 0 .. 39 against 0 .. 39 with value 0.25 = 40 * 0.25 = 10; keys 100 .. 139 against keys 0 .. 39:
// 0; row 2: {7: 2, 8: 3} · "7:0.5|9:4" = 2 * 0.5 = 1.
TEST(KvDotProduct, IntegerKeysAreTheirText) {
  std::vector<std::pair<int64_t, float>> doc;
  for (int64_t i = 0; i < 40; ++i) doc.emplace_back(i, 0.25f);
  TypedBatch t(2);
  t.add("q", PhysicalType::kInt64, 1, [](testing::ColumnBuilder& c, int64_t r) {
    c.begin_list();
    for (int64_t i = 0; i < 40; ++i) c.append(i + (r == 0 ? 0 : 100));
    c.end_list();
  });
  t.add_map<int64_t, float>("d", PhysicalType::kInt64, PhysicalType::kFloat, {doc, doc});
  auto p = parser(kdp("0"), kFgNormal);
  EXPECT_EQ(floats_of(p.parse(t.batch).dense_features.values()), (Floats{10, 0}));

  TypedBatch m(1);
  m.add_map<int64_t, float>("q", PhysicalType::kInt64, PhysicalType::kFloat, {{{{7, 2.0f}, {8, 3.0f}}}});
  m.add("d", PhysicalType::kByteArray, 0, [](testing::ColumnBuilder& c, int64_t) { c.append_string("7:0.5|9:4"); });
  EXPECT_EQ(floats_of(p.parse(m.batch).dense_features.values()), (Floats{1}));
}

// A key repeated in the query counts once, with its last entry; a key repeated in the document has
// its last value; the products are summed in the query's order. Rows whose entries would take more
// than 4096 pairwise comparisons go through maps and must give the same. By hand:
// a:1|b:2|a:3 · a:10|a:20|b:5 = 2 * 5 + 3 * 20 = 70; k0:1 .. k79:1 · k0:0.5 .. k79:0.5|k0:2 =
// 79 * 0.5 + 2 = 41.5.
TEST(KvDotProduct, RepeatedKeysOnShortAndLongRows) {
  std::string long_query, long_document;
  for (int i = 0; i < 80; ++i) {
    long_query += (i ? "|k" : "k") + std::to_string(i) + ":1";
    long_document += (i ? "|k" : "k") + std::to_string(i) + ":0.5";
  }
  long_document += "|k0:2";
  auto p = parser(kdp("0"), kFgNormal);
  auto b = p.parse(make_batch({{"q", {"a:1|b:2|a:3", long_query}}, {"d", {"a:10|a:20|b:5", long_document}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{70, 41.5}));
}

// test_kv_dot_product_with_boundaries: [0.5, 2, 0.1, 0.1] in [0.05, 0.15, 1.0] -> [2, 3, 1, 1].
TEST(KvDotProduct, BoundariesAsTorchEasyRec) {
  auto b = parser(kdp("0.1", kBoundaries), kFgNormal).parse(text_batch());
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 3, 1, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  const auto info = build_feature_infos(parse_config(kdp("0.1", kBoundaries))).at(0);
  EXPECT_TRUE(info.is_sparse);
  EXPECT_EQ(info.num_embeddings, 4);
  EXPECT_EQ(info.embedding_name, "kdp_feat_emb");
}

TEST(KvDotProduct, FgNoneReadsOwnColumn) {
  auto dense = parser(kdp("0"));
  EXPECT_EQ(dense.input_columns(), (std::vector<std::string>{"kdp_feat"}));
  EXPECT_EQ(floats_of(dense.parse(make_batch({{"kdp_feat", {"0.25", "2"}}})).dense_features.values()),
            (Floats{0.25, 2}));
  auto sparse = parser(kdp("0", kBoundaries + " fg_encoded_default_value: \"1\""));
  auto b = sparse.parse(make_batch({{"kdp_feat", {"3", ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 1}));
}

// By hand: user "a:2|b:1" against the items "a:1" | "b:3|a:1" | "z" -> 2, 5, 0 (no common key).
TEST(KvDotProduct, Sequences) {
  auto p = parser(R"(feature_configs { sequence_kv_dot_product { feature_name: "sk" query: "user:q"
      document: "item:d" separator: "|" sequence_delim: ";" sequence_length: 10 } })",
                  kFgNormal);
  auto b = p.parse(make_batch({{"q", {"a:2|b:1"}}, {"d", {"a:1;b:3|a:1;z"}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("sk")), (Floats{2, 5, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("sk")), (Ids{3}));
  auto g = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10 sequence_delim: ";"
      features { kv_dot_product { feature_name: "k" query: "user:q" document: "item:d" separator: "|"
                                  boundaries: [1, 3] embedding_dim: 4 } } } })",
                  kFgNormal);
  EXPECT_EQ(g.input_columns(), (std::vector<std::string>{"q", "s__d"}));
  b = g.parse(make_batch({{"q", {"a:2|b:1"}}, {"s__d", {"a:1;b:3|a:1;z"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["s__k"].values), (Ids{1, 2, 0}));
}

// KvDotProduct._fg_json; a grouped sub-feature's empty default is "0" (BaseFeature.fg_json).
TEST(KvDotProduct, FgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      kdp("0.1", kBoundaries) +
      R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10 sequence_delim: ";"
         features { kv_dot_product { feature_name: "k" query: "user:q" document: "item:d" default_value: ""
                                     sequence_fields: ["d"] } } } })"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "kv_dot_product", "feature_name": "kdp_feat", "default_value": "0.1", "query": "user:q",
     "document": "item:d", "separator": "|", "boundaries": [0.05000000074505806, 0.15000000596046448, 1.0]},
    {"sequence_name": "s", "sequence_length": 10, "sequence_delim": ";", "sequence_pk": "user:s", "features": [
      {"feature_type": "kv_dot_product", "feature_name": "k", "default_value": "0", "query": "user:q",
       "document": "item:d", "sequence_fields": ["d"]}]}
  ]})").dump());
}

TEST(KvDotProduct, ConfigAndDataErrors) {
  EXPECT_EQ(error_of<ConfigError>([&] { build_feature_infos(parse_config(kdp("x"))); }),
            "feature_configs[0].kv_dot_product.default_value: 'x' is not a number; feature kdp_feat has numeric "
            "values");
  auto p = parser(kdp("0"), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"q", {"a:1", "a:x"}}, {"d", {"a:1", "a:1"}}})); }),
            "t.csv line 3 column q: entry 'a:x' of kv_dot_product kdp_feat has a value that is not a number; entries "
            "are 'key:value' (or a key alone, value 1) — fix the data");
}

}  // namespace kv_dot_product_test
}  // namespace tzrec::feature
