// Resumable read position of a multi-worker file loader (no torch).
//
// Rows consumed are recorded per input file (each worker reads its files in order, so what was
// consumed of a file is always a prefix of it) and, derived from that, per worker; plus the
// worker the consumer reads next. A loader rebuilt from a position:
//   - with the same number of workers continues with exactly the next batch, in the same order;
//   - with a different number of workers still reads every remaining row exactly once (files are
//     re-assigned round-robin and each skips its consumed prefix) and starts at worker 0, but
//     batch boundaries and order then differ from the uninterrupted run.
// The input file list must be the same (same files, same order) — checked on resume.
//
// JSON form:
//   {"num_workers": 2, "next_worker": 1, "worker_rows": [40, 32],
//    "files": [{"path": "a.csv", "rows": 40}, {"path": "b.csv", "rows": 32}]}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data/input_files.h"

namespace tzrec::data {

struct FilePosition {
  std::string path;
  int64_t rows = 0;  // rows of this file already consumed (a prefix)
  bool operator==(const FilePosition& o) const { return path == o.path && rows == o.rows; }
};

struct ReadPosition {
  int32_t num_workers = 0;           // workers of the loader that wrote it
  int32_t next_worker = 0;           // worker the consumer reads next
  std::vector<int64_t> worker_rows;  // rows consumed per worker
  std::vector<FilePosition> files;   // in input-file order

  // Nothing consumed yet.
  static ReadPosition start(const std::vector<std::string>& files, int num_workers);

  // Records that `worker` delivered a batch with these (file id, rows) counts.
  void advance(int worker, const std::vector<std::pair<int32_t, int64_t>>& file_rows);

  int64_t total_rows() const;

  // The same consumed rows seen by a loader with `num_workers` workers: when that differs from
  // this->num_workers, next_worker restarts at 0 and worker_rows are recounted for the new
  // round-robin file assignment. A loader resumed from p starts from p.for_workers(n).
  ReadPosition for_workers(int num_workers, int rank = 0, int world_size = 1) const;

  // Per-worker file slices for a loader over `files` with `num_workers` workers (after
  // effective_num_workers), skipping consumed rows. Throws DataError when the position was
  // written for a different input file list.
  std::vector<std::vector<FileSlice>> plan(const std::vector<std::string>& files, int num_workers,
                                           int rank = 0, int world_size = 1) const;

  nlohmann::json to_json() const;
  // Throws CheckpointError naming the bad field when the JSON is not a valid position.
  static ReadPosition from_json(const nlohmann::json& j);

  bool operator==(const ReadPosition& o) const {
    return num_workers == o.num_workers && next_worker == o.next_worker &&
           worker_rows == o.worker_rows && files == o.files;
  }
};

// Worker slices without a resume position.
std::vector<std::vector<FileSlice>> plan_fresh(const std::vector<std::string>& files,
                                               int num_workers, int rank = 0, int world_size = 1);

}  // namespace tzrec::data
