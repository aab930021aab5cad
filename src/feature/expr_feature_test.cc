// expr_feature through FeatureParser. Expected values: TorchEasyRec's
// tzrec/features/expr_feature_test.py (test_fg_encoded_expr_feature_dense / _sparse,
// test_expr_feature_dense, test_expr_feature_with_boundaries, test_expr_feature_dot — its None cells
// are empty CSV cells or nulls; its one-row inputs broadcast over the batch by pyfg's array API have
// no counterpart in row-wise data) and its docs (docs/source/feature/feature.md, "ExprFeature": the
// example "u_age == i_age ? 1 : 0" with boundaries [0.5]); the rest by hand from
// feature/expr_feature.h, with the arithmetic next to each value. Buckets compare in float32 (a
// value equal to a boundary goes to the upper bucket): TorchEasyRec's dot test puts
// 0.2*0.2 + 0.3*0.2 = 0.1 in bucket 2 of [0.05, 0.10, 0.15].
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace expr_feature_test {

using testing::error_of;
using testing::Floats;
using testing::Ids;
using testing::ids_of;
using testing::floats_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;
using testing::PhysicalType;
using testing::TypedBatch;

const std::string kFgNormal = "fg_mode: FG_NORMAL";

std::string expr(const std::string& fields) {
  return R"(feature_configs { expr_feature { feature_name: "expr_feat" )" + fields + " } }";
}

// A double column; nullopt is a null cell.
void add_doubles(TypedBatch* t, const std::string& name, const std::vector<std::optional<double>>& v) {
  t->add(name, PhysicalType::kDouble, 0, [&](auto& c, int64_t r) {
    if (!v[static_cast<size_t>(r)]) return c.append_null();
    c.append(*v[static_cast<size_t>(r)]);
  });
}

// TorchEasyRec's test_fg_encoded_expr_feature_dense: FG_NONE reads the feature's column as a
// raw_feature's; fg_encoded_default_value fills empty cells.
TEST(ExprFeature, FgNoneDenseAsTorchEasyRec) {
  auto p = parser(expr(R"(fg_encoded_default_value: "0.1")"));
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"expr_feat"}));
  EXPECT_EQ(floats_of(p.parse(make_batch({{"expr_feat", {"", "0.2", "0.3"}}})).dense_features.values()),
            (Floats{0.1f, 0.2f, 0.3f}));
  TypedBatch ints(3);
  ints.add("expr_feat", PhysicalType::kInt64, 0, [](auto& c, int64_t r) {
    if (r == 0) return c.append_null();
    c.append(int64_t{r + 1});
  });
  EXPECT_EQ(floats_of(parser(expr(R"(fg_encoded_default_value: "1")")).parse(ints.batch).dense_features.values()),
            (Floats{1, 2, 3}));
  TypedBatch doubles(3);
  add_doubles(&doubles, "expr_feat", {std::nullopt, 0.2, 0.3});
  EXPECT_EQ(
      floats_of(parser(expr(R"(fg_encoded_default_value: "0")")).parse(doubles.batch).dense_features.values()),
      (Floats{0, 0.2f, 0.3f}));
  const auto infos = build_feature_infos(parse_config(expr("")));
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_FALSE(infos[0].is_sparse);
  EXPECT_EQ(infos[0].value_dim, 1);  // output_dim 1
  EXPECT_EQ(infos[0].type, "expr_feature");
}

// TorchEasyRec's test_fg_encoded_expr_feature_sparse: bucket ids as id_feature reads them.
TEST(ExprFeature, FgNoneSparseAsTorchEasyRec) {
  const std::string config = R"(embedding_dim: 16 boundaries: [0.1, 0.2, 0.3])";
  auto b = parser(expr(config)).parse(make_batch({{"expr_feat", {"1", "", "", "3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 0, 1}));
  TypedBatch t(4);
  t.add("expr_feat", PhysicalType::kInt64, 0, [](auto& c, int64_t r) {
    if (r == 2) return c.append_null();
    c.append(int64_t{r == 3 ? 3 : r + 1});
  });
  b = parser(expr(config + R"( fg_encoded_default_value: "0")")).parse(t.batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  const auto infos = build_feature_infos(parse_config(expr(config)));
  EXPECT_TRUE(infos.at(0).is_sparse);
  EXPECT_EQ(infos.at(0).num_embeddings, 4);
  EXPECT_EQ(infos.at(0).embedding_dim, 16);
  EXPECT_EQ(infos.at(0).embedding_name, "expr_feat_emb");
  EXPECT_EQ(error_of<DataError>([&] { parser(expr(config)).parse(make_batch({{"expr_feat", {"4"}}})); }),
            "t.csv line 2 column expr_feat: id 4 out of range [0, 4) for feature expr_feat (boundaries -> 4 rows); "
            "fix the data or the boundaries");
}

const std::string kAPlusB = R"(expression: "a+b" variables: ["user:a", "item:b"] )";

// TorchEasyRec's test_expr_feature_dense: a row where a variable is empty is default_value.
TEST(ExprFeature, DenseAsTorchEasyRec) {
  auto p = parser(expr(kAPlusB + R"(default_value: "0.1")"), kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"a", "b"}));
  auto text = p.parse(make_batch({{"a", {"0.2", "", "0.3", ""}}, {"b", {"0.2", "0.2", "0.2", "0.2"}}}));
  EXPECT_EQ(floats_of(text.dense_features.values()), (Floats{0.4f, 0.1f, 0.5f, 0.1f}));
  TypedBatch t(4);
  add_doubles(&t, "a", {0.2, 0.1, 0.3, std::nullopt});
  add_doubles(&t, "b", {0.2, 0.2, 0.2, 0.2});
  EXPECT_EQ(floats_of(p.parse(t.batch).dense_features.values()), (Floats{0.4f, 0.3f, 0.5f, 0.1f}));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + expr(kAPlusB)));
  EXPECT_FALSE(infos.at(0).is_sparse);
  EXPECT_EQ(infos.at(0).value_dim, 1);
}

// TorchEasyRec's test_expr_feature_with_boundaries: 0.2+0.2 -> 3, 0.1+0.2 -> 2, 0.3+0.2 -> 3 of
// [0.15, 0.25, 0.35]; the default 0.1 -> 0; an empty default gives no id.
TEST(ExprFeature, BoundariesAsTorchEasyRec) {
  const std::string config = kAPlusB + R"(embedding_dim: 16 boundaries: [0.15, 0.25, 0.35] )";
  TypedBatch t(4);
  add_doubles(&t, "a", {0.2, 0.1, 0.3, std::nullopt});
  add_doubles(&t, "b", {0.2, 0.2, 0.2, 0.2});
  auto b = parser(expr(config + R"(default_value: "0.1")"), kFgNormal).parse(t.batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 2, 3, 0}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  b = parser(expr(config + R"(default_value: "")"), kFgNormal)
          .parse(make_batch({{"a", {"0.2", "", "0.3"}}, {"b", {"0.2", "0.2", "0.2"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{3, 3}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 1}));
  const auto infos =
      build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " + expr(config)));
  EXPECT_TRUE(infos.at(0).is_sparse);
  EXPECT_EQ(infos.at(0).num_embeddings, 4);
  EXPECT_EQ(infos.at(0).embedding_name, "expr_feat_emb");
}

// TorchEasyRec's test_expr_feature_dot: list columns, "\x1d"-separated text and a custom separator
// give the same ids; an empty input is the default.
TEST(ExprFeature, DotAsTorchEasyRec) {
  const std::string config =
      R"pb(expression: "dot(a,b)" variables: ["user:a", "item:b"] embedding_dim: 16 boundaries: [0.05, 0.10, 0.15] )pb";
  const std::vector<std::vector<double>> a = {{0.2, 0.3}, {0.1, 0.2}, {0.3, 0.4}, {}};
  TypedBatch t(4);
  t.add("a", PhysicalType::kDouble, 1, [&](auto& c, int64_t r) {
    c.begin_list();
    for (double v : a[static_cast<size_t>(r)]) c.append(v);
    c.end_list();
  });
  t.add("b", PhysicalType::kDouble, 1, [&](auto& c, int64_t) {
    c.begin_list();
    c.append(0.2);
    c.append(0.2);
    c.end_list();
  });
  // 0.2*0.2 + 0.3*0.2 = 0.1 -> 2; 0.1*0.2 + 0.2*0.2 = 0.06 -> 1; 0.3*0.2 + 0.4*0.2 = 0.14 -> 2; default 0.1 -> 2.
  auto b = parser(expr(config + R"(default_value: "0.1")"), kFgNormal).parse(t.batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{2, 1, 2, 2}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1, 1, 1}));
  // 0.08 -> 1, 0.14 -> 2.
  b = parser(expr(config + R"(default_value: "")"), kFgNormal)
          .parse(make_batch({{"a",
                              {"0.2\x1d"
                               "0.2",
                               "",
                               "0.3\x1d"
                               "0.4"}},
                             {"b", {"0.2\x1d" "0.2", "0.2\x1d" "0.2", "0.2\x1d" "0.2"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 1}));
  b = parser(expr(config + R"(default_value: "" separator: ",")"), kFgNormal)
          .parse(make_batch({{"a", {"0.2,0.2", "", "0.3,0.4"}}, {"b", {"0.2,0.2", "0.2,0.2", "0.2,0.2"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 2}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 0, 1}));
}

// TorchEasyRec's docs example; integer columns and their text give the same ids.
TEST(ExprFeature, DocsExampleCsvEqualsParquet) {
  auto p = parser(R"(feature_configs { expr_feature { feature_name: "combo_age_cate"
      variables: ["user:u_age", "item:i_age"] expression: "u_age == i_age ? 1 : 0" embedding_dim: 8
      boundaries: [0.5] } })",
                  kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"u_age", "i_age"}));
  auto text = p.parse(make_batch({{"u_age", {"18", "20", ""}}, {"i_age", {"18", "18", "18"}}}));
  // 1 -> 1, 0 -> 0, the default "0" -> 0.
  EXPECT_EQ(ids_of(text.sparse_features.values()), (Ids{1, 0, 0}));
  EXPECT_EQ(ids_of(text.sparse_features.lengths()), (Ids{1, 1, 1}));
  TypedBatch t(3);
  t.add("u_age", PhysicalType::kInt64, 0, [](auto& c, int64_t r) {
    if (r == 2) return c.append_null();
    c.append(int64_t{r == 0 ? 18 : 20});
  });
  t.add("i_age", PhysicalType::kInt32, 0, [](auto& c, int64_t) { c.append(int32_t{18}); });
  auto typed = p.parse(t.batch);
  EXPECT_EQ(ids_of(typed.sparse_features.values()), ids_of(text.sparse_features.values()));
  EXPECT_EQ(ids_of(typed.sparse_features.lengths()), ids_of(text.sparse_features.lengths()));
}

// A vector result: one bucket id per value (value_dim n keeps the first n); a dense feature takes
// value_dim values; functions and constants without variables.
TEST(ExprFeature, VectorResultsAndValueDim) {
  const std::string config = R"(expression: "a * 2" variables: ["user:a"] boundaries: [0.5] embedding_dim: 4 )";
  const auto batch = make_batch({{"a", {"0.1\x1d" "0.3", "0.4"}}});
  // 0.2 -> 0, 0.6 -> 1; 0.8 -> 1.
  auto b = parser(expr(config), kFgNormal).parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 1, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{2, 1}));
  b = parser(expr(config + "value_dim: 1"), kFgNormal).parse(batch);
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 1}));
  EXPECT_EQ(ids_of(b.sparse_features.lengths()), (Ids{1, 1}));
  // Dense value_dim 2: a + b element-wise; the single default value stands for both.
  auto d = parser(expr(R"(expression: "a + b" variables: ["user:a", "item:b"] value_dim: 2 default_value: "-1")"),
                  kFgNormal)
               .parse(make_batch({{"a", {"1\x1d"
                                         "2",
                                         ""}},
                                  {"b", {"10", "10"}}}));
  EXPECT_EQ(floats_of(d.dense_features.values()), (Floats{11, 12, -1, -1}));
  // No variables: every row gets the constant; functions and _pi.
  auto c = parser(expr(R"pb(expression: "roundp(_pi, 2) + max(1, 2)")pb"), kFgNormal).parse(make_batch({{"x", {"", ""}}}));
  EXPECT_EQ(floats_of(c.dense_features.values()), (Floats{5.14f, 5.14f}));
  // A variable the expression does not use is read but cannot make the row default.
  auto u = parser(expr(R"(expression: "a - 1" variables: ["user:a", "item:unused"] default_value: "9")"), kFgNormal);
  EXPECT_EQ(u.input_columns(), (std::vector<std::string>{"a", "unused"}));
  EXPECT_EQ(floats_of(u.parse(make_batch({{"a", {"3", ""}}, {"unused", {"", "x"}}})).dense_features.values()),
            (Floats{2, 9}));
}

// rnd(): reproducible per row, different across rows.
TEST(ExprFeature, RandomIsReproduciblePerRow) {
  auto p = parser(expr(R"(expression: "rnd() + 0 * a" variables: ["user:a"])"), kFgNormal);
  const auto batch = make_batch({{"a", {"1", "1", "1"}}});
  const Floats x = floats_of(p.parse(batch).dense_features.values());
  EXPECT_EQ(floats_of(p.parse(batch).dense_features.values()), x);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NE(x[0], x[1]);
  EXPECT_NE(x[1], x[2]);
  for (float v : x) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

// A grouped sub-feature: the user-side variable (column "u") is one value per row every item
// sees; the item-side one is the history ("click__p"), truncated to sequence_length 3.
TEST(ExprFeature, GroupedSequenceSparseAndDense) {
  const auto config = [](const std::string& extra) {
    return R"(feature_configs { sequence_feature { sequence_name: "click" sequence_length: 3 sequence_delim: ";"
        features { expr_feature { feature_name: "ratio" expression: "p / u" variables: ["user:u", "item:p"] )" +
           extra + " } } } }";
  };
  const auto batch = make_batch({{"u", {"2", "", "4"}}, {"click__p", {"1;3;5;7", "2", ""}}});
  auto p = parser(config("boundaries: [1, 2] embedding_dim: 4"), kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"u", "click__p"}));
  auto b = p.parse(batch);
  // Row 0: 0.5 -> 0, 1.5 -> 1, 2.5 -> 2 (the 4th item is cut); row 1: u empty -> the default 0 -> 0;
  // row 2: no items -> one item of the default -> 0.
  const auto f = b.sparse_features["click__ratio"];
  EXPECT_EQ(ids_of(f.values), (Ids{0, 1, 2, 0, 0}));
  EXPECT_EQ(ids_of(f.lengths), (Ids{3, 1, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("click__ratio")), (Ids{3, 1, 1}));
  auto d = parser(config(R"(default_value: "-1")"), kFgNormal).parse(batch);
  EXPECT_EQ(floats_of(d.sequence_dense_features.at("click__ratio")), (Floats{0.5, 1.5, 2.5, -1, -1}));
  EXPECT_EQ(ids_of(d.sequence_lengths.at("click__ratio")), (Ids{3, 1, 1}));
  const auto infos = build_feature_infos(parse_config("data_config { fg_mode: FG_NORMAL } " +
                                                      config("boundaries: [1, 2] embedding_dim: 4")));
  EXPECT_EQ(infos.at(0).name, "click__ratio");
  EXPECT_TRUE(infos.at(0).is_sequence);
  EXPECT_EQ(infos.at(0).value_dim, 1);
  EXPECT_EQ(infos.at(0).num_embeddings, 3);
}

// A stand-alone sequence_expr_feature: sequence_fields picks the per-item variable; value_dim 0
// keeps every id of an item's vector result.
TEST(ExprFeature, StandAloneSequence) {
  auto p = parser(R"(feature_configs { sequence_expr_feature { feature_name: "s" expression: "h - u"
      variables: ["user:u", "user:h"] sequence_fields: ["h"] boundaries: [0] embedding_dim: 4 } })",
                  kFgNormal);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"u", "h"}));
  // -1 -> 0, 0 -> 1 (equal to the boundary: upper bucket), 1 -> 1.
  auto b = p.parse(make_batch({{"u", {"1"}}, {"h", {"0;1;2"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{0, 1, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s")), (Ids{3}));
  auto v = parser(R"(feature_configs { sequence_expr_feature { feature_name: "s" expression: "h * u"
      variables: ["user:u", "item:h"] boundaries: [0] embedding_dim: 4 value_dim: 0 } })",
                  kFgNormal);
  // Items "1" and "2\x1d-3" times u = 1: [1] -> 1; [2, -3] -> 1, 0.
  b = v.parse(make_batch({{"u", {"1"}}, {"h", {"1;2\x1d-3"}}}));
  EXPECT_EQ(ids_of(b.sparse_features.values()), (Ids{1, 1, 0}));
  EXPECT_EQ(ids_of(b.sequence_item_lengths.at("s")), (Ids{1, 2}));
}

std::string config_error(const std::string& fields, const std::string& data = kFgNormal) {
  return error_of<ConfigError>([&] { build_feature_infos(parse_config("data_config { " + data + " } " + expr(fields))); });
}

TEST(ExprFeature, ConfigErrorsNameTheFieldAndPosition) {
  EXPECT_EQ(config_error(R"(expression: "a + c" variables: ["user:a", "item:b"])"),
            "feature_configs[0].expr_feature.expression: unknown variable 'c' at character 5 of \"a + c\"; declare it "
            "in variables as \"user:c\" or \"item:c\" (declared: a, b)");
  EXPECT_EQ(config_error(R"pb(expression: "foo(a)" variables: ["user:a"])pb")
                .rfind("feature_configs[0].expr_feature.expression: unknown function 'foo' at character 1 of "
                       "\"foo(a)\"; the functions are rnd, isnan, sin, ",
                       0),
            0u);
  EXPECT_EQ(config_error(R"(expression: "(a + 1" variables: ["user:a"])"),
            "feature_configs[0].expr_feature.expression: unexpected end of the expression, expected ')' at character "
            "7 of \"(a + 1\"; close the '(' at character 1");
  EXPECT_EQ(config_error(R"pb(expression: "roundp(a)" variables: ["user:a"])pb"),
            "feature_configs[0].expr_feature.expression: function 'roundp' takes 2 arguments, got 1 at character 1 "
            "of \"roundp(a)\"");
  EXPECT_EQ(config_error(R"(variables: ["user:a"])"),
            "feature_configs[0].expr_feature.expression: must be set to a math expression over the variables, e.g. "
            "\"a - b\"");
  EXPECT_EQ(config_error(R"(expression: "a" variables: ["user:a", "item:a"])"),
            "feature_configs[0].expr_feature.variables[1]: variable 'a' is declared twice (also variables[0]); "
            "remove one");
  EXPECT_NE(config_error(R"(expression: "a" variables: ["users:a"])")
                .find("feature_configs[0].expr_feature.variables[0]: side 'users' of 'users:a'"),
            std::string::npos);
  EXPECT_EQ(config_error(R"(expression: "a" variables: ["user:a"] default_value: "x")"),
            "feature_configs[0].expr_feature.default_value: 'x' is not a number; rows where a variable is empty take "
            "it (numbers separated by separator)");
  EXPECT_EQ(config_error(R"(expression: "a" variables: ["user:a"] value_dim: 0)"),
            "feature_configs[0].expr_feature.value_dim: 0 for a dense expr feature (no boundaries); set the number "
            "of values the expression gives (1 for a scalar)");
  EXPECT_NE(config_error(R"(expression: "a" variables: ["user:a"] boundaries: [0.5, 0.1] embedding_dim: 4)")
                .find("feature_configs[0].expr_feature.boundaries: must be strictly increasing"),
            std::string::npos);
  // embedding_dim unset is not an error here: TorchEasyRec builds a table only for the features a group
  // uses (embedding/embedding_config.h: require_embedding_dim).
  EXPECT_EQ(config_error(R"(expression: "a" variables: ["user:a"] boundaries: [0.5])"), "<no error of the expected type>");
  EXPECT_EQ(config_error(R"(expression: "a" variables: ["user:a"] sequence_fields: ["a"])"),
            "feature_configs[0].expr_feature.sequence_fields: only sequence features have per-item inputs");
  EXPECT_EQ(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(data_config { fg_mode: FG_NORMAL }
                  feature_configs { sequence_expr_feature { feature_name: "s" expression: "a" variables: ["item:a"]
                                                            boundaries: [0] embedding_dim: 4 value_dim: 2 } })"));
            }),
            "feature_configs[0].sequence_expr_feature.value_dim: 2 for a sparse sequence expr feature; use 1 (one id "
            "per item) or 0 (every value of an item's result)");
  EXPECT_EQ(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(data_config { fg_mode: FG_NORMAL }
                  feature_configs { sequence_expr_feature { feature_name: "s" expression: "a" variables: ["user:a"] } })"));
            }),
            "feature_configs[0].sequence_expr_feature: a sequence feature needs an input per item: an 'item:' input, "
            "or name the per-item inputs in sequence_fields");
  EXPECT_NE(error_of<ConfigError>([] {
              build_feature_infos(parse_config(R"(data_config { fg_mode: FG_DAG }
                  feature_configs { expr_feature { feature_name: "e" expression: "a" variables: ["feature:a"] } })"));
            }).find("feature_configs[0].expr_feature: input 'feature:a' names no feature"),
            std::string::npos);
  // FG_NONE reads the FG output: the expression is not compiled.
  EXPECT_EQ(build_feature_infos(parse_config(expr(R"(expression: "not an expression")"))).size(), 1u);
}

TEST(ExprFeature, BadDataErrorsNameFileRowColumnFeature) {
  auto p = parser(expr(R"(expression: "sqrt(a) + b" variables: ["user:a", "item:b"])"), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"a", {"4", "x"}}, {"b", {"1", "1"}}})); }),
            "t.csv line 3 column a: value 'x' of variable a of expr feature expr_feat is not a number; fix the data "
            "(several values are separated by feature_configs[0].expr_feature.separator)");
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"a", {"-1"}}, {"b", {"1"}}})); }),
            "t.csv line 2 column a: expr feature expr_feat evaluates \"sqrt(a) + b\" to NaN; guard the expression "
            "(e.g. isnan(x) ? 0 : x, or a domain check before log / sqrt), or set fill_missing for vectors of "
            "different lengths");
  // Two values where value_dim is 1.
  EXPECT_EQ(error_of<DataError>([&] {
              p.parse(make_batch({{"a",
                                   {"4\x1d"
                                    "9"}},
                                  {"b", {"1"}}}));
            }),
            "t.csv line 2 column a: expr feature expr_feat gives 2 values, expected value_dim 1; fix the data or "
            "feature_configs[0].expr_feature.value_dim");
  auto no_default = parser(expr(R"(expression: "a" variables: ["user:a"] default_value: "")"), kFgNormal);
  EXPECT_EQ(error_of<DataError>([&] { no_default.parse(make_batch({{"a", {""}}})); }),
            "t.csv line 2 column a: a variable of expr feature expr_feat is empty and default_value is empty; set "
            "feature_configs[0].expr_feature.default_value or fill the column");
  EXPECT_EQ(error_of<DataError>([&] { p.parse(make_batch({{"a", {"1"}}})); }),
            "input batch has no column 'b' (needed by feature expr_feat); the reader must read "
            "FeatureParser::input_columns()");
}

}  // namespace expr_feature_test
}  // namespace tzrec::feature
