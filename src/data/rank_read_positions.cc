#include "data/rank_read_positions.h"

#include <algorithm>

#include "base/error.h"

namespace tzrec::data {
namespace {

void check_consistent(const std::vector<ReadPosition>& saved) {
  if (saved.empty()) throw CheckpointError("data read positions: the checkpoint lists no rank's position");
  const ReadPosition& first = saved.front();
  const int saved_world = static_cast<int>(saved.size());
  for (int r = 0; r < saved_world; ++r) {
    const ReadPosition& p = saved[static_cast<size_t>(r)];
    auto mismatch = [&](const std::string& what) {
      return CheckpointError(fmt::format(
          "data read positions: rank {}'s position has {} but rank 0's has {}; the checkpoint's "
          "train positions do not belong to one run",
          r, what, r == 0 ? what : "another value"));
    };
    if (p.kind != first.kind) throw mismatch("another input format");
    if (p.topic != first.topic) throw mismatch(fmt::format("topic '{}'", p.topic));
    if (p.files.size() != first.files.size()) throw mismatch(fmt::format("{} input files", p.files.size()));
    for (size_t i = 0; i < p.files.size(); ++i) {
      if (p.files[i].path != first.files[i].path) throw mismatch(fmt::format("input file '{}'", p.files[i].path));
      if (p.kind == PositionKind::kRowRanges && p.files[i].rows != first.files[i].rows) {
        throw mismatch(fmt::format("{} rows for '{}'", p.files[i].rows, p.files[i].path));
      }
    }
    if (p.kind == PositionKind::kRowRanges && p.world_size != saved_world) {
      throw CheckpointError(fmt::format(
          "data read positions: rank {}'s Parquet position was written by a run of {} ranks, but the "
          "checkpoint holds {} positions",
          r, p.world_size, saved_world));
    }
  }
}

ReadPosition row_ranges_for_rank(const std::vector<ReadPosition>& saved, int rank, int world_size) {
  std::vector<RowRange> rest;
  for (const ReadPosition& p : saved) {
    for (const auto& ranges : p.remaining_ranges()) rest.insert(rest.end(), ranges.begin(), ranges.end());
  }
  ReadPosition out;
  out.kind = PositionKind::kRowRanges;
  out.files = saved.front().files;
  out.world_size = world_size;
  // This rank's chunk, spread over as many workers as each saved rank had.
  out.num_workers = saved.front().num_workers;
  out.next_worker = 0;
  out.worker_ranges = split_ranges(split_ranges(rest, world_size)[static_cast<size_t>(rank)], out.num_workers);
  out.worker_rows.assign(static_cast<size_t>(out.num_workers), 0);
  return out;
}

ReadPosition file_prefixes_for_rank(const std::vector<ReadPosition>& saved, int rank, int world_size) {
  ReadPosition out;
  out.kind = PositionKind::kFilePrefix;
  out.files = saved.front().files;
  for (size_t i = 1; i < saved.size(); ++i) {
    for (size_t f = 0; f < out.files.size(); ++f) {
      // Only a file's reader advances it; other ranks may hold an older copy of its count.
      out.files[f].rows = std::max(out.files[f].rows, saved[i].files[f].rows);
    }
  }
  out.num_workers = saved.front().num_workers;
  out.next_worker = 0;
  out.worker_rows.assign(static_cast<size_t>(out.num_workers), 0);
  const auto ids = assign_files_round_robin(out.files.size(), out.num_workers, rank, world_size);
  for (size_t w = 0; w < ids.size(); ++w) {
    for (int32_t id : ids[w]) out.worker_rows[w] += out.files[static_cast<size_t>(id)].rows;
  }
  return out;
}

// Every partition was read by one worker of one rank: its position is the one that rank saved.
ReadPosition stream_for_rank(const std::vector<ReadPosition>& saved, int rank, int world_size) {
  const bool same_run = static_cast<int>(saved.size()) == world_size;
  ReadPosition out = same_run ? saved[static_cast<size_t>(rank)]
                              : ReadPosition::start_stream(saved.front().topic,
                                                           saved.front().num_workers, world_size);
  for (const ReadPosition& p : saved) {
    for (const PartitionPosition& pp : p.partitions) {
      const PartitionPosition* have = out.partition_position(pp.partition);
      if (have == nullptr || std::make_pair(pp.offset, pp.rows) > std::make_pair(have->offset, have->rows)) {
        out.advance(0, {}, {pp});
      }
    }
  }
  return out;
}

}  // namespace

ReadPosition position_for_rank(const std::vector<ReadPosition>& saved, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw UsageError(fmt::format("position_for_rank: rank {} is not in [0, {})", rank, world_size));
  }
  check_consistent(saved);
  if (saved.front().kind == PositionKind::kStream) return stream_for_rank(saved, rank, world_size);
  // Same world size: each rank's own position (its files' prefixes, or its ranges, are exact).
  if (static_cast<int>(saved.size()) == world_size) return saved[static_cast<size_t>(rank)];
  return saved.front().kind == PositionKind::kRowRanges ? row_ranges_for_rank(saved, rank, world_size)
                                                        : file_prefixes_for_rank(saved, rank, world_size);
}

}  // namespace tzrec::data
