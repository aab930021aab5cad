#include "data/parallel_loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>

#include "base/error.h"
#include "data/csv_reader.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace parallel_loader_test {

using testing::TempDir;

// 5 files of different lengths (7, 0, 12, 3, 9 rows), header "id,v"; id = global row number.
struct Dataset {
  TempDir dir;
  std::vector<std::string> files;
  int64_t total = 0;
  Dataset() {
    const int sizes[] = {7, 0, 12, 3, 9};
    for (int f = 0; f < 5; ++f) {
      std::string text = "id,v\n";
      for (int i = 0; i < sizes[f]; ++i) text += std::to_string(total++) + ",x\n";
      files.push_back(dir.write("part-" + std::to_string(f) + ".csv", text));
    }
  }
};

using Loader = ParallelLoader<std::vector<int64_t>>;

std::unique_ptr<Loader> make_loader(const Dataset& d, int num_workers, int64_t batch_size,
                                    const ReadPosition* resume, Loader::Transform transform = {}) {
  const int n = effective_num_workers(num_workers, d.files.size());
  auto plan = resume ? resume->plan(d.files, n) : plan_fresh(d.files, n);
  std::vector<std::unique_ptr<BatchSource>> sources;
  CsvOptions o;
  o.with_header = true;
  for (auto& slices : plan) {
    sources.push_back(std::make_unique<CsvBatchReader>(o, std::vector<std::string>{"id"}, slices,
                                                       batch_size, false));
  }
  if (!transform) {
    transform = [](const RecordBatch& b) {
      std::vector<int64_t> ids;
      for (int64_t r = 0; r < b.num_rows(); ++r)
        ids.push_back(std::stoll(std::string(b.columns[0].cell(r))));
      return ids;
    };
  }
  ReadPosition start = resume ? resume->for_workers(n) : ReadPosition::start(d.files, n);
  return std::make_unique<Loader>(std::move(sources), transform, start, 2);
}

std::vector<std::vector<int64_t>> drain(Loader& l, std::vector<ReadPosition>* positions = nullptr) {
  std::vector<std::vector<int64_t>> out;
  while (auto item = l.next()) {
    out.push_back(item->value);
    if (positions) positions->push_back(item->position);
  }
  return out;
}

TEST(ParallelLoader, EveryRowOnceInDeterministicRoundRobinOrder) {
  Dataset d;
  for (int workers = 1; workers <= 4; ++workers) {
    auto first = drain(*make_loader(d, workers, 4, nullptr));
    auto again = drain(*make_loader(d, workers, 4, nullptr));
    EXPECT_EQ(first, again) << workers << " workers";
    std::multiset<int64_t> seen;
    for (auto& b : first) seen.insert(b.begin(), b.end());
    EXPECT_EQ(seen.size(), static_cast<size_t>(d.total));
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
  }
  // 2 workers: worker 0 reads files 0,2,4 (ids 0..6, 7..18, 22..30), worker 1 files 1,3 (19..21).
  auto two = drain(*make_loader(d, 2, 4, nullptr));
  std::vector<std::vector<int64_t>> expected = {
      {0, 1, 2, 3},     {19, 20, 21},     {4, 5, 6, 7},     {8, 9, 10, 11},
      {12, 13, 14, 15}, {16, 17, 18, 22}, {23, 24, 25, 26}, {27, 28, 29, 30}};
  EXPECT_EQ(two, expected);
}

TEST(ParallelLoader, ResumeWithSameWorkersGivesExactlyTheRemainingBatches) {
  Dataset d;
  for (int workers = 1; workers <= 4; ++workers) {
    std::vector<ReadPosition> positions;
    auto all = drain(*make_loader(d, workers, 3, nullptr), &positions);
    ASSERT_GT(all.size(), 3u);
    for (size_t k = 0; k < all.size(); ++k) {
      // Round-trip the position through JSON as a checkpoint would.
      ReadPosition pos =
          ReadPosition::from_json(nlohmann::json::parse(positions[k].to_json().dump()));
      auto rest = drain(*make_loader(d, workers, 3, &pos));
      std::vector<std::vector<int64_t>> expected(all.begin() + static_cast<long>(k) + 1, all.end());
      EXPECT_EQ(rest, expected) << workers << " workers, resumed after batch " << k;
    }
    EXPECT_EQ(positions.back().total_rows(), d.total);
  }
}

TEST(ParallelLoader, ResumeWithOtherWorkerCountReadsRemainingRowsOnce) {
  Dataset d;
  std::vector<ReadPosition> positions;
  auto all = drain(*make_loader(d, 3, 4, nullptr), &positions);
  const size_t k = 3;
  std::multiset<int64_t> consumed;
  for (size_t i = 0; i <= k; ++i) consumed.insert(all[i].begin(), all[i].end());
  for (int workers : {1, 2, 4}) {
    auto rest = drain(*make_loader(d, workers, 4, &positions[k]));
    std::multiset<int64_t> seen = consumed;
    for (auto& b : rest) seen.insert(b.begin(), b.end());
    EXPECT_EQ(seen.size(), static_cast<size_t>(d.total)) << workers;
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
  }
  // Chained: 3 workers -> 2 workers for two batches -> back to 3 workers.
  std::vector<ReadPosition> mid;
  auto loader2 = make_loader(d, 2, 4, &positions[k]);
  std::multiset<int64_t> seen = consumed;
  for (int i = 0; i < 2; ++i) {
    auto item = loader2->next();
    ASSERT_TRUE(item);
    seen.insert(item->value.begin(), item->value.end());
    mid.push_back(item->position);
  }
  EXPECT_EQ(mid.back().total_rows(), static_cast<int64_t>(seen.size()));
  EXPECT_EQ(mid.back().worker_rows[0] + mid.back().worker_rows[1], mid.back().total_rows());
  for (auto& b : drain(*make_loader(d, 3, 4, &mid.back()))) seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(d.total));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
}

TEST(ParallelLoader, DestroyMidStreamDoesNotHang) {
  Dataset d;
  for (int workers = 1; workers <= 4; ++workers) {
    auto l = make_loader(d, workers, 1, nullptr);  // 31 tiny batches, queues fill up and block
    ASSERT_TRUE(l->next());
    l.reset();
    auto never_read = make_loader(d, workers, 1, nullptr);  // destroyed before any next()
  }
}

TEST(ParallelLoader, WorkerErrorSurfacesWithItsTypeInOrder) {
  Dataset d;
  struct CustomError : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  auto transform = [](const RecordBatch& b) {
    std::vector<int64_t> ids;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      const int64_t id = std::stoll(std::string(b.columns[0].cell(r)));
      if (id == 13) throw CustomError("bad row " + b.describe_row(r));
      ids.push_back(id);
    }
    return ids;
  };
  auto l = make_loader(d, 2, 4, nullptr, transform);
  // Worker 0 fails on its 4th batch (ids 12..15); the first 3 rounds arrive before the error.
  int delivered = 0;
  try {
    while (l->next()) ++delivered;
    FAIL() << "expected CustomError";
  } catch (const CustomError& e) {
    EXPECT_NE(std::string(e.what()).find("part-2.csv line 8"), std::string::npos) << e.what();
  }
  EXPECT_EQ(delivered, 4);               // {0..3}, {19..21}, {4..7}, {8..11}
  EXPECT_THROW(l->next(), CustomError);  // stays failed
}

TEST(ParallelLoader, ReaderDataErrorSurfaces) {
  TempDir dir;
  std::vector<std::string> files = {dir.write("a.csv", "id\n1\n2\n"),
                                    dir.write("b.csv", "id\n1,2\n")};
  std::vector<std::unique_ptr<BatchSource>> sources;
  CsvOptions o;
  o.with_header = true;
  for (auto& slices : plan_fresh(files, 2)) {
    sources.push_back(
        std::make_unique<CsvBatchReader>(o, std::vector<std::string>{"id"}, slices, 1, false));
  }
  ParallelLoader<int64_t> l(
      std::move(sources), [](const RecordBatch& b) { return b.num_rows(); },
      ReadPosition::start(files, 2));
  ASSERT_TRUE(l.next());
  try {
    l.next();
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("b.csv line 2: expected 1 columns, got 2"),
              std::string::npos);
  }
}

}  // namespace parallel_loader_test
}  // namespace tzrec::data
