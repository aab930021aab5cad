// Read positions of a multi-rank run (no torch). Every rank of a training job reads its own share
// of the input (row ranges for Parquet, files round-robin for CSV) and records its own
// ReadPosition; a checkpoint stores all of them (index = rank). position_for_rank turns them
// into the position one rank of a resumed run starts from — on the same or on another world size:
//
//   - same world size (files and row ranges): rank r gets exactly the position rank r saved, so every rank continues
//     with its next batch, as if the run had not stopped;
//   - another world size (1 → 2, 2 → 4, 4 → 1, ...):
//       Parquet (kRowRanges): the rows no rank has consumed yet (each saved worker's ranges minus
//       its consumed prefix, in rank then worker order) are cut into world_size contiguous chunks
//       of sizes differing by at most one row; rank r reads chunk r (spread over its workers by
//       ReadPosition::for_workers);
//       CSV (kFilePrefix): each file keeps its consumed prefix (only the rank that read a file
//       advanced it) and the files are dealt round-robin over the new ranks' workers;
//     every remaining row is read exactly once by the new ranks; batch boundaries and order
//     differ from an uninterrupted run.
//   - Kafka streams (kStream), any world size: every rank gets every partition's furthest saved
//     position (partitions are global; the readers take their partitions from it), so a resumed
//     rank's own saved position also lists the partitions other ranks read, at the offsets the
//     run resumed from — harmless, since the furthest position of a partition wins.
// A null entry (a rank saved at the end of an epoch) must be null on every rank.
#pragma once

#include <vector>

#include "data/read_position.h"

namespace tzrec::data {

// `saved[i]` is the position rank i of the saved run wrote (saved.size() = that run's world
// size). Throws CheckpointError when the positions do not belong together (different kinds or
// input files, or a Parquet position whose world_size does not match
// saved.size()), UsageError for rank outside [0, world_size).
ReadPosition position_for_rank(const std::vector<ReadPosition>& saved, int rank, int world_size);

}  // namespace tzrec::data
