// Checkpoints of zero-collision hashed tables sharded row-wise across ranks
// (docs/tzrec-compatibility.md §5.12, embedding/zch_sharding.h).
//
// Every rank writes the per-place buffers of its modules as row blocks of the whole table's
// buffers (TorchRec's sharded layout: the blocks of all ranks concatenated in row order), under
// their state-dict names; the other buffers (_output_segments_tensor, _current_iter_tensor) are the
// same on every rank and go with the dense tensors. A restore on any world size reads the whole
// tables' place buffers, rebuilds this rank's modules from them and moves the embedding rows (and
// sparse optimizer state) of the ids that now live in another row.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "checkpoint/sharded_checkpoint.h"
#include "embedding/embedding_group_set.h"
#include "train/sharded_tables.h"

namespace tzrec::train {

// State-dict names (below `model`) of the place buffers of every zero-collision hashed collection.
std::set<std::string> zch_place_buffer_names(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group);

// This rank's place buffers as checkpoint blocks.
std::vector<checkpointing::TensorBlock> zch_place_blocks(torch::nn::Module& model,
                                                          const embedding::EmbeddingGroupSet& group);

// Rebuilds this rank's modules from the checkpoint of `index` (any world size; their step counts
// from the dense _current_iter_tensor, restored before) and moves the rows of ids whose row
// changed: weights always, sparse optimizer state when `move_optimizer_state`. A checkpoint
// without a table's place buffers → CheckpointError naming it when `required`, else that table
// keeps its fresh state (fine-tuning). Dropped ids (a block too small for the ids it now owns) are
// logged.
void restore_zch_shards(torch::nn::Module& model, const embedding::EmbeddingGroupSet& group,
                        const ShardedTables& sharded, const std::string& ckpt_dir,
                        const checkpointing::CheckpointTensorIndex& index, bool move_optimizer_state, bool required);

}  // namespace tzrec::train
