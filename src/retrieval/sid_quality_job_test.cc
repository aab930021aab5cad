// `tzrec evaluate_sid_quality` (retrieval/sid_quality_job.h) on tables written here: the rows it
// keeps and drops, the views, the written tables and the errors. The metric values themselves are
// checked in sid_quality_test.cc; here they come from the same seven items, worked out by hand.
#include "retrieval/sid_quality_job.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"

namespace tzrec::retrieval {
namespace sid_quality_job_test {

using parquet::PhysicalType;
using Codes = std::optional<std::vector<int64_t>>;

// A Parquet table of two list<int64> columns, origin and codes.
std::string write_table(const std::string& path, const std::vector<std::pair<Codes, Codes>>& rows) {
  parquet::FileWriter w(path, {parquet::WriterField{"origin", PhysicalType::kInt64, true, 1, false},
                               parquet::WriterField{"codes", PhysicalType::kInt64, true, 1, false}});
  parquet::ColumnBuilder origin(w.schema().column(0)), codes(w.schema().column(1));
  for (const auto& [o, c] : rows) {
    for (auto [b, v] : {std::pair{&origin, &o}, std::pair{&codes, &c}}) {
      if (!*v) {
        b->append_null_list();
        continue;
      }
      b->begin_list();
      for (int64_t x : **v) b->append<int64_t>(x);
      b->end_list();
    }
  }
  parquet::Table t;
  t.num_rows = static_cast<int64_t>(rows.size());
  t.columns.push_back(origin.finish());
  t.columns.push_back(codes.finish());
  w.write(std::move(t));
  w.close();
  return path;
}

// The seven items of sid_quality_test.cc as "codes" ((0,0) ×3, (1,2) ×2, (2,0), (3,2)), all
// different as "origin" except two; then invalid rows: a null origin, codes of one layer, an
// out-of-range code (4 in a codebook of 4).
std::vector<std::pair<Codes, Codes>> rows() {
  return {{Codes{{0, 0}}, Codes{{0, 0}}}, {Codes{{0, 1}}, Codes{{1, 2}}}, {Codes{{0, 2}}, Codes{{0, 0}}},
          {Codes{{1, 0}}, Codes{{3, 2}}}, {Codes{{1, 1}}, Codes{{1, 2}}}, {Codes{{1, 2}}, Codes{{2, 0}}},
          {Codes{{1, 2}}, Codes{{0, 0}}}, {std::nullopt, Codes{{0, 0}}},  {Codes{{0, 0}}, Codes{{1}}},
          {Codes{{0, 0}}, Codes{{4, 0}}}};
}

SidQualityOptions options(const std::string& input) {
  SidQualityOptions o;
  o.input_path = input;
  o.codebook = {4, 3};
  o.batch_size = 4;
  return o;
}

TEST(SidQualityJob, OneFieldDropsInvalidRows) {
  data::testing::TempDir dir;
  SidQualityOptions o = options(write_table(dir.file("items.parquet"), rows()));
  o.summary_output = dir.file("summary");
  o.layer_stats_output = dir.file("layers");
  const SidQualityEvaluation e = run_evaluate_sid_quality(o);
  EXPECT_EQ(e.input_rows, 10);
  // Without the origin field only the codes count: the one-layer row and the out-of-range one.
  EXPECT_EQ(e.invalid_rows, 2);
  EXPECT_EQ(e.evaluated_items, 8);
  ASSERT_EQ(e.views.size(), 1u);
  EXPECT_EQ(e.views[0].view, "single");
  EXPECT_EQ(e.views[0].result.metrics.total, 8);
  EXPECT_EQ(e.views[0].result.metrics.max_collision, 4);  // (0,0) three times plus the null-origin row

  auto summary = parquet::FileReader::open(dir.file("summary/part-0.parquet"));
  const parquet::Table s = summary->read();
  ASSERT_EQ(s.num_rows, 1);
  std::vector<std::string> names;
  for (const auto& c : s.columns) names.push_back(c.name());
  EXPECT_EQ(names, (std::vector<std::string>{"source", "view", "sid_field", "codebook", "input_rows", "evaluated_items",
                                             "invalid_pair_rows", "total", "unique_sid", "no_collision_rate",
                                             "uniquely_identified_item_rate", "max_collision", "gini", "entropy",
                                             "max_entropy", "entropy_ratio"}));
  EXPECT_EQ(s.columns[0].bytes(0), o.input_path);
  EXPECT_EQ(s.columns[2].bytes(0), "codes");
  EXPECT_EQ(s.columns[3].bytes(0), "4,3");
  EXPECT_EQ(s.columns[6].data<int64_t>()[0], 2);
  EXPECT_EQ(s.columns[8].data<int64_t>()[0], 4);
  EXPECT_DOUBLE_EQ(s.columns[9].data<double>()[0], 0.5);  // 4 buckets / 8 items

  auto layers = parquet::FileReader::open(dir.file("layers/part-0.parquet"));
  const parquet::Table l = layers->read();
  ASSERT_EQ(l.num_rows, 2);
  EXPECT_EQ(l.columns[7].name(), "layer");
  EXPECT_EQ(l.columns[10].data<int64_t>()[1], 1);  // layer 1 never uses code 1
}

TEST(SidQualityJob, OriginAndCodesGiveBeforeAfterDelta) {
  data::testing::TempDir dir;
  SidQualityOptions o = options(write_table(dir.file("items.parquet"), rows()));
  o.origin_codes_field = "origin";
  o.log_top_sids = 2;
  const SidQualityEvaluation e = run_evaluate_sid_quality(o);
  EXPECT_EQ(e.invalid_rows, 3);
  ASSERT_EQ(e.views.size(), 3u);
  EXPECT_EQ(e.views[0].view, "before");
  EXPECT_EQ(e.views[1].view, "after");
  EXPECT_EQ(e.views[2].view, "delta");
  EXPECT_EQ(e.views[2].sid_field, "origin->codes");
  // Before: (0,0) (0,1) (0,2) (1,0) (1,1) (1,2) ×2; after: the seven items of sid_quality_test.cc.
  EXPECT_EQ(e.views[0].result.metrics.unique_sid, 6);
  EXPECT_EQ(e.views[1].result.metrics.unique_sid, 4);
  EXPECT_EQ(e.views[2].result.metrics.unique_sid, -2);
  EXPECT_DOUBLE_EQ(e.views[1].result.metrics.gini, 0.25);
  const double h = std::log(7.0) - (3 * std::log(3.0) + 2 * std::log(2.0)) / 7;
  EXPECT_NEAR(e.views[1].result.metrics.entropy, h, 1e-15);
  EXPECT_EQ(*e.views[1].result.top_sids, (std::vector<std::pair<std::string, int64_t>>{{"0,0", 3}, {"1,2", 2}}));
  EXPECT_FALSE(e.views[2].result.top_sids.has_value());
}

TEST(SidQualityJob, CsvInAndOut) {
  data::testing::TempDir dir;
  SidQualityOptions o = options(dir.write("items.csv", "item_id,codes\n1,\"0,0\"\n2,\"1,2\"\n3,\"0,0\"\n4,\"3,x\"\n"));
  o.summary_output = dir.file("summary");
  const SidQualityEvaluation e = run_evaluate_sid_quality(o);
  EXPECT_EQ(e.invalid_rows, 1);
  EXPECT_EQ(e.views[0].result.metrics.unique_sid, 2);
  const std::string csv = data::testing::read_file(dir.file("summary/part-0.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "source,view,sid_field,codebook,input_rows,evaluated_items,invalid_pair_rows,total,unique_sid,"
            "no_collision_rate,uniquely_identified_item_rate,max_collision,gini,entropy,max_entropy,entropy_ratio");
  EXPECT_NE(csv.find(",single,codes,\"4,3\",4,3,1,3,2,"), std::string::npos) << csv;
}

TEST(SidQualityJob, Errors) {
  data::testing::TempDir dir;
  const std::string input = write_table(dir.file("items.parquet"), rows());
  SidQualityOptions o = options(input);
  o.invalid_row_policy = "error";
  // The first invalid row of the codes is row 8 (one layer); batches of 4 rows: batch 2.
  EXPECT_EQ(data::testing::error_of<DataError>([&] { run_evaluate_sid_quality(o); }),
            input +
                " row 8: field 'codes': does not hold 2 integer codes (null, a null code, another count or a "
                "non-integer); batch 2 holds 2 malformed or out-of-range SID rows (--invalid_row_policy drop skips "
                "them)");
  o.codebook = {3, 3};
  EXPECT_NE(data::testing::error_of<DataError>([&] { run_evaluate_sid_quality(o); })
                .find("row 3: field 'codes': code 3 of layer 0 is outside its codebook [0, 3)"),
            std::string::npos);

  o = options(input);
  o.codes_field = "sid";
  EXPECT_EQ(data::testing::error_of<UsageError>([&] { run_evaluate_sid_quality(o); }),
            "selected SID fields ['sid'] not found in input '" + input + "' (its columns: origin, codes)");
  o = options(input);
  o.origin_codes_field = "codes";
  EXPECT_THROW(run_evaluate_sid_quality(o), UsageError);
  o = options(input);
  o.summary_output = dir.path();
  EXPECT_NE(data::testing::error_of<UsageError>([&] { run_evaluate_sid_quality(o); }).find("path conflict: "),
            std::string::npos);
  o = options(input);
  o.invalid_row_policy = "skip";
  EXPECT_THROW(run_evaluate_sid_quality(o), UsageError);
  o = options(input);
  o.writer_type = "OdpsWriter";
  EXPECT_THROW(run_evaluate_sid_quality(o), NotSupportedError);

  // Nothing valid at all.
  o = options(write_table(dir.file("bad.parquet"), {{Codes{{0, 0}}, Codes{{9, 9}}}}));
  EXPECT_NE(data::testing::error_of<DataError>([&] { run_evaluate_sid_quality(o); }).find("no valid rows"),
            std::string::npos);

  EXPECT_EQ(parse_sid_codebook("256, 256,256"), (std::vector<int64_t>{256, 256, 256}));
  EXPECT_THROW(parse_sid_codebook("256,,256"), UsageError);
  EXPECT_THROW(parse_sid_codebook("256,0"), UsageError);
  EXPECT_THROW(parse_sid_codebook("a"), UsageError);
}

}  // namespace sid_quality_job_test
}  // namespace tzrec::retrieval
