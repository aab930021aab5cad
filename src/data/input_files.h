// Input path expansion and file-to-worker assignment (no torch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tzrec::data {

// One file of a worker's share, with the number of leading rows to skip (resume).
struct FileSlice {
  std::string path;
  int32_t file_id = 0;    // index into the expanded input file list
  int64_t skip_rows = 0;  // rows already consumed before a resume
};

// Expands a comma-separated list of file paths and glob(3) patterns, in the order given (each
// glob's matches sorted by name, as glob(3) returns them). Empty items are ignored.
// Throws DataError naming the pattern when a plain path does not exist or a glob matches nothing,
// and when the whole list is empty.
std::vector<std::string> expand_input_path(const std::string& input_path);

// Loader workers actually used for `num_files` files: num_workers 0 means 1 (TorchEasyRec runs
// in-process then); more workers than files are reduced to one file each
// (docs/tzrec-compatibility.md §6.3: CsvDataset reduces num_workers to num_files // world_size).
// Throws DataError when there are fewer files than ranks.
int effective_num_workers(int num_workers, size_t num_files, int world_size = 1);

// Files of each of the `num_workers` workers of `rank`: global worker g = rank * num_workers + w
// reads files[g], files[g + total], ... with total = world_size * num_workers
// (docs/tzrec-compatibility.md §6.3).
// Returns file ids (indices into the input list) per worker.
std::vector<std::vector<int32_t>> assign_files_round_robin(size_t num_files, int num_workers,
                                                           int rank = 0, int world_size = 1);

}  // namespace tzrec::data
