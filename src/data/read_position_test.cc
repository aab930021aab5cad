// The row-range (Parquet) form of ReadPosition: fresh plans, JSON, validation, and resuming a
// ParallelLoader of ParquetBatchReaders with the same and with other worker counts.
#include "data/read_position.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "base/error.h"
#include "data/parallel_loader.h"
#include "data/parquet_batch_reader.h"
#include "data/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace read_position_test {

using testing::error_of;

using testing::TempDir;
using Ranges = std::vector<RowRange>;

TEST(RowRangePosition, FreshPlanAdvanceAndJson) {
  ReadPosition p = ReadPosition::start_row_ranges({"a.parquet", "b.parquet"}, {7, 4}, 3);
  EXPECT_EQ(p.kind, PositionKind::kRowRanges);
  EXPECT_EQ(p.worker_ranges, (std::vector<Ranges>{{{0, 4}}, {{4, 8}}, {{8, 11}}}));
  p.advance(1, {{0, 3}});
  p.advance(1, {{0, 0}, {1, 1}});
  p.advance(0, {{0, 2}});
  p.next_worker = 2;
  EXPECT_EQ(p.worker_rows, (std::vector<int64_t>{2, 4, 0}));
  EXPECT_EQ(p.files[0].rows, 7);  // file row counts are not consumption
  EXPECT_EQ(p.total_rows(), 6);
  EXPECT_EQ(p.remaining_ranges(), (std::vector<Ranges>{{{2, 4}}, {}, {{8, 11}}}));
  const nlohmann::json j = p.to_json();
  EXPECT_EQ(j.dump(),
            R"({"files":[{"path":"a.parquet","rows":7},{"path":"b.parquet","rows":4}],"format":"parquet",)"
            R"("next_worker":2,"num_workers":3,"worker_ranges":[[[0,4]],[[4,8]],[[8,11]]],"worker_rows":[2,4,0]})");
  EXPECT_EQ(ReadPosition::from_json(nlohmann::json::parse(j.dump())), p);
  // The CSV form has no "format" and reads back as kFilePrefix; "format": "csv" is accepted.
  ReadPosition csv = ReadPosition::start({"a.csv"}, 1);
  EXPECT_FALSE(csv.to_json().contains("format"));
  auto cj = csv.to_json();
  cj["format"] = "csv";
  EXPECT_EQ(ReadPosition::from_json(cj), csv);
  EXPECT_FALSE(ReadPosition::from_json(j) == csv);
}

TEST(RowRangePosition, FromJsonNamesTheBadField) {
  ReadPosition p = ReadPosition::start_row_ranges({"a.parquet", "b.parquet"}, {7, 4}, 2);
  p.advance(0, {{0, 5}});
  const nlohmann::json j = p.to_json();
  auto check = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
    nlohmann::json bad = j;
    edit(bad);
    const std::string msg = error_of<CheckpointError>([&] { ReadPosition::from_json(bad); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  };
  check([](auto& b) { b["format"] = "orc"; }, "'format'");
  check([](auto& b) { b.erase("worker_ranges"); }, "missing field 'worker_ranges'");
  check([](auto& b) { b["num_workers"] = 0; }, "'num_workers'");
  check([](auto& b) { b["next_worker"] = 2; }, "'next_worker'");
  check([](auto& b) { b["worker_ranges"][1][0] = {6, 12}; }, "worker_ranges[1][0]");
  check([](auto& b) { b["worker_ranges"][1][0] = {7, 5}; }, "worker_ranges[1][0]");
  check([](auto& b) { b["worker_ranges"][1][0] = {-1, 5}; }, "worker_ranges[1][0]");
  check([](auto& b) { b["worker_ranges"][1][0] = {5, 9}; }, "'worker_ranges' overlap");
  check([](auto& b) { b["worker_ranges"].push_back(nlohmann::json::array()); }, "'worker_ranges'");
  check([](auto& b) { b["worker_rows"][0] = 7; }, "worker_rows[0] must be an integer in [0, 6]");
  check([](auto& b) { b["worker_rows"][1] = -1; }, "worker_rows[1]");
  check([](auto& b) { b["files"][0]["rows"] = "7"; }, "files[0]");
  check([](auto& b) { b["worker_window"] = {1}; }, "'worker_window' must be an array with num_workers entries");
  check([](auto& b) { b["worker_window"] = {1, -2}; }, "'worker_window' entries must be non-negative integers");
}

// Shuffled training (shuffle_batch_source.h): the batches of each worker's current window, kept
// through JSON only while some are pending, and dropped when the workers change.
TEST(RowRangePosition, ShuffleWindows) {
  ReadPosition p = ReadPosition::start_row_ranges({"a.parquet"}, {12}, 2);
  p.set_window(1, 2);
  EXPECT_EQ(p.worker_window, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(p.to_json()["worker_window"], nlohmann::json({0, 2}));
  EXPECT_EQ(ReadPosition::from_json(nlohmann::json::parse(p.to_json().dump())), p);
  EXPECT_EQ(p.for_workers(2).worker_window, p.worker_window);
  EXPECT_TRUE(p.for_workers(3).worker_window.empty());
  p.set_window(1, 0);
  EXPECT_TRUE(p.worker_window.empty());
  EXPECT_FALSE(p.to_json().contains("worker_window"));
  ReadPosition csv = ReadPosition::start({"a.csv", "b.csv"}, 2);
  csv.set_window(0, 3);
  EXPECT_EQ(ReadPosition::from_json(nlohmann::json::parse(csv.to_json().dump())).worker_window,
            (std::vector<int64_t>{3, 0}));
}

TEST(RowRangePosition, ResplitAndChecks) {
  ReadPosition p = ReadPosition::start_row_ranges({"a", "b"}, {7, 4}, 3);
  p.advance(0, {{0, 3}});
  p.advance(2, {{1, 1}});
  p.next_worker = 1;
  EXPECT_EQ(p.for_workers(3), p);
  // Remaining: [3,4) [4,8) [9,11) = 7 rows over 2 workers: 4 + 3.
  ReadPosition q = p.for_workers(2);
  EXPECT_EQ(q.worker_ranges, (std::vector<Ranges>{{{3, 4}, {4, 7}}, {{7, 8}, {9, 11}}}));
  EXPECT_EQ(q.worker_rows, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(q.next_worker, 0);
  EXPECT_EQ(q.total_rows(), 4);
  EXPECT_EQ(p.total_rows(), 4);
  p.check_files({"a", "b"}, {7, 4});
  EXPECT_NE(error_of<DataError>([&] { p.check_files({"a", "b"}, {7, 5}); }).find("b has 5 rows but had 4"),
            std::string::npos);
  EXPECT_NE(error_of<DataError>([&] { p.check_files({"a", "c"}, {7, 4}); }).find("input file 1 is 'c'"),
            std::string::npos);
  EXPECT_NE(error_of<DataError>([&] { p.check_files({"a"}, {7}); }).find("written for 2 input files"),
            std::string::npos);
  // A rank's position of a multi-rank run re-splits only that rank's rows; another world size
  // needs position_for_rank (rank_read_positions_test.cc).
  ReadPosition r1 = ReadPosition::start_row_ranges({"a", "b"}, {7, 4}, 2, 1, 2);
  EXPECT_EQ(r1.worker_ranges, (std::vector<Ranges>{{{6, 9}}, {{9, 11}}}));
  EXPECT_EQ(ReadPosition::from_json(r1.to_json()), r1);
  r1.advance(0, {{0, 1}});
  const ReadPosition r1_three = r1.for_workers(3, 1, 2);
  EXPECT_EQ(r1_three.world_size, 2);
  EXPECT_EQ(r1_three.worker_ranges, (std::vector<Ranges>{{{7, 9}}, {{9, 10}}, {{10, 11}}}));
  EXPECT_NE(error_of<UsageError>([&] { r1.for_workers(2); }).find("made for 2 rank(s), not 1"), std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { p.for_workers(3, 0, 2); }).find("made for 1 rank(s), not 2"),
            std::string::npos);
}

// ---- resuming a loader -----------------------------------------------------------------------

// Files of 23, 0, 40 and 1 rows (row groups of 5, 3, 16, 1 rows); id = global row.
struct Files {
  TempDir dir;
  std::vector<std::string> paths;
  int64_t total = 0;
  Files() {
    const int64_t sizes[] = {23, 0, 40, 1};
    const int64_t groups[] = {5, 3, 16, 1};
    for (int f = 0; f < 4; ++f) {
      const std::string path = dir.path() + "/part-" + std::to_string(f) + ".parquet";
      parquet::WriterOptions o;
      o.row_group_rows = groups[f];
      paths.push_back(testing::write_id_parquet(path, total, sizes[f], o));
      total += sizes[f];
    }
  }
};

using Loader = ParallelLoader<std::vector<int64_t>>;
using Batches = std::vector<std::vector<int64_t>>;
constexpr int64_t kBatch = 5;

// A loader with `n` workers, fresh or resumed from `resume` (through JSON, as a checkpoint).
std::unique_ptr<Loader> make_loader(const Files& d, int n, const ReadPosition* resume,
                                    const std::vector<std::string>* paths = nullptr) {
  auto files = ParquetFiles::open(paths ? *paths : d.paths);
  ReadPosition start;
  if (resume) {
    const ReadPosition saved = ReadPosition::from_json(nlohmann::json::parse(resume->to_json().dump()));
    saved.check_files(files->paths(), files->file_rows());
    start = saved.for_workers(n);
  } else {
    start = ReadPosition::start_row_ranges(files->paths(), files->file_rows(), n);
  }
  std::vector<std::unique_ptr<BatchSource>> sources;
  for (const auto& ranges : start.remaining_ranges()) {
    sources.push_back(std::make_unique<ParquetBatchReader>(files, std::vector<std::string>{"id"}, ranges, kBatch,
                                                           false));
  }
  auto ids = [](const RecordBatch& b) {
    const auto& v = b.typed_columns.at(0).values;
    return std::vector<int64_t>(v.data<int64_t>(), v.data<int64_t>() + b.num_rows());
  };
  return std::make_unique<Loader>(std::move(sources), ids, start, 2);
}

Batches drain(Loader& l, std::vector<ReadPosition>* positions = nullptr, size_t limit = SIZE_MAX) {
  Batches out;
  while (out.size() < limit) {
    auto item = l.next();
    if (!item) break;
    out.push_back(item->value);
    if (positions) positions->push_back(item->position);
  }
  return out;
}

// Every id of [0, total) exactly once over all batches.
void expect_each_row_once(const std::vector<const Batches*>& parts, int64_t total, const std::string& what) {
  std::multiset<int64_t> seen;
  for (const Batches* p : parts) {
    for (const auto& b : *p) seen.insert(b.begin(), b.end());
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(total)) << what;
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(total)) << what;
  if (!seen.empty()) EXPECT_EQ(*seen.rbegin(), total - 1) << what;
}

TEST(RowRangePosition, ResumeWithSameWorkersContinuesBatchForBatch) {
  Files d;
  for (int n = 1; n <= 4; ++n) {
    std::vector<ReadPosition> positions;
    const Batches all = drain(*make_loader(d, n, nullptr), &positions);
    expect_each_row_once({&all}, d.total, "uninterrupted");
    EXPECT_EQ(positions.back().total_rows(), d.total);
    for (size_t k = 0; k < all.size(); ++k) {
      const Batches rest = drain(*make_loader(d, n, &positions[k]));
      EXPECT_EQ(rest, Batches(all.begin() + static_cast<long>(k) + 1, all.end())) << n << " workers, after " << k;
    }
  }
}

TEST(RowRangePosition, ResumeWithOtherWorkerCountsReadsRemainingRowsOnce) {
  Files d;
  for (int n = 1; n <= 5; ++n) {
    std::vector<ReadPosition> positions;
    const Batches all = drain(*make_loader(d, n, nullptr), &positions);
    for (size_t k : {size_t{0}, size_t{2}, all.size() / 2, all.size() - 1}) {
      const Batches before(all.begin(), all.begin() + static_cast<long>(k) + 1);
      for (int m = 1; m <= 5; ++m) {
        if (m == n) continue;
        std::vector<ReadPosition> mid;
        auto loader = make_loader(d, m, &positions[k]);
        const Batches part = drain(*loader, &mid, 3);
        const Batches rest = drain(*loader);
        const std::string what = std::to_string(n) + " -> " + std::to_string(m) + " after " + std::to_string(k);
        expect_each_row_once({&before, &part, &rest}, d.total, what);
        // The resumed loader's batches are full but for the last of each worker: at most m short.
        int short_batches = 0;
        for (const Batches* b : {&part, &rest}) {
          for (const auto& batch : *b) short_batches += static_cast<int64_t>(batch.size()) < kBatch;
        }
        EXPECT_LE(short_batches, m) << what;
        if (mid.empty()) continue;
        // A second resume of the resumed position with yet another count.
        const int m2 = m % 5 + 1;
        const Batches again = drain(*make_loader(d, m2, &mid.back()));
        expect_each_row_once({&before, &part, &again}, d.total, what + " -> " + std::to_string(m2));
        EXPECT_EQ(mid.back().total_rows(), [&] {
          int64_t n_rows = 0;
          for (const Batches* b : {&before, &part}) {
            for (const auto& batch : *b) n_rows += static_cast<int64_t>(batch.size());
          }
          return n_rows;
        }()) << what;
      }
    }
  }
}

TEST(RowRangePosition, ResumeWithChangedFilesIsADataError) {
  Files d;
  std::vector<ReadPosition> positions;
  drain(*make_loader(d, 2, nullptr), &positions, 2);
  ASSERT_EQ(positions.size(), 2u);
  std::vector<std::string> fewer(d.paths.begin(), d.paths.end() - 1);
  std::string msg = error_of<DataError>([&] { make_loader(d, 2, &positions[1], &fewer); });
  EXPECT_NE(msg.find("written for 4 input files but the input path now gives 3"), std::string::npos) << msg;
  // part-2 rewritten with 39 rows.
  testing::write_id_parquet(d.paths[2], 0, 39);
  msg = error_of<DataError>([&] { make_loader(d, 2, &positions[1]); });
  EXPECT_NE(msg.find(d.paths[2] + " has 39 rows but had 40"), std::string::npos) << msg;
}

}  // namespace read_position_test
}  // namespace tzrec::data
