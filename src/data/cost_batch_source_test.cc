#include "data/cost_batch_source.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "data/dataset_sources.h"
#include "data/parallel_loader.h"
#include "data/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace cost_batch_source_test {

using testing::error_of;
using testing::TempDir;

// Text rows (id, cost) of file "f.csv" (lines 2, 3, ...), handed out `inner` rows per batch.
class RowsSource : public BatchSource {
 public:
  RowsSource(std::vector<std::string> costs, int64_t inner) : costs_(std::move(costs)), inner_(inner) {}
  std::optional<SourcedBatch> next() override {
    if (next_ >= costs_.size()) return std::nullopt;
    SourcedBatch b;
    b.records.columns.resize(2);
    b.records.columns[0].name = "id";
    b.records.columns[1].name = "cost";
    b.records.files = {"f.csv"};
    b.file_ids = {0};
    for (int64_t i = 0; i < inner_ && next_ < costs_.size(); ++i, ++next_) {
      b.records.columns[0].append(std::to_string(next_));
      b.records.columns[1].append(costs_[next_]);
      b.records.origins.push_back(RowOrigin{0, static_cast<int64_t>(next_) + 2});
    }
    return b;
  }

 private:
  std::vector<std::string> costs_;
  int64_t inner_;
  size_t next_ = 0;
};

using Batches = std::vector<std::vector<int64_t>>;

Batches cut(const std::vector<std::string>& costs, int64_t inner, int64_t batch_size, double limit,
            bool drop_remainder = false) {
  CostBatchSource source(std::make_unique<RowsSource>(costs, inner),
                         CostBatchOptions{"cost", limit, batch_size, drop_remainder});
  Batches out;
  while (auto b = source.next()) {
    std::vector<int64_t> ids;
    for (int64_t r = 0; r < b->records.num_rows(); ++r) {
      ids.push_back(std::stoll(std::string(b->records.columns[0].cell(r))));
      EXPECT_EQ(b->records.describe_row(r), "f.csv line " + std::to_string(ids.back() + 2));
    }
    out.push_back(ids);
  }
  return out;
}

// Hand-computed: costs 3 4 | 2 5 1 | 1 6 | 2 under a limit of 8 (the next row would make 9 each
// time), with batch_size 4 never reached.
TEST(CostBatchSource, EachBatchIsTheLongestRunWithinTheLimit) {
  const std::vector<std::string> costs = {"3", "4", "2", "5", "1", "1", "6", "2"};
  const Batches expected = {{0, 1}, {2, 3, 4}, {5, 6}, {7}};
  // The cut depends on the rows only, not on how the inner source cut them.
  for (int64_t inner : {1, 3, 4, 8}) EXPECT_EQ(cut(costs, inner, 4, 8), expected) << "inner " << inner;
  // Floats, and a limit met exactly (3.5 + 4.5 = 8).
  EXPECT_EQ(cut({"3.5", "4.5", "0.25"}, 2, 4, 8), (Batches{{0, 1}, {2}}));
}

TEST(CostBatchSource, AtMostBatchSizeRows) {
  const std::vector<std::string> ones(10, "1");
  EXPECT_EQ(cut(ones, 3, 4, 100), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  // Zero costs are rows like any other.
  EXPECT_EQ(cut({"0", "0", "0"}, 2, 2, 1), (Batches{{0, 1}, {2}}));
}

// As TorchEasyRec's reader with drop_remainder: once fewer than batch_size rows are left, they go.
TEST(CostBatchSource, DropRemainderDropsTheRowsLeftOnceFewerThanBatchSize) {
  // 3 4 | 2 5 1 | then 1 6 2: three rows left, fewer than batch_size 4: dropped.
  EXPECT_EQ(cut({"3", "4", "2", "5", "1", "1", "6", "2"}, 4, 4, 8, true), (Batches{{0, 1}, {2, 3, 4}}));
  const std::vector<std::string> ones(10, "1");
  EXPECT_EQ(cut(ones, 3, 4, 100, true), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(CostBatchSource, BadCostsNameTheRow) {
  EXPECT_EQ(error_of<DataError>([] { cut({"1", "9"}, 2, 4, 8); }),
            "f.csv line 3: data_config.sample_cost_field 'cost' is 9, above data_config.batch_cost_size 8: no "
            "batch can hold the row; raise batch_cost_size");
  EXPECT_EQ(error_of<DataError>([] { cut({"1", "-1"}, 2, 4, 8); }),
            "f.csv line 3: data_config.sample_cost_field 'cost' is -1; a cost must be >= 0");
  EXPECT_EQ(error_of<DataError>([] { cut({""}, 2, 4, 8); }),
            "f.csv line 2: data_config.sample_cost_field 'cost' is missing (null); every row needs a cost");
  EXPECT_EQ(error_of<DataError>([] { cut({"2x"}, 2, 4, 8); }),
            "f.csv line 2: data_config.sample_cost_field 'cost' is '2x', not a number");
  EXPECT_EQ(error_of<DataError>([] { cut({"nan"}, 2, 4, 8); }),
            "f.csv line 2: data_config.sample_cost_field 'cost' is nan; a cost must be >= 0");
}

// Through make_dataset_sources and the parallel loader, on Parquet (int32 costs, row groups of 5)
// and CSV: rows 0..29 with cost id % 7, limit 12, batch_size 6. A loader resumed from the read
// position after two batches gives exactly the batches the uninterrupted run gave after them.
class CostBatches : public ::testing::TestWithParam<bool> {};  // true: Parquet

TEST_P(CostBatches, ResumedLoaderCutsTheSameBatches) {
  const bool use_parquet = GetParam();
  TempDir dir;
  constexpr int64_t kRows = 30;
  std::string path;
  if (use_parquet) {
    parquet::WriterOptions o;
    o.row_group_rows = 5;
    path = dir.file("d.parquet");
    parquet::FileWriter w(path,
                          {parquet::WriterField{"id", parquet::PhysicalType::kInt64, false},
                           parquet::WriterField{"c", parquet::PhysicalType::kInt32, false}},
                          o);
    parquet::ColumnBuilder id(w.schema().column(0));
    parquet::ColumnBuilder cost(w.schema().column(1));
    for (int64_t i = 0; i < kRows; ++i) {
      id.append(i);
      cost.append(static_cast<int32_t>(i % 7));
    }
    parquet::Table t;
    t.num_rows = kRows;
    t.columns.push_back(id.finish());
    t.columns.push_back(cost.finish());
    w.write(std::move(t));
    w.close();
  } else {
    std::string text = "id,c\n";
    for (int64_t i = 0; i < kRows; ++i) text += std::to_string(i) + "," + std::to_string(i % 7) + "\n";
    path = dir.write("d.csv", text);
  }
  protos::DataConfig dc;
  dc.set_dataset_type(use_parquet ? protos::ParquetDataset : protos::CsvDataset);
  dc.set_with_header(true);
  dc.set_num_workers(1);
  dc.set_sample_cost_field("c");
  dc.set_batch_cost_size(12);
  BatchOptions batch;
  batch.batch_size = 6;
  auto run = [&](const ReadPosition* resume, size_t limit, std::optional<ReadPosition>* last) {
    DatasetSources s = make_dataset_sources(dc, path, {"id"}, batch, resume, 0, 1, false);
    ParallelLoader<std::vector<int64_t>> loader(std::move(s.sources), testing::ids_of, s.start, 2);
    return testing::take(loader, limit, last);
  };
  // Hand-computed from the costs 0 1 2 3 4 5 6 0 1 2 ... (id % 7) under 12, at most 6 rows:
  // 0+1+2+3+4 = 10 (+5 = 15); 5+6 = 11 (+0 = 11, +1 = 12, +2 = 14); ...
  const Batches all = run(nullptr, SIZE_MAX, nullptr);
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0], (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(all[1], (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_EQ(all[2], (std::vector<int64_t>{9, 10, 11}));
  std::vector<int64_t> flat;
  for (const auto& b : all) flat.insert(flat.end(), b.begin(), b.end());
  ASSERT_EQ(flat.size(), static_cast<size_t>(kRows));
  for (int64_t i = 0; i < kRows; ++i) EXPECT_EQ(flat[static_cast<size_t>(i)], i);

  std::optional<ReadPosition> after_two;
  const Batches first = run(nullptr, 2, &after_two);
  ASSERT_TRUE(after_two.has_value());
  const ReadPosition saved = ReadPosition::from_json(nlohmann::json::parse(after_two->to_json().dump()));
  const Batches rest = run(&saved, SIZE_MAX, nullptr);
  EXPECT_EQ(first, Batches(all.begin(), all.begin() + 2));
  EXPECT_EQ(rest, Batches(all.begin() + 2, all.end()));
}

INSTANTIATE_TEST_SUITE_P(Formats, CostBatches, ::testing::Bool());

}  // namespace cost_batch_source_test
}  // namespace tzrec::data
