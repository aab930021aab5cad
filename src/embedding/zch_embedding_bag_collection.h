// ZchEmbeddingBagCollection: an EmbeddingBagCollection over zero-collision hashed tables
// (docs/tzrec-compatibility.md §5.12), TorchRec's ManagedCollisionEmbeddingBagCollection as
// TorchEasyRec builds it for features with `zch`.
//
// Every table has a ZchModule (zch_module.h) with zch_size = the table's rows. The input
// KeyedJaggedTensor carries raw 64-bit ids; forward():
//   1. per table, the raw ids of all bags on it (bag order) are concatenated and passed through
//      its ZchModule: profiled (training mode only: is_training()) then remapped to rows;
//   2. the rows that the module's evictions freed since the last forward (ZchModule::evict()) are
//      reset before they are read: the embedding rows are drawn again from the table's
//      initializer (init_table_weight) — with torch's default CPU generator seeded from the table
//      name and the module's step, its state put back afterwards, so that a run resumed from a
//      checkpoint draws the same values as the uninterrupted run — and, in fused mode, their optimizer state goes back to its
//      initial value (momentum1: initial_accumulator_value for the adagrads, else 0; momentum2: 0;
//      the per-table step counters are left alone);
//   3. the remapped ids are looked up by the inner EmbeddingBagCollection (plain or fused).
// Evaluation (eval mode) only remaps: no step is counted, nothing is recorded or evicted.
//
// State-dict layout (TorchRec's):
//   _embedding_module.embedding_bags.<table>.weight
//   _managed_collision_collection._managed_collision_modules.<table>.<buffer>
// with the buffers of ZchModule::state(); they are the modules' own storage, so restoring them in
// place (checkpoints, exports) restores the remapping; call reload_zch_state() afterwards so the
// step count and history follow the restored buffers.
//
// Across ranks (zch_sharding.h): the inner collection's tables are sharded row-wise and
// attach_sharded() gives each rank's modules the slots of its row block; every forward then sends
// each raw id to the rank that owns it and gets its row back (three exchanges for all tables), and each
// rank resets the rows its own evictions freed in its own shard. A collection built under
// DeferTableAllocation and never attached (config checks, export naming) has its names and
// buffers, but its forward() throws NotSupportedError.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_bag_collection.h"
#include "embedding/embedding_config.h"
#include "embedding/id_exchange.h"
#include "embedding/remapped_bags.h"
#include "embedding/row_block_buffer.h"
#include "embedding/zch_module.h"
#include "embedding/zch_sharding.h"
#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::embedding {

struct ZchTableConfig {
  TableConfig table;
  ZchOptions zch;  // zch.zch_size must equal table.num_embeddings
};

class ZchEmbeddingBagCollectionImpl : public torch::nn::Module {
 public:
  // ConfigError as EmbeddingBagCollection, and for a zch_size different from the table's rows.
  // tables_module: as EmbeddingBagCollection's ("embeddings" for the item-level collections of
  // sequence groups: TorchRec's ManagedCollisionEmbeddingCollection,
  // "_embedding_module.embeddings.<table>.weight").
  ZchEmbeddingBagCollectionImpl(std::vector<ZchTableConfig> tables, std::vector<BagConfig> bags,
                                const std::string& tables_module = "embedding_bags");

  // Output as EmbeddingBagCollection::forward (keys = bag keys in bag order). Raw ids may be any
  // int64 value.
  sparse::KeyedTensor forward(const sparse::KeyedJaggedTensor& kjt);

  // Step 1 alone: the remapped ids, one key per bag (the bag's key()), in bag order. `training`
  // profiles. Does not reset rows.
  sparse::KeyedJaggedTensor remap(const sparse::KeyedJaggedTensor& kjt, bool training);
  // Step 2 alone: collects every module's evicted rows and resets them; returns them per table
  // (tables without an eviction since the last call are absent).
  std::map<std::string, torch::Tensor> evict_and_reset();
  // Resets `rows` [K] int64 of `table` as step 2 does.
  void reset_rows(const std::string& table, const torch::Tensor& rows);

  // The inner collection (tables, fused optimizer).
  EmbeddingBagCollection embedding_module() const { return embedding_module_; }
  const std::vector<ZchTableConfig>& zch_table_configs() const { return tables_; }
  const std::vector<BagConfig>& bag_configs() const { return bags_->bags(); }
  // ConfigError for an unknown table.
  ZchModule& zch_module(const std::string& table);
  // Delta embedding dumps: from now on every table's module records the raw ids training looks up
  // and the ids its evictions admit and evict (ZchModule::track_touched_ids; sharded: the ids this
  // rank owns).
  void track_touched_ids();
  // Table t's ids recorded since the previous call, [K] int64 ascending, and the rows served for
  // them now, float32 [K, dim]: a held id's own row, the fallback row for the others.
  std::pair<torch::Tensor, torch::Tensor> take_touched(size_t t);
  // After the buffers were overwritten in place (checkpoint restore): ZchModule::load_state from
  // its own buffers (re-sorts, clears the history, continues the step count).
  void reload_zch_state();

  // Row-wise sharding across ranks: boundaries[t] holds the row blocks of table t in rank order
  // (world_size + 1 values, the sharding plan's row_wise shards). This rank's module of each table
  // is rebuilt, as new, with the slots of its block [b[rank], b[rank + 1]) and the blocks as its
  // output segments (restore checkpoints afterwards). ConfigError naming the zch field for a block
  // of fewer than 2 rows.
  void attach_sharded(std::shared_ptr<IdExchange> exchange, const std::vector<std::vector<int64_t>>& boundaries);

  // The per-place buffers of every table's module (is_zch_place_buffer), the part sharded by rows,
  // named "_managed_collision_collection._managed_collision_modules.<table>.<buffer>".
  std::vector<RowBlockBuffer> place_buffers() const;
  // The names place_buffers() gives for table t, by buffer name.
  std::map<std::string, std::string> place_buffer_names(size_t t) const;

  // Sharded restore of table t's module: its state from `saved`, the whole table's place buffers
  // by buffer name (saved on any world size), its step count from its own _current_iter_tensor
  // (restored before). Returns where rows move (zch_sharding.h); the caller moves the weights and
  // optimizer state.
  ZchShardState load_sharded_state(size_t t, const std::map<std::string, torch::Tensor>& saved);

 private:
  // Registers the modules' state() under "_managed_collision_collection._managed_collision_modules".
  void register_module_buffers();
  // Rows of every table's ids (RemappedBags::remap's rows_of_tables), routed when sharded.
  std::vector<torch::Tensor> rows_of(const std::vector<torch::Tensor>& ids, bool training);
  std::vector<ZchTableConfig> tables_;
  std::unique_ptr<RemappedBags> bags_;  // as given
  std::vector<std::shared_ptr<ZchModule>> modules_;  // per table
  EmbeddingBagCollection embedding_module_{nullptr};
  std::shared_ptr<torch::nn::Module> mc_collection_;
  std::shared_ptr<IdExchange> exchange_;  // set when sharded across ranks
  std::vector<bool> history_sized_;       // per table, sharded: reserve_history called
};
TORCH_MODULE(ZchEmbeddingBagCollection);

}  // namespace tzrec::embedding
