// data_config.shuffle (shuffle_batch_source.h): batches in a random order within windows, and a
// resumed loader continuing batch for batch.
#include "data/shuffle_batch_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "data/dataset_sources.h"
#include "data/parallel_loader.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace shuffle_batch_source_test {

using testing::TempDir;

// `batches` batches of 2 rows each of file "f.csv"; row i has id i (lines i + 2).
class NumberedSource : public BatchSource {
 public:
  explicit NumberedSource(int batches) : batches_(batches) {}
  std::optional<SourcedBatch> next() override {
    if (next_ >= batches_) return std::nullopt;
    SourcedBatch b;
    b.records.columns.resize(1);
    b.records.columns[0].name = "id";
    b.records.files = {"f.csv"};
    b.file_ids = {0};
    for (int r = 0; r < 2; ++r) {
      const int id = next_ * 2 + r;
      b.records.columns[0].append(std::to_string(id));
      b.records.origins.push_back(RowOrigin{0, id + 2});
    }
    ++next_;
    return b;
  }

 private:
  int batches_;
  int next_ = 0;
};

int batch_number(const SourcedBatch& b) { return std::stoi(std::string(b.records.columns[0].cell(0))) / 2; }

std::vector<int> order(int batches, int64_t window, uint64_t seed) {
  ShuffleBatchSource s(std::make_unique<NumberedSource>(batches), ShuffleOptions{window, seed, 0});
  std::vector<int> out;
  while (auto b = s.next()) out.push_back(batch_number(*b));
  return out;
}

TEST(ShuffleBatchSource, EachWindowIsAPermutationOfItsBatches) {
  const std::vector<int> o = order(10, 4, 7);
  ASSERT_EQ(o.size(), 10u);
  for (size_t w = 0; w < 3; ++w) {  // windows [0, 4), [4, 8), [8, 10)
    const size_t lo = w * 4, hi = std::min<size_t>(lo + 4, 10);
    std::vector<int> got(o.begin() + static_cast<long>(lo), o.begin() + static_cast<long>(hi));
    std::sort(got.begin(), got.end());
    for (size_t i = lo; i < hi; ++i) EXPECT_EQ(got[i - lo], static_cast<int>(i)) << "window " << w;
  }
  // The same seed draws the same order; some other seed another one; no window: in order.
  EXPECT_EQ(order(10, 4, 7), o);
  bool other = false;
  for (uint64_t seed = 8; seed < 16 && !other; ++seed) other = order(10, 4, seed) != o;
  EXPECT_TRUE(other);
  std::vector<int> identity(10);
  for (int i = 0; i < 10; ++i) identity[static_cast<size_t>(i)] = i;
  EXPECT_EQ(order(10, 1, 7), identity);
  EXPECT_NE(order(10, 10, 7), identity);
}

// What each batch tells the read position: nothing consumed until the window's last batch, which
// completes the window's rows; the batches of the window out so far.
TEST(ShuffleBatchSource, ThePositionAdvancesByWholeWindows) {
  ShuffleBatchSource s(std::make_unique<NumberedSource>(5), ShuffleOptions{3, 1, 0});
  std::vector<int64_t> delivered;
  std::vector<int64_t> completed;
  while (auto b = s.next()) {
    ASSERT_TRUE(b->completes.has_value());
    int64_t rows = 0;
    for (const auto& [file, n] : *b->completes) {
      EXPECT_EQ(file, 0);
      rows += n;
    }
    completed.push_back(rows);
    delivered.push_back(b->window_delivered);
  }
  EXPECT_EQ(delivered, (std::vector<int64_t>{1, 2, 0, 1, 0}));
  EXPECT_EQ(completed, (std::vector<int64_t>{0, 0, 6, 0, 4}));
  // Resumed after two batches of the first window: its third batch, then the rest as before.
  const std::vector<int> all = order(5, 3, 1);
  ShuffleBatchSource resumed(std::make_unique<NumberedSource>(5), ShuffleOptions{3, 1, 2});
  std::vector<int> rest;
  while (auto b = resumed.next()) rest.push_back(batch_number(*b));
  EXPECT_EQ(rest, std::vector<int>(all.begin() + 2, all.end()));
  ShuffleBatchSource bad(std::make_unique<NumberedSource>(2), ShuffleOptions{3, 1, 2});
  EXPECT_NE(testing::error_of<DataError>([&] { bad.next(); }).find("the input changed since the checkpoint"),
            std::string::npos);
}

// Through make_dataset_sources and the parallel loader with 2 workers (Parquet: row groups of 5;
// CSV: three files): every row once; a loader resumed from the position after 5 batches (inside
// windows of 3) through JSON gives exactly the batches the uninterrupted run gave after them.
class ShuffledLoader : public ::testing::TestWithParam<bool> {};  // true: Parquet

TEST_P(ShuffledLoader, ResumesBatchForBatchInsideAWindow) {
  const bool use_parquet = GetParam();
  TempDir dir;
  constexpr int64_t kRows = 50;
  std::string input;
  if (use_parquet) {
    parquet::WriterOptions o;
    o.row_group_rows = 5;
    input = testing::write_id_parquet(dir.file("d.parquet"), 0, kRows, o);
  } else {
    for (int f = 0; f < 3; ++f) {
      std::string text = "id\n";
      for (int64_t i = f * 17; i < std::min<int64_t>((f + 1) * 17, kRows); ++i) text += std::to_string(i) + "\n";
      input += (input.empty() ? "" : ",") + dir.write("p" + std::to_string(f) + ".csv", text);
    }
  }
  protos::DataConfig dc;
  dc.set_dataset_type(use_parquet ? protos::ParquetDataset : protos::CsvDataset);
  dc.set_with_header(true);
  dc.set_num_workers(2);
  BatchOptions batch;
  batch.batch_size = 3;
  batch.shuffle_window = 3;
  batch.shuffle_seed = 11;
  using Batches = std::vector<std::vector<int64_t>>;
  auto run = [&](const ReadPosition* resume, size_t limit, std::optional<ReadPosition>* last) {
    DatasetSources s = make_dataset_sources(dc, input, {"id"}, batch, resume, 0, 1, false);
    ParallelLoader<std::vector<int64_t>> loader(std::move(s.sources), testing::ids_of, s.start, 2);
    return testing::take(loader, limit, last);
  };
  const Batches all = run(nullptr, SIZE_MAX, nullptr);
  std::multiset<int64_t> seen;
  for (const auto& b : all) seen.insert(b.begin(), b.end());
  ASSERT_EQ(seen.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(kRows));
  bool reordered = false;
  for (size_t i = 1; i < all.size(); ++i) reordered = reordered || all[i].front() < all[i - 1].front();
  EXPECT_TRUE(reordered);

  std::optional<ReadPosition> after;
  const Batches first = run(nullptr, 5, &after);
  ASSERT_TRUE(after.has_value());
  EXPECT_FALSE(after->worker_window.empty());  // inside a window of each worker
  const ReadPosition saved = ReadPosition::from_json(nlohmann::json::parse(after->to_json().dump()));
  EXPECT_EQ(saved, *after);
  EXPECT_EQ(first, Batches(all.begin(), all.begin() + 5));
  EXPECT_EQ(run(&saved, SIZE_MAX, nullptr), Batches(all.begin() + 5, all.end()));
}

INSTANTIATE_TEST_SUITE_P(Formats, ShuffledLoader, ::testing::Bool());

}  // namespace shuffle_batch_source_test
}  // namespace tzrec::data
