// Training-time sample masks (TorchEasyRec's data_config.sample_mask_prob /
// negative_sample_mask_prob with features' use_mask, tzrec/datasets/dataset.py and
// tzrec/features/feature.py's parse: the first input that is not an Arrow map is nulled on the
// masked rows, so the feature takes its default there). Expected values by hand from the
// features' defaults (feature/id_feature.h, raw_feature.h).
#include "feature/sample_mask.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_parser.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace sample_mask_test {

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

TEST(SampleMask, TextCellsOfMaskedRowsBecomeEmpty) {
  const data::RecordBatch b = make_batch({{"x", {"a", "b", "c"}}, {"y", {"1", "2", "3"}}, {"z", {"", "", ""}}});
  const data::RecordBatch m = with_masked_column(b, {"x", "y", "x", "missing"}, "x", {0, 1, 1});
  ASSERT_EQ(m.columns.size(), 2u);  // x once, y; "missing" left for the feature to report
  EXPECT_EQ(m.columns[0].cell(0), "a");
  EXPECT_EQ(m.columns[0].cell(1), "");
  EXPECT_EQ(m.columns[0].cell(2), "");
  EXPECT_EQ(m.columns[1].cell(1), "2");  // the other input as it was
  EXPECT_EQ(m.describe_row(2), "t.csv line 4");
}

TEST(SampleMask, TypedScalarsBecomeNullAndListsEmpty) {
  TypedBatch t(3);
  t.add("s", PhysicalType::kInt64, 0, [](parquet::ColumnBuilder& c, int64_t r) { c.append<int64_t>(10 + r); });
  t.add("l", PhysicalType::kInt64, 1, [](parquet::ColumnBuilder& c, int64_t r) {
    c.begin_list();
    for (int64_t k = 0; k <= r; ++k) c.append<int64_t>(r * 10 + k);
    c.end_list();
  });
  const std::vector<uint8_t> mask = {1, 0, 1};
  const data::RecordBatch s = with_masked_column(t.batch, {"s"}, "s", mask);
  const parquet::ColumnData& sc = s.typed_columns[0].values;
  EXPECT_TRUE(sc.is_null(0));
  EXPECT_FALSE(sc.is_null(1));
  EXPECT_EQ(sc.data<int64_t>()[1], 11);
  EXPECT_TRUE(sc.is_null(2));
  const data::RecordBatch l = with_masked_column(t.batch, {"l"}, "l", mask);
  const parquet::ColumnData& lc = l.typed_columns[0].values;
  EXPECT_EQ(lc.num_rows, 3);
  EXPECT_EQ(lc.lists[0].offsets, (std::vector<int64_t>{0, 0, 2, 2}));  // row 1 keeps {10, 11}
  EXPECT_EQ(lc.data<int64_t>()[0], 10);
  EXPECT_EQ(lc.data<int64_t>()[1], 11);
}

TEST(SampleMask, FirstMaskableColumnSkipsMaps) {
  TypedBatch t(1);
  using Entries = std::vector<std::pair<std::string, double>>;
  t.add_map<std::string, double>("kv", PhysicalType::kByteArray, PhysicalType::kDouble,
                                 {std::optional<Entries>(Entries{{"a", 1.0}})});
  t.add("k", PhysicalType::kInt64, 0, [](parquet::ColumnBuilder& c, int64_t) { c.append<int64_t>(1); });
  EXPECT_EQ(first_maskable_column(t.batch, {"kv", "k"}), "k");
  EXPECT_EQ(first_maskable_column(t.batch, {"kv"}), "");
  // A map given as text (CSV) is not a map column: it is the one masked, as in TorchEasyRec.
  EXPECT_EQ(first_maskable_column(make_batch({{"kv", {"a:1"}}, {"k", {"a"}}}), {"kv", "k"}), "kv");
}

TEST(SampleMask, DrawsFollowTheProbabilitiesAndRepeat) {
  std::vector<std::string> cells(100000, "x");
  const data::RecordBatch b = make_batch({{"x", cells}});
  SampleMaskOptions o;
  o.sample_prob = 0.3;
  o.negative_prob = 0.8;
  const SampleMasks m = draw_sample_masks(o, b, 50000, 7, 0);
  ASSERT_EQ(m.rows.size(), 100000u);
  ASSERT_EQ(m.negatives.size(), 50000u);
  double rows = 0, negs = 0;
  for (uint8_t x : m.rows) rows += x;
  for (uint8_t x : m.negatives) negs += x;
  // Binomial standard deviations: 0.0014 and 0.0018; 5 of them.
  EXPECT_NEAR(rows / 100000, 0.3, 0.0075);
  EXPECT_NEAR(negs / 50000, 0.8, 0.009);
  EXPECT_EQ(draw_sample_masks(o, b, 50000, 7, 0).rows, m.rows);   // the same seed, rank and rows
  EXPECT_NE(draw_sample_masks(o, b, 50000, 7, 1).rows, m.rows);   // another rank
  EXPECT_NE(draw_sample_masks(o, b, 50000, 8, 0).rows, m.rows);   // another seed
  o.sample_prob = 0;
  for (uint8_t x : draw_sample_masks(o, b, 0, 7, 0).rows) ASSERT_EQ(x, 0);
}

// FG_NORMAL: masked rows of the use_mask feature get its default_value ("0" hashed, as an empty
// input); another feature reading the same column is unaffected.
TEST(SampleMask, UseMaskFeatureTakesItsDefaultOnMaskedRows) {
  const char* features = R"(
    feature_configs { id_feature { feature_name: "masked" expression: "user:x" embedding_dim: 4 num_buckets: 100
                                   default_value: "7" use_mask: true } }
    feature_configs { id_feature { feature_name: "plain" expression: "user:x" embedding_dim: 4 num_buckets: 100 } }
    feature_configs { raw_feature { feature_name: "r" expression: "user:v" default_value: "-1" use_mask: true } })";
  FeatureParser p = parser(features, "fg_mode: FG_NORMAL sample_mask_prob: 0.5");
  data::RecordBatch b = make_batch({{"x", {"3", "4", "5"}}, {"v", {"1.5", "2.5", "3.5"}}});
  SampleMasks masks;
  masks.rows = {1, 0, 1};
  const sparse::Batch out = p.parse_in_place(&b, nullptr, &masks);
  EXPECT_EQ(ids_of(out.sparse_features["masked"].values), (Ids{7, 4, 7}));
  EXPECT_EQ(ids_of(out.sparse_features["plain"].values), (Ids{3, 4, 5}));
  EXPECT_EQ(floats_of(out.dense_features["r"]), (Floats{-1, 2.5f, -1}));
  // Without masks (evaluation, predict) nothing changes.
  data::RecordBatch again = make_batch({{"x", {"3", "4", "5"}}, {"v", {"1.5", "2.5", "3.5"}}});
  EXPECT_EQ(ids_of(p.parse_in_place(&again).sparse_features["masked"].values), (Ids{3, 4, 5}));
}

// FG_NONE: masked rows take fg_encoded_default_value.
TEST(SampleMask, FgNoneTakesTheEncodedDefault) {
  FeatureParser p = parser(R"(feature_configs { id_feature { feature_name: "c" embedding_dim: 4 num_buckets: 10
                                                              use_mask: true fg_encoded_default_value: "9" } })",
                           "sample_mask_prob: 0.5");
  TypedBatch t(3);
  t.add("c", PhysicalType::kInt64, 0, [](parquet::ColumnBuilder& c, int64_t r) { c.append<int64_t>(r + 1); });
  SampleMasks masks;
  masks.rows = {0, 1, 0};
  EXPECT_EQ(ids_of(p.parse_in_place(&t.batch, nullptr, &masks).sparse_features["c"].values), (Ids{1, 9, 3}));
}

// FG_NONE without fg_encoded_default_value: the value is what feature generation gives for empty
// inputs (TorchEasyRec's BaseFeature.fg_encoded_default_value runs the FG op on None inputs): the
// default_value bucketized — "7" of num_buckets 10 is id 7, "abc" hashed into 100 buckets is 33
// (libstdc++'s std::hash, the test vector of docs/tzrec-compatibility.md §5.5) —, a raw feature's
// default_value, nothing for an empty default. Empty cells of the column take it too.
TEST(SampleMask, FgNoneComputesTheDefaultFromEmptyInputs) {
  FeatureParser p = parser(R"(
    feature_configs { id_feature { feature_name: "n" expression: "user:n" embedding_dim: 4 num_buckets: 10
                                   default_value: "7" use_mask: true } }
    feature_configs { id_feature { feature_name: "h" expression: "user:h" embedding_dim: 4 hash_bucket_size: 100
                                   default_value: "abc" use_mask: true } }
    feature_configs { id_feature { feature_name: "e" expression: "user:e" embedding_dim: 4 hash_bucket_size: 100
                                   use_mask: true } }
    feature_configs { raw_feature { feature_name: "r" expression: "user:r" default_value: "-1.5" use_mask: true } })",
                           "sample_mask_prob: 0.5");
  data::RecordBatch b = make_batch({{"n", {"1", "2", ""}}, {"h", {"5", "6", "7"}}, {"e", {"8", "9", "10"}},
                                    {"r", {"0.5", "1.5", "2.5"}}});
  SampleMasks masks;
  masks.rows = {1, 0, 0};
  const sparse::Batch out = p.parse_in_place(&b, nullptr, &masks);
  EXPECT_EQ(ids_of(out.sparse_features["n"].values), (Ids{7, 2, 7}));  // masked, kept, empty cell
  EXPECT_EQ(ids_of(out.sparse_features["h"].values), (Ids{33, 6, 7}));
  EXPECT_EQ(ids_of(out.sparse_features["e"].values), (Ids{9, 10}));
  EXPECT_EQ(floats_of(out.dense_features["r"]), (Floats{-1.5f, 1.5f, 2.5f}));

  // A feature that feature generation cannot build (no expression) needs the value given.
  const std::string message = error_of<ConfigError>([] {
    build_feature_infos(parse_config(
        R"(feature_configs { id_feature { feature_name: "c" embedding_dim: 4 num_buckets: 10 use_mask: true } })"));
  });
  EXPECT_EQ(message.rfind("feature_configs[0].id_feature.use_mask under fg_mode FG_NONE: set fg_encoded_default_value "
                          "(the value of masked rows), or give the feature what feature generation needs to compute "
                          "it from empty inputs (",
                          0),
            0u)
      << message;
  EXPECT_EQ(error_of<NotSupportedError>([] {
              build_feature_infos(parse_config(R"(feature_configs { sequence_id_feature {
                  feature_name: "s" expression: "user:s" embedding_dim: 4 num_buckets: 10 use_mask: true } })"));
            }),
            "not supported yet: feature_configs[0].sequence_id_feature.use_mask of a sequence feature under fg_mode "
            "FG_NONE without fg_encoded_default_value: set fg_encoded_default_value");
  EXPECT_EQ(error_of<NotSupportedError>([] {
              build_feature_infos(parse_config(R"(feature_configs { id_feature {
                  feature_name: "w" expression: "user:w" embedding_dim: 4 hash_bucket_size: 10 weighted: true
                  use_mask: true } })"));
            }),
            "not supported yet: feature_configs[0].id_feature.use_mask of a weighted feature under fg_mode FG_NONE "
            "without fg_encoded_default_value: set fg_encoded_default_value");
}

// FG_DAG and FG_BUCKETIZE run feature generation over all features at once and apply no masks, in
// TorchEasyRec as here (a warning says so).
TEST(SampleMask, NoMasksUnderFgDag) {
  const auto infos = build_feature_infos(parse_config(R"(
    data_config { fg_mode: FG_DAG sample_mask_prob: 0.5 }
    feature_configs { id_feature { feature_name: "a" expression: "user:x" embedding_dim: 4 num_buckets: 10
                                   use_mask: true } })"));
  EXPECT_FALSE(infos[0].use_mask);
}

}  // namespace sample_mask_test
}  // namespace tzrec::feature
