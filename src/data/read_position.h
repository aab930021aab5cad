// Resumable read position of a multi-worker file loader (no torch). Two forms:
//
// kFilePrefix (CSV: each worker reads whole files, round-robin). Rows consumed are recorded per input file (each worker reads its files in order, so what was
// consumed of a file is always a prefix of it) and, derived from that, per worker; plus the
// worker the consumer reads next. A loader rebuilt from a position:
//   - with the same number of workers continues with exactly the next batch, in the same order;
//   - with a different number of workers still reads every remaining row exactly once (files are
//     re-assigned round-robin and each skips its consumed prefix) and starts at worker 0, but
//     batch boundaries and order then differ from the uninterrupted run.
// The input file list must be the same (same files, same order) — checked on resume.
//
// JSON form ("format" absent means "csv"):
//   {"num_workers": 2, "next_worker": 1, "worker_rows": [40, 32],
//    "files": [{"path": "a.csv", "rows": 40}, {"path": "b.csv", "rows": 32}]}
//
// kRowRanges (Parquet: each worker reads global row ranges, row_ranges.h). files[i].rows is the
// file's total row count (to detect changed inputs on resume), worker_ranges[w] the ranges
// worker w was given and worker_rows[w] how many of their rows it consumed (a prefix). A loader
// rebuilt with the same number of workers continues with exactly the next batch; with another
// number the remaining rows (each worker's ranges minus its consumed prefix, in worker order)
// are re-split over the new workers, each read exactly once. A position written by one rank of
// a multi-rank run covers that rank's rows only; the positions of all ranks are combined for a
// resumed run by position_for_rank (rank_read_positions.h).
//   {"format": "parquet", "num_workers": 2, "next_worker": 0, "worker_rows": [10, 8],
//    "worker_ranges": [[[0, 36]], [[36, 72]]],
//    "files": [{"path": "a.parquet", "rows": 40}, {"path": "b.parquet", "rows": 32}]}
// A position written by one rank of a multi-rank run also has "world_size" (> 1).
//
// Shuffled training (shuffle_batch_source.h) adds "worker_window": [k0, k1, ...] to either file
// form while some worker is inside a shuffle window: worker_rows count whole windows, k_w the
// batches of worker w's current window already delivered. A loader with the same workers reads
// those windows again and skips them; one with other workers re-splits the rows as above and
// reads them whole again.
//
// kStream (KafkaDataset): per partition of the topic that was read from, the offset of the next
// message to read and how many rows of that message were already consumed (a message whose rows
// straddle two batches). A partition is read by one worker of one rank, so these positions are
// global: a loader rebuilt with any number of workers or ranks starts each of its partitions
// there, and no message is read twice or skipped. worker_rows count the rows each worker
// delivered; with the same workers and ranks the consumer also continues at next_worker.
//   {"format": "kafka", "topic": "events", "num_workers": 2, "next_worker": 1,
//    "worker_rows": [512, 512], "partitions": [{"partition": 0, "offset": 17, "rows": 3}]}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/input_files.h"
#include "data/row_ranges.h"

namespace tzrec::data {

struct FilePosition {
  std::string path;
  int64_t rows = 0;  // rows of this file already consumed (a prefix)
  bool operator==(const FilePosition& o) const { return path == o.path && rows == o.rows; }
};

// kStream: where the next row of one partition is.
struct PartitionPosition {
  int32_t partition = 0;
  int64_t offset = 0;  // the message the next row is in
  int64_t rows = 0;    // rows of that message already consumed
  bool operator==(const PartitionPosition& o) const {
    return partition == o.partition && offset == o.offset && rows == o.rows;
  }
};

enum class PositionKind { kFilePrefix, kRowRanges, kStream };

struct ReadPosition {
  PositionKind kind = PositionKind::kFilePrefix;
  int32_t num_workers = 0;           // workers of the loader that wrote it
  int32_t next_worker = 0;           // worker the consumer reads next
  std::vector<int64_t> worker_rows;  // rows consumed per worker
  std::vector<FilePosition> files;   // in input-file order
  // kRowRanges only: the ranges of each worker, and the world size of the run (1: one rank).
  std::vector<std::vector<RowRange>> worker_ranges;
  int32_t world_size = 1;
  // kStream only: the topic and its partitions' positions, sorted by partition.
  std::string topic;
  std::vector<PartitionPosition> partitions;
  // data_config.shuffle (shuffle_batch_source.h): per worker, the batches of its current shuffle
  // window delivered beyond worker_rows; empty when none is pending. JSON "worker_window", only
  // when some entry is not 0.
  std::vector<int64_t> worker_window;

  // Nothing consumed yet.
  static ReadPosition start(const std::vector<std::string>& files, int num_workers);
  // kRowRanges, nothing consumed: the fresh split of all rows of `files` (file_rows[i] rows
  // each, in input order) for the num_workers workers of `rank` (plan_row_ranges).
  static ReadPosition start_row_ranges(const std::vector<std::string>& files, const std::vector<int64_t>& file_rows,
                                       int num_workers, int rank = 0, int world_size = 1);

  // kStream, nothing consumed.
  static ReadPosition start_stream(const std::string& topic, int num_workers, int world_size = 1);

  // Records that `worker` delivered a batch with these (file id, rows) counts; kStream: the
  // batch's rows are counted as one "file" and `marks` are where its partitions now stand.
  void advance(int worker, const std::vector<std::pair<int32_t, int64_t>>& file_rows,
               const std::vector<PartitionPosition>& marks = {});

  // Records that `worker` has `delivered` batches of its shuffle window out (0: none pending).
  void set_window(int worker, int64_t delivered);

  // kStream: the position of `partition`, nullptr when nothing of it was consumed.
  const PartitionPosition* partition_position(int32_t partition) const;

  // Rows consumed (kRowRanges with world_size > 1: by this rank's workers).
  int64_t total_rows() const;

  // The same consumed rows seen by a loader with `num_workers` workers: when that differs from
  // this->num_workers, next_worker restarts at 0 and worker_rows are recounted for the new
  // round-robin file assignment (kFilePrefix) or the remaining rows are re-split over the new
  // workers with worker_rows 0 (kRowRanges). A loader resumed from p starts from
  // p.for_workers(n). kRowRanges: only this rank's rows are re-split; throws UsageError when
  // world_size differs from the position's (use position_for_rank first).
  ReadPosition for_workers(int num_workers, int rank = 0, int world_size = 1) const;

  // kRowRanges: each worker's ranges without its consumed prefix (the ranges its reader reads).
  std::vector<std::vector<RowRange>> remaining_ranges() const;

  // kRowRanges: throws DataError naming the file and both counts unless the input files and
  // their row counts are those the position was written for.
  void check_files(const std::vector<std::string>& paths, const std::vector<int64_t>& file_rows) const;

  // Per-worker file slices for a loader over `files` with `num_workers` workers (after
  // effective_num_workers), skipping consumed rows. Throws DataError when the position was
  // written for a different input file list. kFilePrefix only (UsageError otherwise).
  std::vector<std::vector<FileSlice>> plan(const std::vector<std::string>& files, int num_workers,
                                           int rank = 0, int world_size = 1) const;

  nlohmann::json to_json() const;
  // Throws CheckpointError naming the bad field when the JSON is not a valid position.
  static ReadPosition from_json(const nlohmann::json& j);

  bool operator==(const ReadPosition& o) const {
    return kind == o.kind && num_workers == o.num_workers && next_worker == o.next_worker &&
           worker_rows == o.worker_rows && files == o.files && worker_ranges == o.worker_ranges &&
           world_size == o.world_size && topic == o.topic && partitions == o.partitions &&
           worker_window == o.worker_window;
  }
};

// Worker slices without a resume position.
std::vector<std::vector<FileSlice>> plan_fresh(const std::vector<std::string>& files,
                                               int num_workers, int rank = 0, int world_size = 1);

}  // namespace tzrec::data
