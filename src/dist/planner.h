// Embedding sharding planner: decides for every embedding table how it is sharded over the ranks
// of a job (TorchRec's EmbeddingShardingPlanner, simplified). Plain structs in, ShardingPlan out;
// the caller converts the config (table shapes, data_type, sparse optimizer, embedding_constraints,
// train_config.global_embedding_constraints) into PlannerTables.
//
// Cost model (dist/planner_cost.h), per table and candidate sharding, G = batch_size × world_size:
//   memory of a shard = rows × cols × bytes_per_value
//                       + rows × (optimizer_bytes_per_row × cols / dim + optimizer_rowwise_bytes_per_row)
//   time of a shard (one step, forward + backward)
//     = lookup: 2 × G × pooling_factor × (share of ids it owns) × cols × bytes_per_value / memory bandwidth
//     + communication with every other rank q, over the intra- or cross-node bandwidth (q and the
//       owner on the same node: rank / local_world_size equal):
//       ids (8 bytes each) and lengths (8 bytes per sample and feature) in, pooled vectors out in
//       forward and their gradients in backward (2 × 4 bytes × cols × num_features × batch_size);
//       a row block sends full-width partial sums, so row_wise pays the output for every block;
//   data_parallel: every rank looks up the global batch (ids and lengths all-gathered) and
//   all-gathers the pooled gradients, so every replica applies the same update.
//
// Placement (deterministic: the same inputs give the same plan on every rank):
//   world_size 1 → every table on rank 0 (table_wise when allowed).
//   Tables go largest first (memory, then estimated cost, then name). A table of at most 1 MiB
//   (weights + optimizer state) that may be data_parallel is replicated when every rank has room.
//   Otherwise every allowed candidate is tried — table_wise on each rank, column_wise in k = 2 ..
//   world_size blocks on the k least-loaded ranks (by time, and by memory), row_wise over all ranks,
//   table_row_wise over each node, data_parallel only when no other allowed type is possible
//   (column_wise of a dim <= 4 table) — and the one that fits the free
//   memory of its ranks (memory_per_rank × (1 − storage_reserve_percent) minus the tables already
//   placed) with the lowest estimated step time wins. The estimated step time is the larger of the
//   busiest rank's time and the average rank time once all tables are placed (the tables still to
//   place counted at their cheapest sharding); ties go to the lower total time, then the less
//   loaded ranks, then the order above.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dist/sharding_plan.h"

namespace tzrec::dist {

// One embedding table as the planner sees it.
struct PlannerTable {
  std::string name;
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  int64_t bytes_per_value = 4;  // 4 fp32, 2 fp16 (data_type FP16)
  // Sparse optimizer state per row held per element (scaled by cols / dim on a column block):
  // adagrad 4 × dim, adam 8 × dim, sgd 0.
  double optimizer_bytes_per_row = 0;
  // Sparse optimizer state per row that every column block keeps whole (rowwise_adagrad 4).
  double optimizer_rowwise_bytes_per_row = 0;
  bool trainable = true;  // frozen tables carry no optimizer state (both fields above are ignored)
  // Mean ids per sample, summed over the features reading the table (measured or estimated).
  double pooling_factor = 1;
  bool pooling_measured = false;  // pooling_factor was measured on data (shown in format_plan)
  int num_features = 1;  // features that read this table (pooled outputs per sample)
  // Allowed sharding types (embedding_constraints ∩ global_embedding_constraints); empty = all.
  std::vector<ShardingType> allowed;
  // Set when the engine, not the config, fixes `allowed` (zch and dynamicemb tables: row_wise
  // only); the plan gives it as the reason instead of comparing step times.
  std::string forced_reason;
};

struct PlannerTopology {
  int world_size = 1;
  int local_world_size = 1;               // ranks per node; must divide world_size
  int64_t batch_size = 1;                 // per rank
  int64_t memory_per_rank_bytes = 0;      // usable memory per rank before the reserve
  double storage_reserve_percent = 0.15;  // fraction in [0, 1) kept free for activations etc.
  double intra_node_bandwidth = 0;        // bytes/s between ranks of one node
  double cross_node_bandwidth = 0;        // bytes/s between nodes
};

// TorchRec's defaults: 600 GiB/s within a node, 12.5 GiB/s across nodes (bytes/s).
inline constexpr double kDefaultIntraNodeBandwidth = 600.0 * 1024 * 1024 * 1024;
inline constexpr double kDefaultCrossNodeBandwidth = 12.5 * 1024 * 1024 * 1024;

// The topology of a CPU job from the environment:
//   INTRA_NODE_BANDWIDTH, CROSS_NODE_BANDWIDTH  bytes per millisecond, as in TorchEasyRec /
//                                               TorchRec (default: the constants above);
//   STORAGE_RESERVE_PERCENT                     fraction in [0, 1) (default 0.15);
//   memory per rank = MemTotal of /proc/meminfo / local_world_size.
// A variable that is not a positive finite number (reserve: not in [0, 1)) → ConfigError naming it.
PlannerTopology topology_from_env(int world_size, int local_world_size, int64_t batch_size);

// The plan for `tables` (plan.tables in the order of `tables`). Errors (ConfigError): bad table or
// topology fields; a table whose allowed sharding types are all impossible; a table that fits
// nowhere (the message names the table, the bytes it needs and the bytes the rank has left).
ShardingPlan plan_sharding(const std::vector<PlannerTable>& tables, const PlannerTopology& topo);

// The plan as an aligned text table for a terminal (`tzrec plan`): one line per table (table,
// rows x dim, sharding, ranks, MB per shard, reason), then one line per rank with its MB, its
// memory budget and its estimated ms per step. `tables` gives the sizes and costs; a plan table
// missing from `tables` is shown without costs.
std::string format_plan(const ShardingPlan& plan, const std::vector<PlannerTable>& tables, const PlannerTopology& topo);

}  // namespace tzrec::dist
