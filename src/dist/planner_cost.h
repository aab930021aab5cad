// The planner's cost model (see dist/planner.h for the formulas): memory and estimated step time of
// one shard of a table under a sharding type. Pure functions of the table, the shard geometry and
// the topology, so `tzrec plan` can cost a saved plan the same way the planner costed its choice.
#pragma once

#include <cstdint>
#include <string>

#include "dist/planner.h"
#include "dist/sharding_plan.h"

namespace tzrec::dist {

// Memory bandwidth of a lookup (TorchRec's DDR_MEM_BW, 51 GiB/s): bytes/s.
inline constexpr double kLookupMemoryBandwidth = 51.0 * 1024 * 1024 * 1024;
inline constexpr double kIdBytes = 8;      // one id in the input all-to-all (int64)
inline constexpr double kLengthBytes = 8;  // one length (per sample and feature)
inline constexpr double kPooledBytes = 4;  // one value of a pooled vector or its gradient (fp32)
// Tables up to this size (weights + optimizer state) are replicated when data_parallel is allowed.
inline constexpr double kDataParallelMaxBytes = 1024.0 * 1024;

struct ShardMemory {
  double weights = 0;    // rows × cols × bytes_per_value
  double optimizer = 0;  // rows × (per-element state × cols / dim + row-wise state); 0 when frozen
  double total() const { return weights + optimizer; }
};

ShardMemory shard_memory(const PlannerTable& table, const Shard& shard);
// Weights + optimizer state of the whole table.
double table_bytes(const PlannerTable& table);

// Estimated seconds per step (forward + backward) that holding `shard` costs its rank. Peers on
// the same node (rank / local_world_size equal; world_size must be a multiple of
// local_world_size) talk at intra_node_bandwidth, the others at cross_node_bandwidth.
double shard_seconds(const PlannerTable& table, ShardingType type, const Shard& shard, const PlannerTopology& topo);

// Usable memory of one rank: memory_per_rank_bytes × (1 − storage_reserve_percent).
double rank_budget_bytes(const PlannerTopology& topo);

// Human-readable sizes for messages: "1.5 GiB", "12.0 MiB", "640 B".
std::string format_bytes(double bytes);

}  // namespace tzrec::dist
