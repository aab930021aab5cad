// Checkpoints of remapping tables sharded across ranks: zero-collision hashed tables (row-wise,
// docs/tzrec-compatibility.md §5.12, embedding/zch_sharding.h) and dynamic tables (§5.13,
// embedding/dynamic_embedding_bag_collection.h).
//
// Every rank writes its block of the per-row state (zch: the place buffers; dynamic: row_keys,
// row_scores, row_live and the admission counter) as row blocks of the whole table's buffers,
// under their state-dict names; the scalars (_output_segments_tensor, _current_iter_tensor, a
// dynamic table's step) are the same on every rank and go with the dense tensors. A restore on any
// world size reads the whole tables' state, rebuilds this rank's part from it and moves the
// embedding rows (and sparse optimizer state) of the ids that now live in another row; the
// weights of the dynamic tables come only from those moves (their row count depends on the world
// size).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "checkpoint/checkpoint.h"
#include "checkpoint/sharded_checkpoint.h"
#include "dist/process_group.h"
#include "embedding/dynamic_checkpoint_layout.h"
#include "embedding/embedding_group_set.h"
#include "train/sharded_tables.h"

namespace tzrec::train {

// The rows in use of every dynamic table when a checkpoint is written: checkpoints hold rows
// [0, U_r) of each rank's block and its two reserved rows (embedding/dynamic_checkpoint_layout.h).
struct DynamicRowsInUse {
  struct Table {
    std::map<std::string, std::string> names;  // "row_keys", ..., "rows_in_use", "capacity" → name below the model
    embedding::DynamicSavedLayout layout;      // every rank's rows in use U_r, capacity R, offsets
  };
  std::map<std::string, Table> tables;  // by prefixed table name (EmbeddingGroupSet::tables())
  int rank = 0;                         // this process's
};

// This process's rows in use (pg null or of one rank), or every rank's (collective: one
// all-gather over `pg`).
DynamicRowsInUse dynamic_rows_in_use(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                                     dist::ProcessGroup* pg);

// Adds the layout tensors (rows_in_use [ranks], capacity [1]) of every dynamic table to a
// checkpoint's whole tensors.
void add_dynamic_layout_tensors(const DynamicRowsInUse& rows, std::map<std::string, torch::Tensor>& model_tensors);

// One process: cuts every dynamic table's weight and sparse optimizer state ("sparse.<table>.*")
// to its rows in use and two reserved rows, and its row_keys / row_scores / row_live to the rows
// in use.
void cut_dynamic_tables_to_rows_in_use(const embedding::EmbeddingGroupSet& group, const DynamicRowsInUse& rows,
                                       std::map<std::string, torch::Tensor>& model_tensors,
                                       std::map<std::string, torch::Tensor>& optimizer);

// State-dict names (below `model`) of the row-sharded state buffers of every remapping collection.
std::set<std::string> remapped_state_buffer_names(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group);

// This rank's blocks of those buffers (dynamic tables: synced from their index first; with
// `rows`, their row_keys / row_scores / row_live cut to the rows in use).
std::vector<checkpointing::TensorBlock> remapped_state_blocks(torch::nn::Module& model,
                                                               const embedding::EmbeddingGroupSet& group,
                                                               const DynamicRowsInUse* rows = nullptr);

// The prefixed names (EmbeddingGroupSet::tables()) of the dynamic tables: their weights and
// optimizer state are restored by restore_remapped_shards, not block by block.
std::set<std::string> dynamic_table_names(const embedding::EmbeddingGroupSet& group);

// Rebuilds this rank's remapping state from the checkpoint of `index` (any world size; the
// scalars restored before with the dense tensors) and moves the rows of ids whose row changed:
// weights always, sparse optimizer state when `move_optimizer_state`. A checkpoint without a
// table's state → CheckpointError naming it when `required`, else that table keeps its fresh state
// (fine-tuning). Dropped ids (a rank too small for the ids it now owns) are logged.
void restore_remapped_shards(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                             const ShardedTables& sharded, const std::string& ckpt_dir,
                             const checkpointing::CheckpointTensorIndex& index, bool move_optimizer_state,
                             bool required);

// One process, before the generic restore: the dynamic tables of `checkpoint` (any layout:
// another world size or capacity, rows in use only) are rewritten into this model's — their state rebuilt
// in the model's tables as restore_remapped_shards does on one rank, the live rows of their
// weights and of their "sparse.<table>.<slot>" optimizer state moved to the rows they now have,
// the other rows as the model has them (`sparse_state`: the live fused optimizer state of the
// model without the "sparse." prefix, to restore; empty when it has none or is not restored). The
// moves are made in the model's own tensors, which then stand in `checkpoint` for the saved ones;
// the checkpoint's rows_in_use / capacity tensors are read and removed
// (embedding/dynamic_checkpoint_layout.h).
void relayout_dynamic_checkpoint(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                                 checkpointing::CheckpointData& checkpoint,
                                 const std::map<std::string, torch::Tensor>& sparse_state);

// The tensors of an export package (`tensors`: named tensors of `model`, a one-process model or
// one of its towers) with every dynamic table cut to its live rows: the weight [R + 2, dim] becomes
// [L + 2, dim] — the L rows row_live marks, in row order, then the two reserved rows — and
// row_keys / row_scores / row_live [R] become [L] (row_live all 1); the admission counter and the
// other tensors stay. The result is the layout of a one-process table of capacity L, which a
// model of any capacity reads back through relayout_dynamic_checkpoint. Tables whose weight or
// state is not among `tensors` are left as they are.
std::vector<std::pair<std::string, torch::Tensor>> live_rows_of_dynamic_tables(
    torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
    const std::vector<std::pair<std::string, torch::Tensor>>& tensors);

}  // namespace tzrec::train
