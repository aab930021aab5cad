// overlap_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/overlap_feature_test.py (test_fg_encoded_overlap_feature_dense / _sparse,
// test_overlap_feature_dense, test_overlap_feature_with_boundaries; its None cells are empty CSV
// cells or null Parquet lists) and OverlapFeature._fg_json; the sequence cases by hand from
// feature/overlap_feature.h.
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace overlap_feature_test {

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

std::string overlap(const std::string& method, const std::string& options = "") {
  return R"(feature_configs { overlap_feature { feature_name: "overlap_feat" query: "user:query" title: "item:title" )"
         R"(method: ")" + method + "\" " + options + " } }";
}

TEST(OverlapFeature, FgNoneAsTorchEasyRec) {
  // test_fg_encoded_overlap_feature_dense: the column holds the ratios.
  auto dense = parser(R"(feature_configs { overlap_feature { feature_name: "overlap_feat" } })");
  EXPECT_EQ(dense.input_columns(), (std::vector<std::string>{"overlap_feat"}));
  EXPECT_EQ(floats_of(dense.parse(make_batch({{"overlap_feat", {"0.0", "0.2", "0.3"}}})).dense_features.values()),
            (Floats{0.0f, 0.2f, 0.3f}));
  // test_fg_encoded_overlap_feature_sparse: bucket ids of boundaries [0.1, 0.2, 0.3].
  auto sparse = parser(R"(feature_configs { overlap_feature { feature_name: "overlap_feat" embedding_dim: 16
      boundaries: [0.1, 0.2, 0.3] } })");
  auto b = sparse.parse(make_batch({{"overlap_feat", {"1", "2", "0", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  const auto info = build_feature_infos(parse_config(R"(feature_configs { overlap_feature {
      feature_name: "overlap_feat" embedding_dim: 16 boundaries: [0.1, 0.2, 0.3] } })")).at(0);
  EXPECT_TRUE(info.is_sparse);
  EXPECT_EQ(info.num_embeddings, 4);
}

TEST(OverlapFeature, MethodsAsTorchEasyRec) {
  struct Case {
    std::vector<std::string> query, title;
    std::string method;
    Floats expected;
  };
  const std::vector<Case> cases = {
      {{"abc\x1d" "efg", "abc\x1d" "efg", "", ""},
       {"abc\x1dqwe\x1drty\x1duio", "abc\x1d" "efg\x1drty", "", ""}, "query_common_ratio", {0.5, 1, 0, 0}},
      {{"abc\x1d" "efg", "abc\x1d" "efg", "", ""}, {"abc\x1dqwe\x1drty\x1duio", "abc", "", ""}, "title_common_ratio",
       {0.25, 1, 0, 0}},
      {{"abc\x1d" "efg", "abc\x1d" "efg", "", ""},
       {"abc\x1dqwe\x1drty\x1duio", "abc\x1d" "efg\x1drty", "", ""}, "is_contain", {0, 1, 0, 0}},
      {{"abc\x1d" "efg", "abc\x1d" "efg", "", ""}, {"abc\x1d" "efg\x1drty", "abc\x1d" "efg", "", ""}, "is_equal",
       {0, 1, 0, 0}},
  };
  for (const Case& c : cases) {
    auto p = parser(overlap(c.method), kFgNormal);
    EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"query", "title"}));
    auto b = p.parse(make_batch({{"query", c.query}, {"title", c.title}}));
    EXPECT_EQ(floats_of(b.dense_features.values()), c.expected) << c.method;
  }
  // By hand: is_contain needs the query's terms as one run, in order.
  auto contain = parser(overlap("is_contain"), kFgNormal);
  auto b = contain.parse(make_batch({{"query", {"b\x1d" "c", "c\x1d" "b", "a\x1d" "c"}},
                                     {"title", {"a\x1d" "b\x1d" "c", "a\x1d" "b\x1d" "c", "a\x1d" "b\x1d" "c"}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{1, 0, 0}));
}

// Common-term ratios count the query's (title's) terms with repetition; rows of more than 1024 term
// pairs take another path (a set of the other side's terms) that must give the same ratios. By
// hand: query t0 t0 t1 .. t38 (40 terms, 39 distinct) against title t1 t3 .. t39 x0 .. x19 (40):
// the query terms found are t1, t3, .., t37 (19 of 40); the title's are t1 .. t37 (19 of 40).
TEST(OverlapFeature, CommonRatiosCountRepeatsOnShortAndLongRows) {
  std::string long_query = "t0", long_title;
  for (int i = 0; i <= 38; ++i) long_query += "\x1dt" + std::to_string(i);
  for (int i = 1; i <= 39; i += 2) long_title += (long_title.empty() ? "t" : "\x1dt") + std::to_string(i);
  for (int i = 0; i < 20; ++i) long_title += "\x1dx" + std::to_string(i);
  const std::vector<std::string> query = {"a\x1d" "a\x1d" "b", long_query};
  const std::vector<std::string> title = {"a\x1d" "c", long_title};
  auto q = parser(overlap("query_common_ratio"), kFgNormal);
  EXPECT_EQ(floats_of(q.parse(make_batch({{"query", query}, {"title", title}})).dense_features.values()),
            (Floats{2.0f / 3, 19.0f / 40}));
  auto t = parser(overlap("title_common_ratio"), kFgNormal);
  EXPECT_EQ(floats_of(t.parse(make_batch({{"query", query}, {"title", title}})).dense_features.values()),
            (Floats{0.5f, 19.0f / 40}));
}

TEST(OverlapFeature, IndexOfIsTheQueryRunsFirstTitlePosition) {
  // TorchEasyRec's docs (feature.md, OverlapFeature: index_of is where the query as a whole first
  // appears in the title, -1.0 when it does not) and its overlap test (test_overlap_feature_methods:
  // query [b, c], title [a, b, c, d] → 1.0, so positions count terms from 0). By hand: the first of
  // two runs, a run out of order, a query longer than the title; an empty query or title gives 0,
  // as for every method (TorchEasyRec's vectors above).
  auto p = parser(overlap("index_of"), kFgNormal);
  auto b = p.parse(make_batch(
      {{"query", {"b\x1d" "c", "b", "c\x1d" "b", "a\x1d" "b\x1d" "c", "", "a"}},
       {"title", {"a\x1d" "b\x1d" "c\x1d" "d", "a\x1d" "b\x1d" "c\x1d" "b", "a\x1d" "b\x1d" "c", "a\x1d" "b",
                  "a\x1d" "b", ""}}}));
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{1, 1, -1, -1, 0, 0}));
  // With boundaries [0, 2]: 1 → bucket 1, -1 (absent) → 0, 3 → 2.
  auto bucketed = parser(overlap("index_of", "boundaries: [0, 2] embedding_dim: 4"), kFgNormal);
  auto s = bucketed.parse(make_batch(
      {{"query", {"b\x1d" "c", "x", "d"}}, {"title", {"a\x1d" "b\x1d" "c", "a", "a\x1d" "b\x1d" "c\x1d" "d"}}}));
  EXPECT_EQ(ids_of(s.sparse_features.values()), (Ids{1, 0, 2}));
}

// test_overlap_feature_dense with list<string> columns (a null list is an empty query / title).
TEST(OverlapFeature, ListColumnsAsTorchEasyRec) {
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
  TypedBatch t(4);
  t.add("query", PhysicalType::kByteArray, 1,
        lists({std::vector<std::string>{"abc", "defg"}, std::vector<std::string>{"abc", "efg"},
               std::vector<std::string>{}, std::nullopt}));
  t.add("title", PhysicalType::kByteArray, 1,
        lists({std::vector<std::string>{"abc", "qwe", "rty", "uio"}, std::vector<std::string>{"abc", "efg", "rty"},
               std::vector<std::string>{}, std::nullopt}));
  auto b = parser(overlap("query_common_ratio"), kFgNormal).parse(t.batch);
  EXPECT_EQ(floats_of(b.dense_features.values()), (Floats{0.5, 1, 0, 0}));
}

// test_overlap_feature_with_boundaries: [0.5, 1, 0, 0] in [0.25, 0.75] -> [1, 2, 0, 0], 3 rows.
TEST(OverlapFeature, BoundariesAsTorchEasyRec) {
  const std::string config = overlap("query_common_ratio", "embedding_dim: 16 boundaries: [0.25, 0.75]");
  auto b = parser(config, kFgNormal)
               .parse(make_batch({{"query", {"abc\x1d" "efg", "abc\x1d" "efg", "", ""}},
                                  {"title", {"abc\x1dqwe\x1drty\x1duio", "abc\x1d" "efg\x1drty", "", ""}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  const auto info = build_feature_infos(parse_config(config)).at(0);
  EXPECT_EQ(info.num_embeddings, 3);
  EXPECT_EQ(info.embedding_name, "overlap_feat_emb");
  // A normalizer applies before the boundaries: minmax over [0, 2] halves 1.0 to 0.5 -> bucket 1.
  auto n = parser(overlap("is_equal", R"(embedding_dim: 4 boundaries: [0.25, 0.75] separator: "," )"
                                      R"(normalizer: "method=minmax,min=0,max=2")"),
                  kFgNormal);
  b = n.parse(make_batch({{"query", {"a,b", "a"}}, {"title", {"a,b", "b"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 0}));
}

// A user-side query shared by the items of an item-side title (multi_input.h), stand-alone and
// grouped; by hand: "a b" vs items "a" | "a b" | "c" -> 0.5, 1, 0 -> buckets 1, 2, 0.
TEST(OverlapFeature, Sequences) {
  auto p = parser(R"(feature_configs { sequence_overlap_feature { feature_name: "so" query: "user:q" title: "item:t"
      method: "query_common_ratio" sequence_delim: ";" sequence_length: 10 embedding_dim: 4
      boundaries: [0.25, 0.75] } })",
                  kFgNormal);
  auto b = p.parse(make_batch({{"q", {"a\x1d" "b", ""}}, {"t", {"a;a\x1d" "b;c", "x"}}}));
  EXPECT_EQ(ids_of(b.sparse_features["so"].values), (Ids{1, 2, 0, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("so")), (Ids{3, 1}));

  auto g = parser(R"(feature_configs { sequence_feature { sequence_name: "s" sequence_length: 10 sequence_delim: ";"
      features { overlap_feature { feature_name: "o" query: "user:q" title: "item:t" method: "query_common_ratio" } }
      } })",
                  kFgNormal);
  EXPECT_EQ(g.input_columns(), (std::vector<std::string>{"q", "s__t"}));
  b = g.parse(make_batch({{"q", {"a\x1d" "b"}}, {"s__t", {"a;a\x1d" "b;c"}}}));
  EXPECT_EQ(floats_of(b.sequence_dense_features.at("s__o")), (Floats{0.5, 1, 0}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s__o")), (Ids{3}));
}

// OverlapFeature._fg_json: separator always written; BaseFeature.fg_json then adds default_value
// "0", sequence_delim and sequence_length to a stand-alone sequence and prefixes its type.
TEST(OverlapFeature, FgJsonAsTorchEasyRec) {
  const auto doc = create_fg_json(parse_config(
      overlap("title_common_ratio", "embedding_dim: 8 boundaries: [0.25, 0.75] normalizer: \"method=log10\"") +
      R"(feature_configs { sequence_overlap_feature { feature_name: "so" query: "user:q" title: "item:t"
         method: "is_equal" separator: "," sequence_delim: "|" sequence_length: 5 } })"));
  EXPECT_EQ(doc.dump(), nlohmann::ordered_json::parse(R"({"features": [
    {"feature_type": "overlap_feature", "feature_name": "overlap_feat", "query": "user:query", "title": "item:title",
     "method": "title_common_ratio", "value_type": "float", "separator": "\u001d", "normalizer": "method=log10",
     "boundaries": [0.25, 0.75]},
    {"feature_type": "sequence_overlap_feature", "feature_name": "so", "query": "user:q", "title": "item:t",
     "method": "is_equal", "value_type": "float", "separator": ",", "default_value": "0", "sequence_delim": "|",
     "sequence_length": 5}
  ]})").dump());
}

TEST(OverlapFeature, ConfigErrorsNameTheField) {
  auto build = [](const std::string& config) {
    build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + config));
  };
  const std::string at = "feature_configs[0].overlap_feature";
  EXPECT_EQ(error_of<ConfigError>([&] { build(overlap("jaccard")); }),
            at + ".method: 'jaccard' is not an overlap method; use query_common_ratio, title_common_ratio, "
                 "is_contain, is_equal or index_of");
  EXPECT_EQ(error_of<NotSupportedError>([&] { build(overlap("proximity_min_dist")); }),
            "not supported yet: " + at + ".method 'proximity_min_dist'");
  EXPECT_NE(error_of<ConfigError>([&] { build(overlap("")); }).find(at + ".method: must be set"), std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { build(overlap("is_equal", "normalizer: \"method=foo\"")); })
                .find(at + ".normalizer"),
            std::string::npos);
  // A sequence needs a per-item input.
  EXPECT_NE(error_of<ConfigError>([&] {
              build(R"(feature_configs { sequence_overlap_feature { feature_name: "so" query: "user:q"
                  title: "user:t" method: "is_equal" } })");
            }).find("feature_configs[0].sequence_overlap_feature: a sequence feature needs an input per item"),
            std::string::npos);
}

TEST(OverlapFeature, BadDataNamesColumnAndFeature) {
  using Entries = std::vector<std::pair<std::string, float>>;
  TypedBatch t(1);
  t.add_map<std::string, float>("query", PhysicalType::kByteArray, PhysicalType::kFloat, {Entries{{"a", 1.0f}}});
  t.add("title", PhysicalType::kByteArray, 0, [](auto& c, int64_t) { c.append_string("a"); });
  const std::string msg =
      error_of<DataError>([&] { parser(overlap("is_equal"), kFgNormal).parse(t.batch); });
  EXPECT_EQ(msg.rfind("column query is a ", 0), 0u) << msg;
  EXPECT_NE(msg.find("overlap feature overlap_feat reads terms"), std::string::npos) << msg;
}

}  // namespace overlap_feature_test
}  // namespace tzrec::feature
