// FeatureParser on typed (Parquet-shaped) columns: the same values give the same batch as CSV
// text, lists / maps / nulls follow docs/tzrec-compatibility.md §5.6, and unusable shapes are clear errors.
#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace feature_parser_typed_test {

using testing::error_of;
using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;

using parquet::ColumnBuilder;
using parquet::PhysicalType;
using testing::TypedBatch;
using testing::descriptor;
using testing::make_batch;
using testing::parse_config;

FeatureParser parser(const std::string& features, const std::string& data = "") {
  return testing::parser(features, data, /*read_labels=*/true);
}


void expect_same_batch(const sparse::Batch& a, const sparse::Batch& b) {
  ASSERT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.sparse_features.keys(), b.sparse_features.keys());
  EXPECT_EQ(ids_of(a.sparse_features.values()), ids_of(b.sparse_features.values()));
  EXPECT_EQ(ids_of(a.sparse_features.lengths()), ids_of(b.sparse_features.lengths()));
  ASSERT_EQ(a.sparse_features.weights().defined(), b.sparse_features.weights().defined());
  if (a.sparse_features.weights().defined()) {
    EXPECT_EQ(floats_of(a.sparse_features.weights()), floats_of(b.sparse_features.weights()));
  }
  EXPECT_EQ(floats_of(a.dense_features.values()), floats_of(b.dense_features.values()));
  for (const auto& [name, t] : a.labels) EXPECT_EQ(floats_of(t), floats_of(b.labels.at(name)));
}

// ---- FG_NONE -------------------------------------------------------------------------------------

const char* kFgNoneFeatures = R"(
  feature_configs { id_feature { feature_name: "cat" embedding_dim: 4 num_buckets: 100 } }
  feature_configs { id_feature { feature_name: "tags" embedding_dim: 4 num_buckets: 100 } }
  feature_configs { id_feature { feature_name: "wt" embedding_dim: 4 num_buckets: 100 weighted: true } }
  feature_configs { raw_feature { feature_name: "price" } }
  feature_configs { raw_feature { feature_name: "vec" value_dim: 2 } }
)";

TEST(FeatureParserTyped, FgNoneTypedColumnsEqualCsvText) {
  auto p = parser(kFgNoneFeatures, R"(label_fields: "clk")");
  // Row 1 has a null id, an empty list, a null map and a null in the middle of a list.
  auto csv = make_batch({{"cat", {"7", "", "99"}},
                         {"tags", {"1\x03" "2", "", "5\x03" "6"}},
                         {"wt", {"3:0.5\x03" "4:2", "", "9:1.5"}},
                         {"price", {"1.5", "-2", "3"}},
                         {"vec", {"1\x03" "2", "3\x03" "4", "5\x03" "6"}},
                         {"clk", {"1", "0", "1"}}});
  TypedBatch t(3);
  t.add("cat", PhysicalType::kInt64, 0, [](ColumnBuilder& b, int64_t r) {
     if (r == 1) {
       b.append_null();
     } else {
       b.append<int64_t>(r == 0 ? 7 : 99);
     }
   })
      .add("tags", PhysicalType::kInt32, 1,
           [](ColumnBuilder& b, int64_t r) {
             b.begin_list();
             if (r == 0) {
               b.append<int32_t>(1);
               b.append<int32_t>(2);
             } else if (r == 2) {
               b.append<int32_t>(5);
               b.append_null();  // null elements are skipped
               b.append<int32_t>(6);
             }
             b.end_list();
           })
      .add_map<int64_t, float>("wt", PhysicalType::kInt64, PhysicalType::kFloat,
                               {{{{3, 0.5f}, {4, 2.0f}}}, std::nullopt, {{{9, 1.5f}}}})
      .add("price", PhysicalType::kDouble, 0,
           [](ColumnBuilder& b, int64_t r) { b.append<double>(r == 0 ? 1.5 : r == 1 ? -2 : 3); })
      .add("vec", PhysicalType::kFloat, 1,
           [](ColumnBuilder& b, int64_t r) {
             b.begin_list();
             b.append<float>(static_cast<float>(2 * r + 1));
             b.append<float>(static_cast<float>(2 * r + 2));
             b.end_list();
           })
      .add("clk", PhysicalType::kInt32, 0,
           [](ColumnBuilder& b, int64_t r) { b.append<int32_t>(r == 1 ? 0 : 1); });
  const auto from_csv = p.parse(csv);
  const auto from_typed = p.parse(t.batch);
  expect_same_batch(from_csv, from_typed);
  // Hand-checked, so that the comparison cannot pass on two equally wrong parses.
  EXPECT_EQ(ids_of(from_typed.sparse_features.values()), (Ids{7, 99, 1, 2, 5, 6, 3, 4, 9}));
  EXPECT_EQ(ids_of(from_typed.sparse_features.lengths()), (Ids{1, 0, 1, 2, 0, 2, 2, 0, 1}));
  EXPECT_EQ(floats_of(from_typed.sparse_features.weights()),
            (Floats{1, 1, 1, 1, 1, 1, 0.5f, 2, 1.5f}));
  EXPECT_EQ(floats_of(from_typed.dense_features.values()),
            (Floats{1.5f, 1, 2, -2, 3, 4, 3, 5, 6}));
}

TEST(FeatureParserTyped, FgNoneStringScalarsSplitLikeCsvAndDefaultsApplyToNulls) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "cat" embedding_dim: 4 num_buckets: 100
                                   fg_encoded_default_value: "42" } }
    feature_configs { id_feature { feature_name: "s" embedding_dim: 4 num_buckets: 100 } }
  )");
  TypedBatch t(3);
  t.add("cat", PhysicalType::kInt64, 1,
        [](ColumnBuilder& b, int64_t r) {
          if (r == 0) {
            b.append_null_list();  // null -> default
          } else {
            b.begin_list();  // r == 1: empty -> default too
            if (r == 2) b.append<int64_t>(8);
            b.end_list();
          }
        })
      .add("s", PhysicalType::kByteArray, 0, [](ColumnBuilder& b, int64_t r) {
        if (r == 0) b.append_string("1\x03" "2");
        if (r == 1) b.append_null();
        if (r == 2) b.append_string("");
      });
  const auto out = p.parse(t.batch);
  EXPECT_EQ(ids_of(out.sparse_features.values()), (Ids{42, 42, 8, 1, 2}));
  EXPECT_EQ(ids_of(out.sparse_features.lengths()), (Ids{1, 1, 1, 2, 0, 0}));
}

TEST(FeatureParserTyped, FgNoneListOfStringsAndIntegralFloatsAreIds) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 100 } }
    feature_configs { id_feature { feature_name: "b" embedding_dim: 4 num_buckets: 100 } }
  )");
  TypedBatch t(1);
  t.add("a", PhysicalType::kByteArray, 1,
        [](ColumnBuilder& b, int64_t) {
          b.begin_list();
          b.append_string("12");
          b.append_string(" 13");
          b.end_list();
        })
      .add("b", PhysicalType::kDouble, 0, [](ColumnBuilder& b, int64_t) { b.append<double>(3.0); });
  const auto out = p.parse(t.batch);
  EXPECT_EQ(ids_of(out.sparse_features.values()), (Ids{12, 13, 3}));

  TypedBatch bad(1);
  bad.add("a", PhysicalType::kDouble, 0, [](ColumnBuilder& b, int64_t) { b.append<double>(2.5); })
      .add("b", PhysicalType::kInt64, 0, [](ColumnBuilder& b, int64_t) { b.append<int64_t>(1); });
  const auto msg = error_of<DataError>([&] { p.parse(bad.batch); });
  EXPECT_NE(msg.find("t.parquet row 0 column a: '2.5' is not an integer id for feature a"),
            std::string::npos)
      << msg;
}

TEST(FeatureParserTyped, RangeErrorsNameTheParquetRow) {
  auto p = parser(R"(feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 10 } })");
  TypedBatch t(3);
  t.add("a", PhysicalType::kInt64, 0,
        [](ColumnBuilder& b, int64_t r) { b.append<int64_t>(r == 2 ? 10 : r); });
  const auto msg = error_of<DataError>([&] { p.parse(t.batch); });
  EXPECT_NE(msg.find("t.parquet row 2 column a: id 10 out of range [0, 10)"), std::string::npos)
      << msg;
}

// ---- FG_NORMAL -----------------------------------------------------------------------------------

TEST(FeatureParserTyped, FgNormalTypedColumnsEqualCsvText) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "h" expression: "user:h" hash_bucket_size: 1000 embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "v" expression: "user:v" vocab_list: ["a", "b", "c"] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "n" expression: "user:n" num_buckets: 50 embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "w" expression: "user:w" hash_bucket_size: 1000 embedding_dim: 4 weighted: true } }
    feature_configs { raw_feature { feature_name: "x" expression: "user:x" boundaries: [0, 10, 100] embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "y" expression: "user:y" } }
  )",
                  R"(fg_mode: FG_NORMAL label_fields: "clk")");
  auto csv = make_batch({{"h", {"123", "", "77"}},
                         {"v", {"a\x1d" "c", "zz", ""}},
                         {"n", {"3", "49", ""}},
                         {"w", {"k1:0.5\x1d" "k2:2", "", "k3:1"}},
                         {"x", {"5", "100", ""}},
                         {"y", {"0.25", "", "7"}},
                         {"clk", {"0", "1", "0"}}});
  TypedBatch t(3);
  t.add("h", PhysicalType::kInt64, 0,
        [](ColumnBuilder& b, int64_t r) {
          if (r == 1) {
            b.append_null();
          } else {
            b.append<int64_t>(r == 0 ? 123 : 77);  // hashed as its decimal text
          }
        })
      .add("v", PhysicalType::kByteArray, 1,
           [](ColumnBuilder& b, int64_t r) {
             if (r == 2) {
               b.append_null_list();
               return;
             }
             b.begin_list();
             if (r == 0) {
               b.append_string("a");
               b.append_string("c");
             } else {
               b.append_string("zz");
             }
             b.end_list();
           })
      .add("n", PhysicalType::kInt32, 0,
           [](ColumnBuilder& b, int64_t r) {
             if (r == 2) {
               b.append_null();
             } else {
               b.append<int32_t>(r == 0 ? 3 : 49);
             }
           })
      .add_map<std::string, double>("w", PhysicalType::kByteArray, PhysicalType::kDouble,
                                    {{{{"k1", 0.5}, {"k2", 2.0}}}, std::vector<std::pair<std::string, double>>{}, {{{"k3", 1.0}}}})
      .add("x", PhysicalType::kFloat, 0,
           [](ColumnBuilder& b, int64_t r) {
             if (r == 2) {
               b.append_null();  // default "0" -> bucket 1
             } else {
               b.append<float>(r == 0 ? 5.0f : 100.0f);
             }
           })
      .add("y", PhysicalType::kDouble, 0,
           [](ColumnBuilder& b, int64_t r) {
             if (r == 1) {
               b.append_null();
             } else {
               b.append<double>(r == 0 ? 0.25 : 7);
             }
           })
      .add("clk", PhysicalType::kDouble, 0,
           [](ColumnBuilder& b, int64_t r) { b.append<double>(r == 1 ? 1 : 0); });
  const auto from_csv = p.parse(csv);
  const auto from_typed = p.parse(t.batch);
  expect_same_batch(from_csv, from_typed);
  // x: 5 -> bucket 1, 100 -> bucket 3 (a value equal to a boundary goes up), null -> "0" -> 1.
  auto x = from_typed.sparse_features["x"];
  EXPECT_EQ(ids_of(x.values), (Ids{1, 3, 1}));
  EXPECT_EQ(floats_of(from_typed.dense_features.values()), (Floats{0.25f, 0, 7}));
}

// ---- errors --------------------------------------------------------------------------------------

TEST(FeatureParserTyped, UnusableShapesAreClearErrors) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 10 } }
  )",
                  R"(label_fields: "clk")");
  auto with_a = [](const std::function<void(TypedBatch&)>& add_a) {
    TypedBatch t(1);
    add_a(t);
    t.add("clk", PhysicalType::kInt64, 0, [](ColumnBuilder& b, int64_t) { b.append<int64_t>(1); });
    return t;
  };
  auto list_of_lists = with_a([](TypedBatch& t) {
    t.add("a", PhysicalType::kInt64, 2, [](ColumnBuilder& b, int64_t) {
      b.begin_list();
      b.begin_list();
      b.append<int64_t>(1);
      b.end_list();
      b.end_list();
    });
  });
  EXPECT_NE(error_of<DataError>([&] { p.parse(list_of_lists.batch); }).find("list of lists"),
            std::string::npos);

  auto unweighted_map = with_a([](TypedBatch& t) {
    t.add_map<int64_t, float>("a", PhysicalType::kInt64, PhysicalType::kFloat, {{{{1, 1.0f}}}});
  });
  EXPECT_NE(error_of<DataError>([&] { p.parse(unweighted_map.batch); })
                .find("feature a is not weighted; set feature_configs[0].id_feature.weighted"),
            std::string::npos);

  auto string_values = with_a([](TypedBatch& t) {
    t.add_map<int64_t, std::string>("a", PhysicalType::kInt64, PhysicalType::kByteArray,
                                    {{{{1, "x"}}}});
  });
  EXPECT_NE(error_of<DataError>([&] { p.parse(string_values.batch); })
                .find("map with string values"),
            std::string::npos);

  TypedBatch list_label(1);
  list_label.add("a", PhysicalType::kInt64, 0, [](ColumnBuilder& b, int64_t) { b.append<int64_t>(1); })
      .add("clk", PhysicalType::kFloat, 1, [](ColumnBuilder& b, int64_t) {
        b.begin_list();
        b.append<float>(1);
        b.end_list();
      });
  // A list<number> label is a jagged label (one value per candidate of a generative model); the
  // models that need one number per row refuse it (models/model.h, task_label).
  auto jagged = p.parse(list_label.batch);
  EXPECT_EQ(jagged.labels.count("clk"), 0u);
  EXPECT_TRUE(torch::equal(jagged.jagged_label_values.at("clk"), torch::tensor({1.f})));
  EXPECT_TRUE(torch::equal(jagged.jagged_label_lengths.at("clk"), torch::tensor({1}, torch::kInt64)));

  TypedBatch null_label(1);
  null_label.add("a", PhysicalType::kInt64, 0, [](ColumnBuilder& b, int64_t) { b.append<int64_t>(1); })
      .add("clk", PhysicalType::kFloat, 0, [](ColumnBuilder& b, int64_t) { b.append_null(); });
  EXPECT_NE(error_of<DataError>([&] { p.parse(null_label.batch); })
                .find("t.parquet row 0 column clk: empty label 'clk'"),
            std::string::npos);
}

TEST(FeatureParserTyped, WeightedFeatureNeedsWeights) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "a" embedding_dim: 4 num_buckets: 10 weighted: true } }
  )");
  TypedBatch t(1);
  t.add("a", PhysicalType::kInt64, 1, [](ColumnBuilder& b, int64_t) {
    b.begin_list();
    b.append<int64_t>(1);
    b.end_list();
  });
  const auto msg = error_of<DataError>([&] { p.parse(t.batch); });
  EXPECT_NE(msg.find("'1' of weighted feature a is not id:weight"), std::string::npos) << msg;
}

}  // namespace feature_parser_typed_test
}  // namespace tzrec::feature
