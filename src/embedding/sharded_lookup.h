// How an EmbeddingBagCollection hands its pooled lookups to tables sharded across processes,
// without embedding/ knowing about process groups (dist/ implements ShardedLookup).
//
// A distributed job builds its model under a DeferTableAllocation guard: the collections then
// allocate no table at all (not even transiently: a rank may hold a tiny part of tables that do not
// fit one machine) and register no table parameter. The job then attaches a ShardedLookup built
// from table_configs() / bag_configs(), which owns this rank's shards.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "embedding/fused_embedding_bags.h"

namespace tzrec::embedding {

class ShardedLookup {
 public:
  virtual ~ShardedLookup() = default;
  // inputs: this rank's batch, one per bag in bag order (FusedFeatureInput). Returns [B, sum of
  // the bags' dims] like FusedEmbeddingBags::forward.
  virtual torch::Tensor forward(const std::vector<FusedFeatureInput>& inputs) = 0;
  // Overwrites rows `rows` [K] int64 (row numbers of the whole table) of table `table` (its index in
  // the collection's table_configs()) with `values` [K, dim] and puts their sparse optimizer state
  // back to its initial value (row_reset.h). The rows must lie whole in this rank's shards (a
  // zero-collision hashed table's rows in its rank's row block).
  virtual void reset_rows(size_t table, const torch::Tensor& rows, const torch::Tensor& values) = 0;

  // Delta embedding dumps (FusedEmbeddingBags::track_touched_rows on this rank's shards): from now
  // on training lookups mark the rows they read in the shards that serve them. A table split by
  // columns → tzrec::ConfigError naming it (a row's values would lie on several ranks).
  virtual void track_touched_rows() = 0;
  // The rows of table `table` that this rank's shards served since the previous call, as row
  // numbers of the whole table, ascending.
  virtual torch::Tensor take_touched_rows(size_t table) = 0;
  // Rows `rows` [K] int64 (numbers of the whole table, in this rank's shards) of table `table` as
  // float32 [K, dim].
  virtual torch::Tensor read_rows(size_t table, const torch::Tensor& rows) = 0;
};

// While one is alive on this thread, new EmbeddingBagCollections defer their tables (see above).
// `world_size`: the ranks the tables will be sharded over (dynamic tables size their rows per
// rank: dynamic_embedding_bag_collection.h); 1 when the model is built for names or checks only.
class DeferTableAllocation {
 public:
  explicit DeferTableAllocation(int world_size = 1);
  ~DeferTableAllocation();
  DeferTableAllocation(const DeferTableAllocation&) = delete;
  DeferTableAllocation& operator=(const DeferTableAllocation&) = delete;
  static bool active();
  // The innermost guard's world size; 1 without one.
  static int world_size();

 private:
  bool previous_;
  int previous_world_size_;
};

}  // namespace tzrec::embedding
