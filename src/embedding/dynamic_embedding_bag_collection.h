// DynamicEmbeddingBagCollection: an EmbeddingBagCollection over dynamic embedding tables
// (docs/tzrec-compatibility.md §5.13), TorchEasyRec's `dynamicemb { }` tables: raw 64-bit ids
// mapped to rows by a DynamicTable (dynamic_table.h: scored, bucketed hash table with admission
// and eviction) instead of a fixed hash.
//
// Per table, the weight has R + 2 rows, R = the DynamicTable's max_capacity(): rows [0, R) are
// handed to ids by the table; row R holds the admission initializer's value (ids below the
// admission threshold, or rejected by a full table, in training) and row R + 1 the evaluation
// initializer's value (ids not in the table in eval mode). Both are put back (value and optimizer
// state) at every training forward, so no update to them survives: dynamicemb stores nothing for
// such ids. The weight (TableConfig::rows_on_demand), its optimizer state and the state buffers
// are demand-paged (demand_paged_tensor.h): a row takes memory once an id takes it, and rows no
// id held read 0.
//
// forward() in training mode: per table, the raw ids of all its bags (bag order, concatenated) go
// through DynamicTable::find_or_insert with the collection's step (counted per training forward,
// from 1) and the wall-clock time in ms; the rows given to new ids (evicted ids' rows included)
// are drawn again from the table's initializer — with torch's CPU generator seeded from the table
// name and the step (row_reset.h), so a resumed run draws what the uninterrupted run drew — and
// their fused optimizer state is reset; then the inner EmbeddingBagCollection looks the rows up.
// Eval mode only finds: nothing is inserted, counted or scored.
//
// State-dict layout (this engine's; TorchEasyRec's dynamicemb checkpoints are the library's own
// files):
//   _embedding_module.embedding_bags.<table>.weight  [R + 2, dim]
//   dynamic_tables.<table>.step                  [1] int64: training forwards so far
//   dynamic_tables.<table>.row_keys              [R] int64: the id owning each row
//   dynamic_tables.<table>.row_scores            [R] int64: its score (STEP: the step, TIMESTAMP: ms,
//                                                           LFU: the count, NO_EVICTION: 0)
//   dynamic_tables.<table>.row_live              [R] uint8: 1 for rows owned by an id
//   dynamic_tables.<table>.admission_keys        [C] int64 (C: the admission counter's capacity;
//   dynamic_tables.<table>.admission_counts      [C] int64  count 0 = empty; C = 0 without admission)
// The buffers are written from the tables by sync_state() (call it before reading them: checkpoints,
// exports) and read back by reload_state() (after they were overwritten: restores).
//
// Across W ranks (a collection built under DeferTableAllocation(W), then attach_sharded): each
// rank's DynamicTable has the per-rank options (DynamicTableOptions::per_rank: R = its
// max_capacity()) and owns the ids id_owner_rank gives it; the weight has W·(R + 2) rows, rank r's
// block [r·(R + 2), (r + 1)·(R + 2)) holding R rows for its ids and then its two reserved rows
// (the sharding plan keeps the table row_wise, so the block is the rank's shard). Every forward
// sends each raw id to its owner and gets its row back (three exchanges for all tables); the owner does
// what one process does on its own table, in its own block. The state buffers are the rank's
// blocks of the whole table's (row_keys & co. [R] at r·R of [W·R], the counter [C] at r·C of
// [W·C]; `step` the same everywhere). load_sharded_state() rebuilds a rank's table from a
// checkpoint of any world size. A collection built under DeferTableAllocation and never attached
// throws NotSupportedError from forward().
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/dynamic_table.h"
#include "embedding/embedding_bag_collection.h"
#include "embedding/embedding_config.h"
#include "embedding/id_exchange.h"
#include "embedding/remapped_bags.h"
#include "embedding/row_block_buffer.h"
#include "embedding/touched_ids.h"
#include "sparse/keyed_jagged_tensor.h"
#include "sparse/keyed_tensor.h"

namespace tzrec::embedding {

struct DynamicEmbTableConfig {
  TableConfig table;  // num_embeddings is replaced by the table's R + 2 rows
  DynamicEmbOptions dynamic;
};

class DynamicEmbeddingBagCollectionImpl : public torch::nn::Module {
 public:
  // ConfigError as EmbeddingBagCollection and DynamicTable (validate_dynamic_table_options).
  // tables_module: as EmbeddingBagCollection's ("embeddings" for the item-level collections of
  // sequence groups).
  DynamicEmbeddingBagCollectionImpl(std::vector<DynamicEmbTableConfig> tables, std::vector<BagConfig> bags,
                                    const std::string& tables_module = "embedding_bags");

  // Output as EmbeddingBagCollection::forward (keys = bag keys in bag order). Raw ids may be any
  // int64 value.
  sparse::KeyedTensor forward(const sparse::KeyedJaggedTensor& kjt);

  // The row ids the inner collection looks up, one key per bag (the bag's key()), in bag order;
  // `training` inserts, counts and scores (and resets the rows given to new ids).
  sparse::KeyedJaggedTensor remap(const sparse::KeyedJaggedTensor& kjt, bool training);

  EmbeddingBagCollection embedding_module() const { return embedding_module_; }
  const std::vector<DynamicEmbTableConfig>& dynamic_table_configs() const { return tables_; }
  const std::vector<BagConfig>& bag_configs() const { return bags_->bags(); }
  // ConfigError for an unknown table.
  DynamicTable& dynamic_table(const std::string& table);
  // Training forwards so far.
  int64_t step() const;

  // Tables → buffers (see above).
  void sync_state();
  // Buffers → tables (DynamicTable::load with kKeep; DataError naming the table for bad state).
  void reload_state();
  // The buffers back to zeros and their memory to the OS (release_pages), after what sync_state()
  // wrote was read (a checkpoint written): between checkpoints they would hold a stale copy of
  // the index (17 bytes per row in use).
  void release_state_buffers();

  // Across ranks: this rank's block of every table (see above) and the id exchange; resets the
  // block's reserved rows.
  void attach_sharded(std::shared_ptr<IdExchange> exchange);
  // The state buffers sharded by rows, named "dynamic_tables.<table>.<buffer>" (call sync_state()
  // first).
  std::vector<RowBlockBuffer> state_buffers() const;
  // Names of table t's buffers below this collection, by buffer name ("row_keys", ...).
  std::map<std::string, std::string> state_buffer_names(size_t t) const;
  // Names below this collection of table t's two checkpoint layout tensors, "rows_in_use" and
  // "capacity" (dynamic_checkpoint_layout.h), by tensor name; next to its buffers.
  std::map<std::string, std::string> layout_tensor_names(size_t t) const;

  // Where a restored table's rows move: saved weight rows → this rank's rows.
  struct ShardRestore {
    torch::Tensor moved_from;  // [M] int64, rows of the saved weight
    torch::Tensor moved_to;    // [M] int64, rows of the weight now
    int64_t dropped = 0;       // entries that did not fit
    int64_t counter_dropped = 0;
  };
  // Rebuilds this rank's table t from `saved` — the whole table's row_keys, row_scores, row_live
  // and admission_keys / admission_counts, written on any world size, and its rows_in_use /
  // capacity when the checkpoint has them (dynamic_checkpoint_layout.h) — whose weight had
  // `saved_weight_rows` rows: the live entries and counter entries this rank owns, keeping their
  // rows when the saved layout is this one (same world size and capacity), else numbered 0, 1, ...
  // (DynamicTable::load). The buffers follow (sync_state). DataError / CheckpointError naming the
  // table for an inconsistent state.
  ShardRestore load_sharded_state(size_t t, const std::map<std::string, torch::Tensor>& saved, int64_t saved_weight_rows);

  // Rows of table t in use on this rank: [0, rows_in_use(t)) holds every row an id has
  // (DynamicTable::num_rows()); what checkpoints save (dynamic_checkpoint_layout.h).
  int64_t rows_in_use(size_t t) const { return dynamic_[t]->num_rows(); }
  // Delta embedding dumps: from now on training forwards record the raw ids they look up, per
  // table (touched_ids.h; sharded: the ids this rank owns).
  void track_touched_ids();
  // Table t's ids recorded since the previous call that the table holds now, [K] int64 ascending,
  // and their rows, float32 [K, dim]; *missing gets how many recorded ids it does not hold (not
  // admitted, or evicted since).
  std::pair<torch::Tensor, torch::Tensor> take_touched(size_t t, int64_t* missing);

 private:
  // Rows of table t's ids on this rank (reserved rows for ids without one), training as remap().
  torch::Tensor local_rows(size_t t, const torch::Tensor& ids, bool training, int64_t time_ms);
  // Puts rows R and R + 1 of table t back to their constants (and their optimizer state).
  void reset_reserved_rows(size_t t);

  std::vector<DynamicEmbTableConfig> tables_;
  std::unique_ptr<RemappedBags> bags_;
  std::vector<std::unique_ptr<DynamicTable>> dynamic_;
  struct Buffers {
    torch::Tensor step, row_keys, row_scores, row_live, admission_keys, admission_counts;
    // Length of the prefixes that may hold non-zero values: row_* [0, rows_written), admission_*
    // [0, counter_written) (after a restore wrote them: up to their last non-zero entry).
    int64_t rows_written = 0;
    int64_t counter_written = 0;
  };
  std::vector<Buffers> buffers_;
  // Per table: its reserved rows R and R + 1 on this rank and their constants, [2] and [2, dim]
  // (built again when the rank's block moves).
  struct ReservedRows {
    int64_t first = -1;
    torch::Tensor rows, values;
  };
  std::vector<ReservedRows> reserved_;
  EmbeddingBagCollection embedding_module_{nullptr};
  DynamicTableLookup scratch_;
  std::vector<TouchedIds> touched_;  // per table once track_touched_ids() ran
  int world_size_ = 1;                    // ranks the tables are spread over
  int rank_ = 0;
  std::shared_ptr<IdExchange> exchange_;  // set when sharded across ranks
  // This rank's first weight row of table t: rank · (R + 2).
  int64_t block_offset(size_t t) const;
  // "dynamic_tables.<table t>.<tensor>" for each of `tensors`, by tensor.
  std::map<std::string, std::string> state_names(size_t t, std::initializer_list<const char*> tensors) const;
};
TORCH_MODULE(DynamicEmbeddingBagCollection);

}  // namespace tzrec::embedding
