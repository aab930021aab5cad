// ShardedEmbeddingBags: the fused embedding-bag operator of embedding/fused_embedding_bags.h with
// its tables sharded across the ranks of a process group by a ShardingPlan (TorchRec's
// ShardedEmbeddingBagCollection on our own kernels).
//
// Every rank calls forward() with its own batch (B_r rows) and gets the same [B_r, total_dim]
// pooled output the unsharded operator would give for those rows. One step:
//   1. batch sizes of all ranks (one all_reduce);
//   2. input distribution: each feature's lengths, then ids (and per-id weights when any rank has
//      them), go to the ranks holding shards of its table (all_to_all): table_wise / column_wise
//      shards get all ids, row_wise / table_row_wise shards the ids of their row block (rebased;
//      mean pooling becomes per-id weights 1/L so that partial sums add up), data_parallel
//      tables every rank's ids;
//   3. local lookup: one FusedEmbeddingBags over this rank's shards and the batches of all ranks
//      ([sum_r B_r] rows);
//   4. output distribution: pooled blocks go back to the ranks whose samples they are (all_to_all);
//      column blocks are placed, row-block partial sums added; a data_parallel table's rows come
//      from the local replica.
// Backward is the exact reverse: the output gradient of each rank's samples goes to every shard
// that produced them (all_to_all; data_parallel: all_gather, so every replica applies the same
// update), then the fused optimizer updates the local shards in place. The gradient a shard
// receives is the sum over ranks of the gradients of their own losses (TorchRec's semantics: the
// embedding gradient is not averaged over ranks).
//
// Loss scaling (FP16 training): with a gradient scale set, the backward first agrees across the
// ranks (one all_reduce max) whether any rank's output gradient holds inf / nan. If so, every
// rank skips the exchange and all of its shard updates for that backward and
// last_backward_found_inf() is true on every rank; otherwise the local operator unscales the
// gradient as FusedEmbeddingBags does.
//
// Equivalence with the unsharded operator on the concatenated batch of all ranks (rank order):
// outputs and updates are equal for every sharding type and optimizer, except that row-wise
// optimizer state (rowwise_adagrad, partial_rowwise_*, lamb / lars trust ratios) of a
// column_wise table is computed per column block, as in TorchRec.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "dist/process_group.h"
#include "dist/sharding_plan.h"
#include "embedding/fused_embedding_bags.h"
#include "embedding/sharded_lookup.h"

namespace tzrec::dist {

struct ShardedTableSpec {
  std::string name;
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  bool trainable = true;
  torch::ScalarType dtype = torch::kFloat32;  // float32, or float16 for data_type FP16
  // embedding::TableConfig::rows_on_demand: the shards start as zeros in demand-paged memory.
  bool rows_on_demand = false;
};

class ShardedEmbeddingBags : public embedding::ShardedLookup {
 public:
  // Allocates this rank's shards only (uninitialised: initialise or load them through
  // local_shards()). The plan must cover every table with the spec's shape and have the group's
  // world size; features must name known tables. Otherwise tzrec::ConfigError naming the table.
  ShardedEmbeddingBags(std::vector<ShardedTableSpec> tables,
                       std::vector<embedding::FusedFeatureSpec> features,
                       embedding::FusedOptimizerOptions options, ShardingPlan plan,
                       std::shared_ptr<ProcessGroup> process_group);
  ~ShardedEmbeddingBags() override;

  // inputs: this rank's batch, one per feature in feature order (see FusedFeatureInput). Ids
  // outside a table → tzrec::DataError naming the feature and table (checked before any exchange,
  // so the other ranks then fail in the next collective naming this rank).
  torch::Tensor forward(const std::vector<embedding::FusedFeatureInput>& inputs) override;
  // ShardedLookup::reset_rows on the local shards (row_wise / table_wise: whole rows).
  void reset_rows(size_t table, const torch::Tensor& rows, const torch::Tensor& values) override;
  // ShardedLookup's touched-row tracking on the local shards: a row_wise shard's rows are rebased
  // onto the whole table; a data_parallel replica marks the ids of every rank's batch (it serves
  // them all).
  void track_touched_rows() override;
  torch::Tensor take_touched_rows(size_t table) override;
  torch::Tensor read_rows(size_t table, const torch::Tensor& rows) override;

  struct LocalShard {
    std::string table;
    int shard_index = 0;   // position in the plan's TableSharding::shards
    Shard shard;           // geometry in the full table
    std::string local_name;  // the table's name in local() ("<table>" or "<table>@<shard_index>")
    torch::Tensor weight;  // [shard.rows, shard.cols], live
    bool trainable = true;
  };
  // This rank's shards, in plan order (tables, then shards).
  const std::vector<LocalShard>& local_shards() const;
  // The operator over the local shards (its optimizer state keys are "<local_name>.<slot>").
  embedding::FusedEmbeddingBags& local();

  const ShardingPlan& plan() const;
  int64_t total_dim() const;
  std::vector<int64_t> feature_dims() const;
  void set_lr(double lr);
  double lr() const;
  // The loss scale of the gradients backward receives (FusedEmbeddingBags::set_gradient_scale);
  // set the same value on every rank.
  void set_gradient_scale(std::optional<double> scale);
  // Whether the latest backward was skipped for a non-finite gradient on any rank (the same on
  // every rank). Reset to false by every forward() that records a backward.
  bool last_backward_found_inf() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tzrec::dist
