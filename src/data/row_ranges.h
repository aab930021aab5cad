// Row-range sharding of Parquet inputs (no torch).
//
// The global row space is all rows of all input files concatenated in input order. Each loader
// worker reads a list of half-open global row ranges; a fresh plan gives global worker
// g = rank * num_workers + w (of total = world_size * num_workers) the g-th of `total` contiguous
// chunks whose sizes differ by at most one row, the first `total_rows % total` chunks one row
// larger (TorchEasyRec's calc_slice_position, docs/tzrec-compatibility.md §6.3).
#pragma once

#include <cstdint>
#include <vector>

namespace tzrec::data {

// Global rows [begin, end).
struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
  bool operator==(const RowRange& o) const { return begin == o.begin && end == o.end; }
  bool operator!=(const RowRange& o) const { return !(*this == o); }
};

// n >= 1 contiguous chunk sizes summing to total >= 0: total / n each, the first total % n get
// one more.
std::vector<int64_t> split_sizes(int64_t total, int n);

// Rows of all ranges.
int64_t total_rows(const std::vector<RowRange>& ranges);

// The concatenation of `rows` cut into n consecutive chunks of split_sizes(total, n) rows; a
// chunk may span several input ranges. Empty input ranges are ignored; a chunk of 0 rows is an
// empty list. Returns n lists.
std::vector<std::vector<RowRange>> split_ranges(const std::vector<RowRange>& rows, int n);

// `ranges` without their first `rows` rows (rows <= total_rows(ranges)); empty ranges dropped.
std::vector<RowRange> drop_prefix(const std::vector<RowRange>& ranges, int64_t rows);

// The fresh ranges of the num_workers workers of `rank` over [0, total_rows): worker w gets
// split_ranges({[0, total_rows)}, world_size * num_workers)[rank * num_workers + w].
std::vector<std::vector<RowRange>> plan_row_ranges(int64_t total_rows, int num_workers, int rank = 0,
                                                   int world_size = 1);

}  // namespace tzrec::data
