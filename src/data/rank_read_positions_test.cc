// Resuming the read positions of a multi-rank run on the same and on other world sizes: real
// loaders (make_dataset_sources + ParallelLoader) over Parquet and CSV files, every row read
// exactly once across the interruption, the same world size continuing batch for batch.
#include "data/rank_read_positions.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "base/error.h"
#include "data/dataset_sources.h"
#include "data/parallel_loader.h"
#include "data/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace rank_read_positions_test {

using testing::error_of;
using testing::ids_of;
using testing::take;

using testing::TempDir;
using Batches = std::vector<std::vector<int64_t>>;
using Loader = ParallelLoader<std::vector<int64_t>>;
constexpr int64_t kBatch = 4;

// Files of 23, 14, 40, 1, 9, 0, 17 rows with column "id" = global row number, as Parquet or as CSV.
struct Dataset {
  TempDir dir;
  std::vector<std::string> paths;
  int64_t total = 0;
  protos::DataConfig config;

  Dataset(bool parquet_files, int num_workers) {
    const int64_t sizes[] = {23, 14, 40, 1, 9, 0, 17};
    for (int f = 0; f < 7; ++f) {
      const std::string name = "part-" + std::to_string(f) + (parquet_files ? ".parquet" : ".csv");
      if (parquet_files) {
        parquet::WriterOptions o;
        o.row_group_rows = 6;
        paths.push_back(testing::write_id_parquet(dir.file(name), total, sizes[f], o));
      } else {
        std::string text = "id\n";
        for (int64_t i = 0; i < sizes[f]; ++i) text += std::to_string(total + i) + "\n";
        paths.push_back(dir.write(name, text));
      }
      total += sizes[f];
    }
    config.set_dataset_type(parquet_files ? protos::ParquetDataset : protos::CsvDataset);
    config.set_num_workers(num_workers);
    config.set_with_header(true);
  }

  std::string input() const {
    std::string s;
    for (const auto& p : paths) s += (s.empty() ? "" : ",") + p;
    return s;
  }
};

// Rank `rank` of `world` ranks, fresh or resumed from `resume` (through JSON, as a checkpoint).
// `start` (optional) gets the position the loader starts from.
std::unique_ptr<Loader> make_loader(const Dataset& d, int rank, int world, const ReadPosition* resume,
                                    ReadPosition* start = nullptr) {
  std::optional<ReadPosition> saved;
  if (resume) saved = ReadPosition::from_json(nlohmann::json::parse(resume->to_json().dump()));
  BatchOptions batch;
  batch.batch_size = kBatch;
  DatasetSources s = make_dataset_sources(d.config, d.input(), {"id"}, batch, saved ? &*saved : nullptr, rank,
                                          world, false);
  if (start) *start = s.start;
  return std::make_unique<Loader>(std::move(s.sources), ids_of, s.start, 2);
}

void add_ids(const Batches& b, std::multiset<int64_t>* seen) {
  for (const auto& batch : b) seen->insert(batch.begin(), batch.end());
}

void expect_each_row_once(const std::multiset<int64_t>& seen, int64_t total, const std::string& what) {
  EXPECT_EQ(seen.size(), static_cast<size_t>(total)) << what;
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(total)) << what;
  if (!seen.empty()) {
    EXPECT_EQ(*seen.begin(), 0) << what;
    EXPECT_EQ(*seen.rbegin(), total - 1) << what;
  }
}

// One stage of a run: `positions` (empty: fresh) resumed on `world` ranks, each taking up to
// `batches` batches (SIZE_MAX: to the end); returns the positions the ranks would save.
std::vector<ReadPosition> run_stage(const Dataset& d, const std::vector<ReadPosition>& positions, int world,
                                    size_t batches, std::multiset<int64_t>* seen) {
  std::vector<ReadPosition> saved;
  for (int r = 0; r < world; ++r) {
    std::optional<ReadPosition> resume;
    if (!positions.empty()) resume = position_for_rank(positions, r, world);
    ReadPosition start;
    auto loader = make_loader(d, r, world, resume ? &*resume : nullptr, &start);
    std::optional<ReadPosition> last;
    add_ids(take(*loader, batches, &last), seen);
    saved.push_back(last ? *last : start);  // a rank that took nothing saves where it started
  }
  return saved;
}

class RankPositions : public ::testing::TestWithParam<bool> {};  // true: Parquet, false: CSV

TEST_P(RankPositions, SameWorldSizeContinuesEachRankBatchForBatch) {
  for (int workers : {1, 2}) {
    Dataset d(GetParam(), workers);
    const int world = 2;
    for (int r = 0; r < world; ++r) {
      const Batches all = take(*make_loader(d, r, world, nullptr), SIZE_MAX);
      ASSERT_GE(all.size(), 3u);
      // Every rank saves after 2 batches; rank r continues with exactly its third one.
      std::vector<ReadPosition> saved;
      for (int q = 0; q < world; ++q) {
        std::optional<ReadPosition> last;
        take(*make_loader(d, q, world, nullptr), 2, &last);
        saved.push_back(*last);
      }
      const ReadPosition p = position_for_rank(saved, r, world);
      EXPECT_EQ(p, saved[static_cast<size_t>(r)]);
      const Batches rest = take(*make_loader(d, r, world, &p), SIZE_MAX);
      EXPECT_EQ(rest, Batches(all.begin() + 2, all.end())) << "rank " << r << ", " << workers << " workers";
    }
  }
}

TEST_P(RankPositions, OtherWorldSizesReadEveryRemainingRowOnce) {
  for (int workers : {1, 2, 3}) {
    for (int from : {1, 2, 3, 4}) {
      for (int to : {1, 2, 3, 4}) {
        if (from == to) continue;
        for (size_t k : {size_t{0}, size_t{1}, size_t{3}}) {
          Dataset d(GetParam(), workers);
          std::multiset<int64_t> seen;
          const auto saved = run_stage(d, {}, from, k, &seen);
          run_stage(d, saved, to, SIZE_MAX, &seen);
          expect_each_row_once(seen, d.total,
                               fmt::format("{} workers, {} -> {} ranks after {} batches", workers, from, to, k));
        }
      }
    }
  }
}

TEST_P(RankPositions, RoundTripOneTwoFourOne) {
  for (int workers : {1, 2}) {
    Dataset d(GetParam(), workers);
    std::multiset<int64_t> seen;
    auto saved = run_stage(d, {}, 1, 2, &seen);
    saved = run_stage(d, saved, 2, 2, &seen);
    saved = run_stage(d, saved, 4, 1, &seen);
    saved = run_stage(d, saved, 4, 1, &seen);  // same world size in between
    EXPECT_LT(seen.size(), static_cast<size_t>(d.total));
    run_stage(d, saved, 1, SIZE_MAX, &seen);
    expect_each_row_once(seen, d.total, fmt::format("1 -> 2 -> 4 -> 4 -> 1, {} workers", workers));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, RankPositions, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? std::string("Parquet") : std::string("Csv"); });

TEST(RankPositions, PositionsThatDoNotBelongTogetherAreRejected) {
  const ReadPosition a = ReadPosition::start_row_ranges({"a", "b"}, {7, 4}, 2, 0, 2);
  const ReadPosition b = ReadPosition::start_row_ranges({"a", "b"}, {7, 4}, 2, 1, 2);
  const ReadPosition csv = ReadPosition::start({"a", "b"}, 2);
  EXPECT_NE(error_of<CheckpointError>([&] { position_for_rank({a, csv}, 0, 1); }).find("another input format"),
            std::string::npos);
  EXPECT_NE(error_of<CheckpointError>([&] { position_for_rank({a}, 0, 1); })
                .find("written by a run of 2 ranks, but the checkpoint holds 1"),
            std::string::npos);
  const ReadPosition other_rows = ReadPosition::start_row_ranges({"a", "b"}, {7, 5}, 2, 1, 2);
  EXPECT_NE(error_of<CheckpointError>([&] { position_for_rank({a, other_rows}, 0, 3); }).find("5 rows for 'b'"),
            std::string::npos);
  EXPECT_NE(error_of<CheckpointError>([&] { position_for_rank({}, 0, 1); }).find("no rank's position"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { position_for_rank({a, b}, 2, 2); }).find("rank 2 is not in [0, 2)"),
            std::string::npos);
  // A rank's position resumed on another world size without merging is refused.
  EXPECT_NE(error_of<UsageError>([&] { a.for_workers(2, 0, 4); }).find("made for 2 rank(s), not 4"),
            std::string::npos);
}

}  // namespace rank_read_positions_test
}  // namespace tzrec::data
