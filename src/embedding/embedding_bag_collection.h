// EmbeddingBagCollection: a set of tables and pooled lookups (bags) into them, TorchRec-style.
//
// Two execution modes:
//   - plain (default): torch::embedding_bag per bag with sparse weight gradients, for inference
//     and for generic autograd use;
//   - fused (enable_fused_optimizer, what training uses): one table-batched operator for all bags
//     whose backward applies the sparse optimizer to the touched rows in place and leaves the
//     weight gradients undefined (embedding/fused_embedding_bags.h), like TorchRec's fused TBE;
//   - sharded (built under DeferTableAllocation, then attach_sharded): no local table; lookups go
//     to a ShardedLookup over the tables' shards on all ranks (embedding/sharded_lookup.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_config.h"
#include "embedding/fused_embedding_bags.h"
#include "embedding/sharded_lookup.h"
#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::embedding {

class EmbeddingBagCollectionImpl : public torch::nn::Module {
 public:
  // Throws tzrec::ConfigError for a bag naming an unknown table, duplicate table names or bag keys,
  // bad pooling, non-positive sizes or an unknown init_fn.
  // tables_module: the name the tables are registered under ("embeddings" for the item-level
  // collections of sequence_embedding_group.h, TorchRec's EmbeddingCollection layout).
  EmbeddingBagCollectionImpl(std::vector<TableConfig> tables, std::vector<BagConfig> bags,
                             const std::string& tables_module = "embedding_bags");

  // kjt must contain every bag's feature (extra keys ignored). Returns a KeyedTensor with keys =
  // bag keys in bag order, each block [B, table dim]: sum or mean of the (weighted) rows of the
  // row's ids; an empty bag gives zeros. Plain mode: weight gradients are sparse
  // (torch::embedding_bag with sparse=true), never a dense [num_embeddings, dim] gradient. Fused
  // mode: no weight gradient, the optimizer runs in backward.
  // Ids outside [0, num_embeddings) → tzrec::DataError naming the feature and table.
  sparse::KeyedTensor forward(const sparse::KeyedJaggedTensor& kjt);

  // Tables in config order; weight is the registered parameter ("embedding_bags.<table>.weight").
  // Empty for a collection whose tables are deferred (sharded).
  std::vector<EmbeddingTable> tables();
  // The weight of table t (index in table_configs()), without building tables(). TORCH_CHECK: the
  // tables are not deferred.
  torch::Tensor table_weight(size_t t);
  const std::vector<TableConfig>& table_configs() const { return table_configs_; }
  const std::vector<BagConfig>& bag_configs() const { return bag_configs_; }
  // Output width of every bag, in bag order.
  std::vector<int64_t> bag_dims() const;

  // Switches to fused mode with this sparse optimizer (its gradient clipping included) over all
  // tables; frozen tables are not updated. Returns the fused operator, owned by this module, for
  // the learning rate and the optimizer state. Calling it twice is a TORCH_CHECK failure.
  FusedEmbeddingBags& enable_fused_optimizer(const FusedOptimizerOptions& options);
  // nullptr in plain mode.
  FusedEmbeddingBags* fused() { return fused_.get(); }

  // Whether the collection was built under DeferTableAllocation (no local tables).
  bool tables_deferred() const { return deferred_; }
  // Routes every lookup to `lookup` (only for a deferred collection; once).
  void attach_sharded(std::shared_ptr<ShardedLookup> lookup);
  ShardedLookup* sharded() { return sharded_.get(); }

  // Delta embedding dumps (train/delta_embedding_dump.h): training lookups from now on mark the
  // rows they read (fused or sharded mode; sharded: the rows this rank's shards serve).
  // NotSupportedError in plain mode.
  void track_touched_rows();
  // Rows of table t (index in table_configs()) marked since the previous call: row numbers of the
  // whole table, ascending.
  torch::Tensor take_touched_rows(size_t t);
  // Rows `rows` [K] int64 of table t (in this rank's shards when sharded) as float32 [K, dim].
  torch::Tensor read_rows(size_t t, const torch::Tensor& rows);

 private:
  sparse::KeyedTensor forward_fused(const sparse::KeyedJaggedTensor& kjt);
  std::vector<FusedFeatureInput> fused_inputs(const sparse::KeyedJaggedTensor& kjt) const;

  std::vector<TableConfig> table_configs_;
  std::vector<BagConfig> bag_configs_;
  std::vector<int64_t> bag_table_index_;  // bag → index into table_configs_
  torch::nn::ModuleDict embedding_bags_{nullptr};  // "embedding_bags" → "<table>" → "weight"
  std::vector<torch::Tensor> weights_;             // [num_embeddings, dim] per table
  std::unique_ptr<FusedEmbeddingBags> fused_;
  bool deferred_ = false;
  std::shared_ptr<ShardedLookup> sharded_;
};
TORCH_MODULE(EmbeddingBagCollection);

}  // namespace tzrec::embedding
